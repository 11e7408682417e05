"""Files the workspace writes: atomically (a temporary file beside the target,
flushed to disk, then renamed over it), readable by the owner alone, and, for
a directory of derived files, a manifest written last that says what they
were derived from and what each one's digest is.

A crash therefore leaves either the old file or the new one, never a torn
one; and a directory whose files do not match its manifest (a crash between
two renames, a file cut short by hand) is known to be stale and rebuilt from
the graph instead of being read.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import tempfile
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import IO, Any

MANIFEST = "manifest.json"
FILE_MODE = 0o600


@contextlib.contextmanager
def _atomic(path: Path, mode: str) -> Iterator[IO[Any]]:
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        os.fchmod(fd, FILE_MODE)
        encoding = None if "b" in mode else "utf-8"
        with os.fdopen(fd, mode, encoding=encoding) as f:
            yield f
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        raise


def atomic_text(path: Path) -> contextlib.AbstractContextManager[IO[str]]:
    """Write ``path`` as UTF-8 text through a temporary file that replaces it only
    when the ``with`` block ends without an error."""
    return _atomic(path, "w")


def user_cache_dir() -> Path:
    """medkg's cache on this machine, shared by all its workspaces
    (``$XDG_CACHE_HOME/medkg``, default ``~/.cache/medkg``): nothing in it is
    the only copy of anything."""
    root = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(root) / "medkg"


def atomic_binary(path: Path) -> contextlib.AbstractContextManager[IO[bytes]]:
    """Like :func:`atomic_text`, for bytes."""
    return _atomic(path, "wb")


def write_text(path: Path, text: str) -> None:
    with atomic_text(path) as f:
        f.write(text)


def digest(path: Path) -> str:
    h = hashlib.sha256()
    with path.open("rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def write_manifest(directory: Path, files: Sequence[str], derived_from: str) -> None:
    """Record, after ``files`` are written, their digests and what they came from."""
    entries = {name: digest(directory / name) for name in files}
    write_text(directory / MANIFEST,
               json.dumps({"derived_from": derived_from, "files": entries}, sort_keys=True))


def manifest_matches(directory: Path, derived_from: str | None = None) -> bool:
    """Whether ``directory``'s files are the ones its manifest lists, unchanged,
    and (when given) derived from ``derived_from``."""
    try:
        manifest = json.loads((directory / MANIFEST).read_text(encoding="utf-8"))
        files: dict[str, str] = manifest["files"]
        if derived_from is not None and manifest["derived_from"] != derived_from:
            return False
        return all(digest(directory / name) == want for name, want in files.items())
    except (OSError, ValueError, KeyError, TypeError):
        return False


PENDING = "manifest.next.json"  # a set of files committed but not yet in place


def commit_files(directory: Path, names: Sequence[str], derived_from: str) -> None:
    """Put the files ``NAME.next`` (written by the caller) in place of ``NAME`` as one
    step: their manifest, written as ``manifest.next.json``, is the commit point;
    the renames and the manifest follow (:func:`finish_commit`). A crash before the
    commit point leaves the old files and their manifest; after it, the next
    :func:`finish_commit` completes the step."""
    entries = {name: digest(directory / f"{name}.next") for name in names}
    write_text(directory / PENDING,
               json.dumps({"derived_from": derived_from, "files": entries}, sort_keys=True))
    finish_commit(directory)


def finish_commit(directory: Path) -> bool:
    """Complete a :func:`commit_files` a crash cut short after its commit point
    (each file either still ``.next`` or already in place, with the digest the
    pending manifest records); whether there was one to complete."""
    try:
        manifest = json.loads((directory / PENDING).read_text(encoding="utf-8"))
        wanted: dict[str, str] = manifest["files"]
    except FileNotFoundError:
        return False
    except (OSError, ValueError, KeyError, TypeError):
        (directory / PENDING).unlink(missing_ok=True)
        return False
    for name, want in wanted.items():
        staged, final = directory / f"{name}.next", directory / name
        if staged.exists() and digest(staged) == want:
            os.replace(staged, final)
        elif not (final.exists() and digest(final) == want):
            (directory / PENDING).unlink(missing_ok=True)  # not a complete commit
            return False
    write_text(directory / MANIFEST, json.dumps(manifest, sort_keys=True))
    (directory / PENDING).unlink(missing_ok=True)
    return True


def forget_manifest(directory: Path) -> None:
    """Mark a derived directory stale before its files are rewritten."""
    with contextlib.suppress(FileNotFoundError):
        (directory / MANIFEST).unlink()


# What a full disk looks like from each layer: the OS's errno, RocksDB's message
# (Oxigraph raises it as a plain OSError) and SQLite's.
_FULL_DISK = ("no space left on device", "database or disk is full", "disk full",
              "sqlite_full")


def is_disk_full(exc: BaseException) -> bool:
    """Whether ``exc`` (or what caused it) says the disk is full."""
    import errno

    seen: BaseException | None = exc
    while seen is not None:
        if isinstance(seen, OSError) and seen.errno in (errno.ENOSPC, errno.EDQUOT):
            return True
        if any(s in str(seen).lower() for s in _FULL_DISK):
            return True
        seen = seen.__cause__ or seen.__context__
    return False


def disk_full_hint(path: Path | str | None) -> str:
    """"the disk is full (N MB free on MOUNT)", for the file system of ``path``."""
    import shutil

    where = Path(path or ".").absolute()
    while not where.exists() and where != where.parent:
        where = where.parent
    try:
        free = shutil.disk_usage(where).free / 1_000_000
    except OSError:
        return "the disk is full: free some space and run the command again"
    mount = where
    while not os.path.ismount(mount) and mount != mount.parent:
        mount = mount.parent
    return (f"the disk is full ({free:,.0f} MB free on {mount}): free some space and run "
            "the command again (what finished is kept; the rest resumes)")
