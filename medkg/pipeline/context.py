"""What a build stage gets and gives: the :class:`BuildContext` (the workspace's
parts, the concept index, the progress callback) and the :class:`BuildReport`
it adds to."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from medkg.pipeline.progress import Progress

if TYPE_CHECKING:
    from medkg.components import Components
    from medkg.growth.loop import LevelStats
    from medkg.ontology.index import ConceptIndex


@dataclass
class BuildReport:
    """Documents processed by this build; entities, triples and links in the graph after it."""

    documents: int = 0
    entities: int = 0
    triples: int = 0
    links: int = 0
    rejected: int = 0  # triples the RuleHub's hard rules kept out of the graph
    unfinished: int = 0  # documents with a chunk the engine could not extract (retried)
    reextracted: int = 0  # of ``documents``: extracted before with other inputs
    review_unresolved: int = 0  # curators' decisions whose statement or entity is gone
    levels: list[LevelStats] = field(default_factory=list)  # the SAC-KG loop, per level


@dataclass
class BuildContext:
    """What every build stage gets: the workspace's parts, the concept index, the
    progress callback and the report it adds to."""

    parts: Components
    concepts: ConceptIndex
    progress: Progress
    report: BuildReport
    reextract: bool = False  # extract every document again, current or not
