"""Grow: the SAC-KG loop (``construction.levels`` > 0) from the configured seeds,
level by level; an interrupted loop resumes with the next head, as long as
its fingerprint (corpus version, generator, loop settings) is unchanged."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from medkg.engines import generator
from medkg.errors import WorkspaceError
from medkg.fingerprints import GROW
from medkg.model import Entity, Layer
from medkg.pipeline.context import BuildContext
from medkg.pipeline.marks import fingerprint
from medkg.pipeline.progress import Progress, no_progress

if TYPE_CHECKING:
    from medkg.components import Components
    from medkg.growth.loop import LevelStats
    from medkg.ontology.index import ConceptIndex

STAGE = GROW


def run(ctx: BuildContext) -> None:
    ctx.report.levels = grow(ctx.parts, ctx.concepts, ctx.progress)


def grow(parts: Components, concepts: ConceptIndex | None = None,
         progress: Progress = no_progress) -> list[LevelStats]:
    """Run the SAC-KG loop to ``construction.levels`` levels from the configured
    seeds; resumes an interrupted run. Returns what each level did."""
    from medkg.growth.corpus import node_of
    from medkg.growth.generator import example_triples
    from medkg.growth.loop import STAGE as LEDGER_STAGE
    from medkg.growth.loop import Growth, GrowthState
    from medkg.growth.pruner import resolve_pruner
    from medkg.rulehub.rules import load_rules
    from medkg.rulehub.verify import Verifier

    cfg = parts.settings.construction
    concepts = concepts or parts.concept_index()
    layers = {Layer.USER: parts.store.entities(Layer.USER),
              Layer.LITERATURE: parts.store.entities(Layer.LITERATURE)}
    entities = {e.id: e for group in layers.values() for e in group}
    seeds = seed_nodes(cfg.seeds, layers)
    if not seeds:
        raise WorkspaceError(
            f"the SAC-KG loop has no seed entities (construction.seeds = {cfg.seeds!r})",
            hint="ingest user documents (`medkg ingest --layer user`) or set "
            "construction.seeds to 'all' or to entity names")
    rules = load_rules()
    engine = generator(parts, parts.corpus, entities, rules)
    decide = None
    if cfg.prune:
        pruner = resolve_pruner(cfg.pruner)
        embedder = parts.embedder

        def decide(found: Sequence[Entity]) -> list[bool]:
            return pruner.grow(embedder, [e.name for e in found], [e.type for e in found])

    growth = Growth(
        parts.corpus, entities, engine,
        Verifier(rules, min_triples=cfg.min_triples) if cfg.verify else None, decide, cfg,
        store_triples=parts.store.add_triples, existing=parts.store.triples(),
        record=lambda item, reason: parts.ledger.fail(LEDGER_STAGE, item, reason),
        examples=lambda head: example_triples(head, concepts, cfg.examples),
    )
    state = GrowthState(parts.layout.growth)
    try:
        fp = fingerprint(parts.corpus.fingerprint(), engine.name,
                         cfg.model_dump(exclude={"max_heads_per_level"}))
        if not parts.fingerprints.current(STAGE, fp):
            state.reset()  # its progress is for other inputs or settings
            parts.fingerprints.record(STAGE, fp)
        return growth.run(state, sorted({node_of(e) for e in seeds}), progress)
    finally:
        state.close()


def seed_nodes(setting: str, layers: dict[Layer, list[Entity]]) -> list[Entity]:
    """The seed entities the ``construction.seeds`` setting names."""
    from medkg.ontology.index import normalize_term

    if setting in ("user", "literature"):
        return list(layers[Layer(setting)])
    everything = [e for group in layers.values() for e in group]
    if setting == "all":
        return everything
    wanted = {normalize_term(x) for x in setting.split(",") if x.strip()}
    wanted |= {x.strip() for x in setting.split(",")}
    return [e for e in everything
            if normalize_term(e.name) in wanted or wanted & set(e.concept_ids)]
