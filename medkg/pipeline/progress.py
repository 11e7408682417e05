"""How a long stage reports progress: ``progress(stage, done, total)``."""

from __future__ import annotations

from collections.abc import Callable

Progress = Callable[[str, int, int], None]


def no_progress(stage: str, done: int, total: int) -> None:
    return None
