"""Where the time goes: a per-stage clock that costs nothing unless a caller
(a benchmark, ``medkg build --profile``) turns it on.

A stage is a named block (``with timing.stage("chunk"): ...``). Stages nest;
each records its *own* seconds (a nested stage's time is its own, not its
parent's), so the rows of :meth:`StageClock.rows` add up to the time spent
inside all stages. The embedder reports how many texts it encoded
(:func:`embedded`); they are counted against the stage that asked for them.
"""

from __future__ import annotations

import resource
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass

EMBED = "embed"


def peak_rss_mb() -> float:
    """This process's peak resident set size so far, in MiB."""
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return peak / (1024 * 1024) if sys.platform == "darwin" else peak / 1024


@dataclass
class StageTime:
    seconds: float = 0.0  # the stage's own time, nested stages excluded
    calls: int = 0
    texts_embedded: int = 0  # texts encoded on behalf of this stage
    embed_seconds: float = 0.0  # encoding time on behalf of this stage
    peak_rss_mb: float = 0.0  # the process's peak when the stage last ended


class StageClock:
    """Own time, calls and texts embedded per stage name."""

    def __init__(self) -> None:
        self.stages: dict[str, StageTime] = {}
        self._stack: list[list[float | str]] = []  # [name, started, nested seconds]

    def _row(self, name: str) -> StageTime:
        return self.stages.setdefault(name, StageTime())

    def enter(self, name: str) -> None:
        self._stack.append([name, time.perf_counter(), 0.0])

    def leave(self) -> None:
        name, started, nested = self._stack.pop()
        assert isinstance(name, str) and isinstance(started, float)
        assert isinstance(nested, float)
        elapsed = time.perf_counter() - started
        row = self._row(name)
        row.seconds += elapsed - nested
        row.calls += 1
        row.peak_rss_mb = peak_rss_mb()
        if self._stack:
            parent = self._stack[-1]
            parent[2] = float(parent[2]) + elapsed
            if name == EMBED:
                caller = self._row(str(parent[0]))
                caller.embed_seconds += elapsed

    def embedded(self, count: int) -> None:
        callers = [str(frame[0]) for frame in self._stack if frame[0] != EMBED]
        self._row(callers[-1] if callers else "(outside stages)").texts_embedded += count

    def rows(self) -> list[tuple[str, StageTime]]:
        """Stages by own seconds, largest first."""
        return sorted(self.stages.items(), key=lambda kv: -kv[1].seconds)

    @property
    def total_seconds(self) -> float:
        return sum(row.seconds for row in self.stages.values())


_CLOCK: ContextVar[StageClock | None] = ContextVar("medkg_stage_clock", default=None)


@contextmanager
def recording() -> Iterator[StageClock]:
    """Turn the clock on for the code inside the block; yields it."""
    clock = StageClock()
    token = _CLOCK.set(clock)
    try:
        yield clock
    finally:
        _CLOCK.reset(token)


@contextmanager
def stage(name: str) -> Iterator[None]:
    """Time a block as stage ``name`` when a clock is on; otherwise nothing."""
    clock = _CLOCK.get()
    if clock is None:
        yield
        return
    clock.enter(name)
    try:
        yield
    finally:
        clock.leave()


def embedded(count: int) -> None:
    """Count ``count`` texts encoded against the stage that asked for them."""
    clock = _CLOCK.get()
    if clock is not None and count:
        clock.embedded(count)


def table(clock: StageClock, wall_seconds: float | None = None) -> str:
    """The clock as a plain-text table: stage, own seconds, share, calls, texts
    embedded for it, seconds of that embedding, peak RSS at its end."""
    total = wall_seconds or clock.total_seconds or 1.0
    lines = [f"{'stage':<16}{'seconds':>9}{'share':>8}{'calls':>8}{'embedded':>10}"
             f"{'embed s':>9}{'peak MB':>9}"]
    for name, row in clock.rows():
        lines.append(f"{name:<16}{row.seconds:>9.2f}{row.seconds / total:>8.1%}{row.calls:>8}"
                     f"{row.texts_embedded:>10}{row.embed_seconds:>9.2f}{row.peak_rss_mb:>9.0f}")
    outside = (wall_seconds or 0.0) - clock.total_seconds
    if wall_seconds is not None and outside > 0:
        lines.append(f"{'(not in a stage)':<16}{outside:>9.2f}{outside / total:>8.1%}")
    return "\n".join(lines)
