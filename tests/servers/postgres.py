"""Start a private PostgreSQL cluster (Debian's ``postgresql``) for the postgres
backend's tests and benchmarks: ``initdb`` and ``pg_ctl`` in a temporary directory,
a unix socket there and a free loopback port, never the system service; stopped
and removed after.

Logins: over the socket, ``postgres`` without a password (trust); over TCP, the
role ``medkg`` with a password (SCRAM), so the credentials path is tested as a
user meets it.

    python -m tests.servers.postgres      # start one and print its URLs
"""

from __future__ import annotations

import os
import pwd
import shutil
import socket
import subprocess
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

PASSWORD = "medkg-test-password"  # the throwaway cluster's own role; never a real secret


def _bin_dir() -> Path | None:
    found = shutil.which("pg_ctl")
    if found:
        return Path(found).parent
    versions = sorted(Path("/usr/lib/postgresql").glob("*/bin/pg_ctl"), reverse=True)
    return versions[0].parent if versions else None


def available() -> str | None:
    """Why no cluster can be started here, or None when one can."""
    if _bin_dir() is None:
        return ("PostgreSQL is not installed (Debian: apt-get install postgresql; "
                "`make install-dev` does it)")
    if os.geteuid() == 0:
        try:
            pwd.getpwnam("postgres")
        except KeyError:
            return "running as root and there is no postgres user to run the server as"
    return None


@dataclass(frozen=True)
class Postgres:
    directory: Path
    port: int

    @property
    def socket_url(self) -> str:
        """The superuser over the unix socket (no password)."""
        return f"postgresql://postgres@/postgres?host={self.directory / 'run'}&port={self.port}"

    @property
    def url(self) -> str:
        """The ``medkg`` role over TCP: its password is :data:`PASSWORD`."""
        return f"postgresql://medkg@127.0.0.1:{self.port}/medkg"

    def sql(self, statement: str) -> None:
        import psycopg

        with psycopg.connect(self.socket_url, autocommit=True) as db:
            db.execute(statement)  # type: ignore[arg-type]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@contextmanager
def postgres() -> Iterator[Postgres]:
    bin_dir = _bin_dir()
    assert bin_dir is not None
    as_root = os.geteuid() == 0
    prefix = ["runuser", "-u", "postgres", "--"] if as_root else []
    directory = Path(tempfile.mkdtemp(prefix="medkg-postgres-"))
    data, run = directory / "data", directory / "run"
    run.mkdir()
    if as_root:
        owner = pwd.getpwnam("postgres")
        for path in (directory, run):
            os.chown(path, owner.pw_uid, owner.pw_gid)
    directory.chmod(0o755)
    run.chmod(0o777)
    port = _free_port()
    log = directory / "server.log"

    def call(*args: str) -> None:
        done = subprocess.run([*prefix, *args], capture_output=True, text=True, timeout=120,
                              check=False)
        if done.returncode != 0:
            tail = log.read_text(errors="replace")[-2000:] if log.exists() else ""
            raise RuntimeError(f"{args[0]} failed: {done.stdout}{done.stderr}{tail}")

    try:
        call(str(bin_dir / "initdb"), "-D", str(data), "-U", "postgres", "--auth-local=trust",
             "--auth-host=scram-sha-256", "-E", "UTF8", "--locale=C.UTF-8")
        call(str(bin_dir / "pg_ctl"), "-D", str(data), "-l", str(log), "-w", "-t", "60",
             "-o", f"-p {port} -k {run} -c listen_addresses=127.0.0.1 -c fsync=off "
             "-c max_connections=200", "start")
        server = Postgres(directory, port)
        deadline = time.monotonic() + 30
        while True:
            try:
                server.sql("SELECT 1")
                break
            except Exception:
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.2)
        server.sql(f"CREATE ROLE medkg LOGIN PASSWORD '{PASSWORD}'")
        server.sql("CREATE DATABASE medkg OWNER medkg")
        yield server
    finally:
        subprocess.run([*prefix, str(bin_dir / "pg_ctl"), "-D", str(data), "-m", "immediate",
                        "-w", "stop"], capture_output=True, timeout=60, check=False)
        shutil.rmtree(directory, ignore_errors=True)


if __name__ == "__main__":  # pragma: no cover - a helper for benchmarks by hand
    why = available()
    if why:
        raise SystemExit(why)
    with postgres() as pg:
        print(f"socket (superuser): {pg.socket_url}\nTCP (medkg, password "
              f"{PASSWORD!r}): {pg.url}\nCtrl-C stops it")
        try:
            while True:
                time.sleep(3600)
        except KeyboardInterrupt:
            pass
