"""Start a private Virtuoso Open Source 7 (Debian's ``virtuoso-opensource``) for
the sparql backend's tests and benchmarks: its own database in a temporary
directory, free ports on loopback, no row or time limits on queries, SPARQL
updates granted on the plain endpoint; stopped (and its files removed) after.

    python -m tests.servers.virtuoso      # start one and print its endpoint
"""

from __future__ import annotations

import re
import shutil
import socket
import subprocess
import tempfile
import time
import urllib.parse
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

SYSTEM_INI = Path("/etc/virtuoso-opensource-7/virtuoso.ini")


@dataclass(frozen=True)
class Virtuoso:
    directory: Path
    sql_port: int
    http_port: int

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.http_port}/sparql"

    @property
    def graph_store_url(self) -> str:
        """The SPARQL 1.1 Graph Store Protocol endpoint (bulk writes)."""
        return f"http://127.0.0.1:{self.http_port}/sparql-graph-crud"

    def isql(self, statement: str) -> str:
        done = subprocess.run(
            ["isql-vt", str(self.sql_port), "dba", "dba", f"exec={statement}"],
            capture_output=True, text=True, timeout=120, check=False)
        if done.returncode != 0 or "*** Error" in done.stdout:
            raise RuntimeError(f"isql {statement!r} failed: {done.stdout}{done.stderr}")
        return done.stdout


def available() -> str | None:
    """Why no Virtuoso can be started here, or None when one can."""
    if shutil.which("virtuoso-t") is None or shutil.which("isql-vt") is None:
        return ("Virtuoso is not installed (Debian: apt-get install virtuoso-opensource; "
                "`make install-dev` does it)")
    if not SYSTEM_INI.exists():
        return f"{SYSTEM_INI} is missing"
    return None


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _ini(directory: Path, sql_port: int, http_port: int, buffers: int) -> str:
    text = SYSTEM_INI.read_text()
    text = text.replace("/var/lib/virtuoso-opensource-7/db", str(directory))
    settings = {
        "ServerPort": None,  # two of them: SQL first, HTTP second
        "ResultSetMaxRows": "0",  # 0: every row (the default cuts at 10,000)
        "MaxQueryExecutionTime": "0",
        "MaxQueryCostEstimationTime": "0",
        "MaxClientConnections": "32",
        "ServerThreads": "32",
        "NumberOfBuffers": str(buffers),
        "MaxDirtyBuffers": str(buffers * 3 // 4),
    }
    ports = iter([f"127.0.0.1:{sql_port}", f"127.0.0.1:{http_port}"])
    out = []
    for line in text.splitlines():
        m = re.match(r"^(\s*)([A-Za-z]+)(\s*=\s*)([^;]*)(.*)$", line)
        if m and m.group(2) in settings:
            value = settings[m.group(2)] or next(ports)
            line = f"{m.group(1)}{m.group(2)}{m.group(3)}{value}"
        out.append(line)
    return "\n".join(out) + "\n"


@contextmanager
def virtuoso(buffers: int = 85_000) -> Iterator[Virtuoso]:
    """A running Virtuoso (``buffers``: 8 KiB pages of cache)."""
    why = available()
    if why:
        raise RuntimeError(why)
    directory = Path(tempfile.mkdtemp(prefix="medkg-virtuoso-"))
    server = Virtuoso(directory, _free_port(), _free_port())
    ini = directory / "virtuoso.ini"
    ini.write_text(_ini(directory, server.sql_port, server.http_port, buffers))
    try:
        done = subprocess.run(["virtuoso-t", "+configfile", str(ini), "+wait"],
                              cwd=directory, capture_output=True, text=True, timeout=180,
                              check=False)
        if done.returncode != 0:
            log = directory / "virtuoso.log"
            raise RuntimeError(f"virtuoso did not start: {done.stderr}"
                               f"{log.read_text()[-2000:] if log.exists() else ''}")
        # The anonymous SPARQL user may update (this server listens on loopback only).
        server.isql('GRANT SPARQL_UPDATE TO "SPARQL";')
        _wait_http(server.url)
        yield server
    finally:
        try:
            server.isql("shutdown;")
        except (RuntimeError, subprocess.TimeoutExpired):
            subprocess.run(["pkill", "-f", str(ini)], check=False)
        for _ in range(100):
            if not (directory / "virtuoso.lck").exists():
                break
            time.sleep(0.1)
        shutil.rmtree(directory, ignore_errors=True)


def _wait_http(url: str, seconds: float = 60) -> None:
    query = urllib.parse.urlencode({"query": "ASK {}"})
    deadline = time.monotonic() + seconds
    while True:
        try:
            with urllib.request.urlopen(f"{url}?{query}", timeout=5):
                return
        except OSError:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.2)


if __name__ == "__main__":
    with virtuoso() as v:
        print(f"Virtuoso at {v.url} (SQL port {v.sql_port}); Ctrl-C stops it", flush=True)
        try:
            while True:
                time.sleep(3600)
        except KeyboardInterrupt:
            pass
