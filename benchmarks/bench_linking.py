"""Linking accuracy on a PubTator gold file: the share of extracted entities whose
concept (the one ``definition_of`` links them to) is the gold one.

    python benchmarks/bench_linking.py [--gold FILE]

The builtin pipeline (bundled NER models, lexicon, default vocabulary) runs on
each document's text. An entity is a distinct (document, concept) — or
(document, text) when no concept was found — among predicted mentions whose
span matches a gold mention with an id; it counts as right when every such
mention's concept maps to a gold id (by id or cross-reference). Defaults to the
BC5CDR development set in ../shared/data (says so and stops when it is absent).

    python benchmarks/bench_linking.py --definitions [--gold FILE ...]

also links the entities the pipeline left without a concept (``definition_of``
by embedding, :func:`medkg.linking.linker.link_definitions`) against every
concept of the vocabulary (``linking.concept_candidates = "all"``) and against
only their names' lexical candidates (``"lexical"``, at several
``linking.lexical_candidates``), in one run: per setting, the share linked, the
share linked to the gold concept, the agreement with "all", and how many
concepts need vectors. The vectors of all concepts come from the per-machine
cache (made there on first use: tens of minutes on two cores).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from medkg.evaluation.pubtator import GoldMention
    from medkg.extraction.extract import ChunkExtraction
    from medkg.model import Entity
    from medkg.ontology.index import ConceptIndex

REPO = Path(__file__).resolve().parents[1]
BC5CDR_DEV = REPO.parent / "shared" / "data" / "eval" / "bc5cdr" / "CDR_DevelopmentSet.PubTator.txt"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--gold", type=Path, nargs="+", default=[BC5CDR_DEV])
    parser.add_argument("--definitions", action="store_true",
                        help="also compare definition links: all concepts against lexical "
                        "candidates")
    parser.add_argument("--k", type=int, nargs="+", default=[10, 25, 50, 100],
                        help="lexical candidates per entity to try (with --definitions)")
    parser.add_argument("--thresholds", type=float, nargs="+", default=[0.80],
                        help="linking.definition_threshold values to try (with "
                        "--definitions; 0.80 is the default)")
    args = parser.parse_args()
    for gold in args.gold:
        if not gold.exists():
            sys.exit(f"skip: {gold} not found (the ../shared checkout is absent)")
    from medkg.evaluation.extraction import _gold_ids
    from medkg.evaluation.pubtator import read_pubtator
    from medkg.extraction.extract import extract
    from medkg.extraction.lexicon import resolve_lexicon
    from medkg.extraction.nlp import build_pipeline, resolve_ner_models
    from medkg.model import Chunk, Document, Layer
    from medkg.ontology.index import ConceptIndex
    from medkg.ontology.loaders import load_default

    index = ConceptIndex(load_default().concepts)
    nlp = build_pipeline(index, 3, resolve_ner_models("bundled"), resolve_lexicon("bundled"))
    for gold_file in args.gold:
        entities: dict[tuple[str, str], list[bool]] = {}
        orphans: list[tuple[Entity, set[str]]] = []  # concept-less, with the gold ids
        for pub in read_pubtator(gold_file):
            doc = Document.create(layer=Layer.LITERATURE, title=pub.title, source=pub.pmid,
                                  media_type="text/plain", text=pub.text)
            [ex] = list(extract([Chunk.create(doc, 0, 0, len(pub.text))], nlp))
            gold = {(m.start, m.end): m for m in pub.mentions if m.ids}
            for m in ex.mentions:
                g = gold.get((m.start, m.end))
                if g is None:
                    continue
                concept = index.get(m.concept_id)
                right = concept is not None and bool(_gold_ids(concept) & set(g.ids))
                entities.setdefault((pub.pmid, m.concept_id or m.text.lower()), []).append(right)
            if args.definitions:
                orphans += _orphans(ex, gold, index)
        n = len(entities)
        linked = sum(1 for (_, key) in entities if index.get(key) is not None)
        right_n = sum(1 for marks in entities.values() if all(marks))
        print(f"linking on {gold_file.name}: {n} entities (document, concept) with a gold span")
        print(f"linked to a concept: {linked} ({linked / n:.3f}); "
              f"concept is the gold one: {right_n} ({right_n / n:.3f})")
        if args.definitions:
            for threshold in args.thresholds:
                _definitions(orphans, index, args.k, threshold)


def _orphans(ex: ChunkExtraction, gold: dict[tuple[int, int], GoldMention],
             index: ConceptIndex) -> list[tuple[Entity, set[str]]]:
    """The entities of one document the pipeline left without a concept, whose
    mentions all have gold ids (the ids every such mention agrees on)."""
    from medkg.config import ExtractionConfig
    from medkg.extraction.extract import assemble
    from medkg.model import Layer

    entities, _ = assemble(Layer.LITERATURE, [ex], index, ExtractionConfig().context_chars)
    out = []
    for entity in entities:
        if entity.concept_ids:
            continue
        ids = [set(g.ids) for m in entity.mentions if (g := gold.get((m.start, m.end)))]
        if ids and len(ids) == len(entity.mentions):
            common = set.intersection(*ids)
            if common:
                out.append((entity, common))
    return out


def _definitions(orphans: list[tuple[Entity, set[str]]], index: ConceptIndex,
                 ks: list[int], threshold: float) -> None:
    import time

    from medkg.config import EmbeddingConfig, LinkingConfig
    from medkg.evaluation.extraction import _gold_ids
    from medkg.files import user_cache_dir
    from medkg.linking.concept_vectors import all_concept_vectors
    from medkg.linking.embeddings import make_embedder
    from medkg.linking.linker import embed_entities, lexical_candidates, link_definitions

    cfg = LinkingConfig(definition_threshold=threshold)
    embedder = make_embedder(EmbeddingConfig())
    entities = [e for e, _ in orphans]
    gold = {e.id: ids for e, ids in orphans}
    vectors = embed_entities(embedder, entities)
    concepts = index.concepts()
    by_id = {c.id: c for c in concepts}
    start = time.perf_counter()
    every = all_concept_vectors(concepts, embedder, user_cache_dir() / "concept-vectors",
                                cfg.ann_threshold)
    print(f"  vectors of all {len(concepts)} concepts: {time.perf_counter() - start:.0f} s "
          "(from the machine's cache when it had them)")

    def score(candidates: dict[str, list[str]] | None) -> dict[str, str]:
        links = link_definitions(entities, vectors, by_id, every, cfg, candidates)
        return {x.source: x.target for x in links}

    baseline = score(None)
    print(f"  definitions of {len(entities)} entities without a concept (gold span and id), "
          f"definition_threshold {threshold}:")
    print(f"  {'candidates':<14}{'embedded':>9}{'linked':>8}{'gold':>8}{'precision':>10}"
          f"{'agree':>7}{'search s':>10}")
    rows = [("all", len(concepts), baseline, 0.0)]
    for k in ks:
        start = time.perf_counter()
        candidates = lexical_candidates(entities, index, k)
        elapsed = time.perf_counter() - start
        union = {cid for ids in candidates.values() for cid in ids}
        rows.append((f"lexical k={k}", len(union), score(candidates), elapsed))
    n = len(entities) or 1
    for name, embedded, links, elapsed in rows:
        right = sum(1 for eid, cid in links.items()
                    if (c := by_id.get(cid)) is not None and _gold_ids(c) & gold[eid])
        agree = sum(1 for e in entities if links.get(e.id) == baseline.get(e.id))
        precision = right / len(links) if links else 0.0
        print(f"  {name:<14}{embedded:>9}{len(links) / n:>8.3f}{right / n:>8.3f}"
              f"{precision:>10.3f}{agree / n:>7.3f}{elapsed:>10.1f}")

if __name__ == "__main__":
    main()
