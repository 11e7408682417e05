"""Linking accuracy on a PubTator gold file: the share of extracted entities whose
concept (the one ``definition_of`` links them to) is the gold one.

    python benchmarks/bench_linking.py [--gold FILE]

The builtin pipeline (bundled NER models, lexicon, default vocabulary) runs on
each document's text. An entity is a distinct (document, concept) — or
(document, text) when no concept was found — among predicted mentions whose
span matches a gold mention with an id; it counts as right when every such
mention's concept maps to a gold id (by id or cross-reference). Defaults to the
BC5CDR development set in ../shared/data (says so and stops when it is absent).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
BC5CDR_DEV = REPO.parent / "shared" / "data" / "eval" / "bc5cdr" / "CDR_DevelopmentSet.PubTator.txt"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--gold", type=Path, default=BC5CDR_DEV)
    args = parser.parse_args()
    if not args.gold.exists():
        sys.exit(f"skip: {args.gold} not found (the ../shared checkout is absent)")
    from medkg.construction.extraction import extract
    from medkg.construction.lexicon import resolve_lexicon
    from medkg.construction.nlp import build_pipeline, resolve_ner_models
    from medkg.evaluation.extraction import _gold_ids
    from medkg.evaluation.pubtator import read_pubtator
    from medkg.model import Chunk, Document, Layer
    from medkg.ontology.index import ConceptIndex
    from medkg.ontology.loaders import load_default

    index = ConceptIndex(load_default().concepts)
    nlp = build_pipeline(index, 3, resolve_ner_models("bundled"), resolve_lexicon("bundled"))
    entities: dict[tuple[str, str], list[bool]] = {}
    for pub in read_pubtator(args.gold):
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
    n = len(entities)
    linked = sum(1 for (_, key) in entities if index.get(key) is not None)
    right = sum(1 for marks in entities.values() if all(marks))
    print(f"linking on {args.gold.name}: {n} entities (document, concept) with a gold span")
    print(f"linked to a concept: {linked} ({linked / n:.3f}); "
          f"concept is the gold one: {right} ({right / n:.3f})")


if __name__ == "__main__":
    main()
