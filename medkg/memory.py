"""Freed memory given back to the system during long builds.

glibc keeps the memory a process frees (the encoder's tensors of every batch
shape, parsed documents, ...) in its heap for reuse, so a build's resident size
grows with the corpus although what it holds does not (measured, ingest of 1,600
mixed documents into the default-vocabulary template: 1,192 MB resident and
growing about 0.3 MB a document; 639 MB, growing 0.03 MB a document, with a
release after each one). ``release`` hands it back; ingest calls it after each
document, extraction every ``RELEASE_EVERY``. Elsewhere than glibc it does nothing.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import sys
from functools import cache
from typing import Any


@cache
def _libc() -> Any:
    if not sys.platform.startswith("linux"):
        return None
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
        return libc if hasattr(libc, "malloc_trim") else None
    except OSError:
        return None


def release() -> None:
    """Return the heap's free memory to the system (glibc's ``malloc_trim(0)``)."""
    libc = _libc()
    if libc is not None:
        libc.malloc_trim(0)
