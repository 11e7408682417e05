"""The build, as a declared, ordered list of stages.

Each stage is a thin function over a :class:`BuildContext` (the workspace's
parts, the concept index, the progress callback and the report it fills);
each decides from the stage state what is left to do, so a build after a crash
or a settings change redoes exactly that.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from medkg import timing
from medkg.config import Settings
from medkg.pipeline import extract, grow, link, review, summarise
from medkg.pipeline.context import BuildContext, BuildReport
from medkg.pipeline.progress import Progress, no_progress
from medkg.pipeline.reconcile import reconcile

if TYPE_CHECKING:
    from medkg.components import Components


@dataclass(frozen=True)
class Stage:
    name: str
    run: Callable[[BuildContext], None]
    when: Callable[[Settings], bool] = lambda settings: True


BUILD_STAGES: tuple[Stage, ...] = (
    Stage("extract", extract.run),
    Stage("grow", grow.run, when=lambda s: s.construction.levels > 0),
    Stage("link", link.run),
    Stage("review", review.run),  # curators' decisions over what the stages above wrote
    Stage("summarise", summarise.run),
)


def build(parts: Components, progress: Progress = no_progress,
          skip: frozenset[str] = frozenset(), *, reextract: bool = False) -> BuildReport:
    """Run every build stage in order (those named in ``skip`` excepted), after
    bringing derived data in line with the graph; ``reextract``: extract every
    document again, even those whose extraction is current."""
    with timing.stage("reconcile"):
        reconcile(parts)
    ctx = BuildContext(parts, parts.concept_index(), progress, BuildReport(),
                       reextract=reextract)
    for stage in BUILD_STAGES:
        if stage.name not in skip and stage.when(parts.settings):
            with timing.stage(stage.name):
                stage.run(ctx)
    with timing.stage("store"):
        counts = parts.store.counts()
    ctx.report.links = counts.links
    ctx.report.entities = counts.entities
    ctx.report.triples = counts.triples
    return ctx.report
