"""One writer per workspace, and who it is.

A workspace's graph store takes one writing process (Oxigraph: RocksDB's lock).
Rather than let a second writer meet a raw ``IO error: While lock file`` from
the store, every writer takes :class:`WriterLock` first: a POSIX lock on
``writer.lock`` in the workspace, with the holder's pid, command line and start
time written into the file. A second writer is told who holds the workspace; a
reader command (``ask``, ``stats``, ``documents``, ``export``) opens the
workspace read-only instead and sees the last committed state.

The lock is the kernel's: it goes when the process ends, however it ends, so a
crashed build never leaves the workspace locked (the file's text may stay; it
is only read while someone holds the lock).
"""

from __future__ import annotations

import fcntl
import json
import os
import sys
import time
from dataclasses import dataclass
from pathlib import Path

from medkg.errors import WorkspaceError
from medkg.files import atomic_text
from medkg.layout import WorkspaceLayout


@dataclass(frozen=True)
class Holder:
    """The process that holds a workspace for writing."""

    pid: int
    command: str
    since: float

    def describe(self) -> str:
        at = time.strftime("%H:%M:%S", time.localtime(self.since))
        return f"process {self.pid} ({self.command}, since {at})"


class WorkspaceBusyError(WorkspaceError):
    """Another process writes to this workspace."""

    def __init__(self, path: Path, holder: Holder | None) -> None:
        who = holder.describe() if holder is not None else "another process"
        super().__init__(
            f"{path} is being written by {who}",
            hint="wait for it to finish; `medkg ask`, `stats`, `documents` and `export` "
                 "work meanwhile, on what it has committed so far")
        self.holder = holder


def _command() -> str:
    args = [Path(sys.argv[0]).name, *sys.argv[1:]] if sys.argv and sys.argv[0] else ["python"]
    text = " ".join(args)
    return text if len(text) <= 120 else text[:117] + "..."


class WriterLock:
    """Held from :meth:`acquire` to :meth:`release` (or the process's end).

    POSIX record locks belong to the process: opening a workspace a second time
    in the same process does not conflict (the store refuses that on its own)."""

    def __init__(self, path: Path, fd: int) -> None:
        self.path = path
        self._fd: int | None = fd

    @classmethod
    def acquire(cls, path: Path) -> WriterLock:
        """The lock, or :class:`WorkspaceBusyError` naming its holder."""
        fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o600)
        try:
            fcntl.lockf(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            os.close(fd)
            raise WorkspaceBusyError(path.parent, holder(path)) from None
        os.ftruncate(fd, 0)
        os.pwrite(fd, json.dumps({"pid": os.getpid(), "command": _command(),
                                  "since": time.time()}).encode() + b"\n", 0)
        return cls(path, fd)

    def release(self) -> None:
        if self._fd is not None:
            os.close(self._fd)  # the lock goes with the descriptor
            self._fd = None


def holder(path: Path) -> Holder | None:
    """Who holds the lock at ``path`` now (None: nobody, or unknown)."""
    try:
        fd = os.open(path, os.O_RDWR)
    except OSError:
        return None
    try:
        try:
            fcntl.lockf(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:  # held: its holder wrote who it is
            try:
                data = json.loads(os.pread(fd, 4096, 0).decode("utf-8"))
                return Holder(int(data["pid"]), str(data["command"]), float(data["since"]))
            except (ValueError, KeyError, TypeError, UnicodeDecodeError):
                return None
        fcntl.lockf(fd, fcntl.LOCK_UN)
        return None
    finally:
        os.close(fd)


# -- a server's claim ------------------------------------------------------------------
# While ``medkg serve`` runs it keeps ``server.json`` (URL and process id) in the
# workspace: the store takes one process, so another command on the workspace stops
# with the server's URL instead of a lock error from the store.


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def running_server(layout: WorkspaceLayout) -> str | None:
    """The URL of a live server (another process) that owns this workspace."""
    try:
        data = json.loads(layout.server.read_text(encoding="utf-8"))
        pid, url = int(data["pid"]), str(data["url"])
    except (OSError, ValueError, KeyError, TypeError):
        return None
    if pid == os.getpid() or not _alive(pid):
        return None
    return url


def check_not_served(layout: WorkspaceLayout) -> None:
    url = running_server(layout)
    if url is not None:
        raise WorkspaceError(
            f"a medkg server owns this workspace: {url}",
            hint=f"use its API ({url}docs) or its review page, or stop the server "
                 "(Ctrl-C where `medkg serve` runs) and run the command again; if no "
                 f"server runs, delete {layout.server}")


def claim(layout: WorkspaceLayout, url: str) -> None:
    check_not_served(layout)
    with atomic_text(layout.server) as fh:
        fh.write(json.dumps({"url": url, "pid": os.getpid()}) + "\n")


def release(layout: WorkspaceLayout) -> None:
    try:
        data = json.loads(layout.server.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return
    if data.get("pid") == os.getpid():
        layout.server.unlink(missing_ok=True)
