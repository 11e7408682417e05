"""Where an export writes: a file or a directory, complete or not at all.

Everything is written beside the target (``NAME.tmp``) and renamed into place
when it is complete, so a failed export leaves no half-written output, and an
existing target is replaced only when asked.
"""

from __future__ import annotations

import contextlib
import os
import shutil
from collections.abc import Iterator
from pathlib import Path

from medkg.errors import StoreError


def check_target(path: Path, *, overwrite: bool, directory: bool = False) -> None:
    """``path`` may be written: its parent exists, it is not the other kind of
    thing, and it is not there already unless ``overwrite``."""
    if not directory and path.is_dir():
        raise StoreError(f"{path} is a directory", hint="name the file to write")
    if directory and path.is_file():
        raise StoreError(f"{path} is a file", hint="this format writes a directory of files")
    if not path.parent.is_dir():
        raise StoreError(f"cannot write {path}: no directory {path.parent}",
                         hint="create the directory first")
    if path.exists() and not overwrite:
        raise StoreError(f"{path} exists", hint="pass --force to replace it")


def _os_error(path: Path, exc: OSError) -> StoreError:
    return StoreError(f"cannot write {path}: {exc.strerror or exc}",
                      hint="is the disk full, or the directory read-only?")


@contextlib.contextmanager
def atomic_file(path: Path, *, overwrite: bool) -> Iterator[Path]:
    """Yield a temporary path beside ``path``; renamed to ``path`` on success."""
    check_target(path, overwrite=overwrite)
    tmp = path.with_name(path.name + ".tmp")
    try:
        yield tmp
        tmp.replace(path)
    except OSError as exc:
        tmp.unlink(missing_ok=True)
        raise _os_error(path, exc) from exc
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise


@contextlib.contextmanager
def atomic_dir(path: Path, *, overwrite: bool) -> Iterator[Path]:
    """Yield a temporary directory beside ``path``; it replaces ``path`` on success."""
    check_target(path, overwrite=overwrite, directory=True)
    tmp = path.with_name(path.name + ".tmp")
    shutil.rmtree(tmp, ignore_errors=True)
    try:
        tmp.mkdir()
        yield tmp
        if path.exists():
            old = path.with_name(path.name + ".old")
            shutil.rmtree(old, ignore_errors=True)
            os.replace(path, old)
            os.replace(tmp, path)
            shutil.rmtree(old, ignore_errors=True)
        else:
            os.replace(tmp, path)
    except OSError as exc:
        shutil.rmtree(tmp, ignore_errors=True)
        raise _os_error(path, exc) from exc
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
