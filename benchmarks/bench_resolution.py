"""Entity resolution on gold mentions, three arms side by side in one run.

    python benchmarks/bench_resolution.py [--gold FILE]

The test set is built from a PubTator gold file (default: the BC5CDR
development set in ../shared/data): every distinct mention text (with its
type) is one item, its gold concept id the truth, its first sentence the
context. Two items should end in the same entity exactly when their gold ids
are equal. Arms:

- ``exact name``: items merge only when their normalised texts are equal;
- ``concepts``: medkg's normalisation (lexicon, exact, approximate names over
  the default vocabulary): items normalised to the same concept are one
  entity, the builtin engine's first step;
- ``concepts + resolution``: then :func:`medkg.linking.resolution.resolve`
  over the entities (embedding neighbours, name similarity, abbreviations
  defined in the documents, near-miss guards).

Prints pairwise precision / recall / F1 over item pairs, and the near-miss
pairs of tests/linking/test_resolution.py that each arm merges.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections import Counter
from itertools import combinations
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
BC5CDR_DEV = REPO.parent / "shared" / "data" / "eval" / "bc5cdr" / "CDR_DevelopmentSet.PubTator.txt"
TYPE_GROUPS = {"chemical": "CHEM", "disease": "DISO", "gene": "GENE", "organism": "LIVB"}


def _pairs(clusters: dict[str, str]) -> set[frozenset[str]]:
    members: dict[str, list[str]] = {}
    for item, cluster in clusters.items():
        members.setdefault(cluster, []).append(item)
    return {frozenset(p) for group in members.values() for p in combinations(sorted(group), 2)}


def _score(pred: set[frozenset[str]], gold: set[frozenset[str]]) -> tuple[float, float, float]:
    tp = len(pred & gold)
    p = tp / len(pred) if pred else 0.0
    r = tp / len(gold) if gold else 0.0
    return p, r, (2 * p * r / (p + r) if p + r else 0.0)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--gold", type=Path, default=BC5CDR_DEV)
    args = parser.parse_args()
    if not args.gold.exists():
        sys.exit(f"skip: {args.gold} not found (the ../shared checkout is absent)")
    sys.path.insert(0, str(REPO))
    from medkg.abbreviations import find_abbreviations
    from medkg.config import EmbeddingConfig
    from medkg.evaluation.pubtator import read_pubtator
    from medkg.extraction.lexicon import resolve_lexicon
    from medkg.extraction.nlp import Normaliser
    from medkg.linking.embeddings import SentenceTransformerEmbedder
    from medkg.linking.resolution import resolve
    from medkg.linking.vectors import VectorIndex
    from medkg.model import Entity, Layer
    from medkg.ontology.index import ConceptIndex, normalize_term
    from medkg.ontology.loaders import load_default
    from medkg.text import sentence_spans
    from tests.linking.test_resolution import NEAR_MISSES

    # Items: distinct (text, group) with their majority gold id and first sentence.
    votes: dict[tuple[str, str], Counter[str]] = {}
    context: dict[tuple[str, str], str] = {}
    abbreviations: dict[str, str] = {}
    for doc in read_pubtator(args.gold):
        abbreviations.update(find_abbreviations(doc.text))
        spans = sentence_spans(doc.text)
        for m in doc.mentions:
            group = next((g for w, g in TYPE_GROUPS.items() if w in m.type.lower()), None)
            if group is None or len(m.ids) != 1:
                continue
            key = (m.text, group)
            votes.setdefault(key, Counter())[m.ids[0]] += 1
            if key not in context:
                context[key] = next((doc.text[a:b] for a, b in spans if a <= m.start < b), "")
    items = {f"{t}|{g}": (t, g, c.most_common(1)[0][0]) for (t, g), c in votes.items()}
    gold = _pairs({k: gid for k, (_, _, gid) in items.items()})

    t0 = time.perf_counter()
    index = ConceptIndex(load_default().concepts)
    normaliser = Normaliser(index, resolve_lexicon("bundled"))
    concept_of = {k: normaliser.normalise(t, g)[0] for k, (t, g, _) in items.items()}
    t_norm = time.perf_counter() - t0

    arms: dict[str, dict[str, str]] = {}
    arms["exact name"] = {k: f"{g}:{normalize_term(t)}" for k, (t, g, _) in items.items()}
    arms["concepts"] = {k: concept_of[k] or f"{g}:{normalize_term(t)}"
                        for k, (t, g, _) in items.items()}

    # Entities as the builtin engine makes them: one per concept, else per name.
    entity_of: dict[str, str] = {}
    entities: dict[str, Entity] = {}
    for k, (t, g, _) in items.items():
        eid = Entity.key_for(Layer.LITERATURE, t, g, concept_of[k] or None)
        entity_of[k] = eid
        if eid not in entities:
            entities[eid] = Entity(id=eid, layer=Layer.LITERATURE, name=t, type=g,
                                   context=context[(t, g)],
                                   concept_ids=[concept_of[k]] if concept_of[k] else [])
    embedder = SentenceTransformerEmbedder(EmbeddingConfig())
    ents = list(entities.values())
    t0 = time.perf_counter()
    vectors = embedder.embed([e.content() for e in ents])
    t_embed = time.perf_counter() - t0
    vindex = VectorIndex(vectors.shape[1])
    vindex.upsert([e.id for e in ents], vectors)
    t0 = time.perf_counter()
    links = resolve(ents, vectors, vindex, abbreviations)
    t_resolve = time.perf_counter() - t0
    survivor = {link.source: link.target for link in links}
    arms["concepts + resolution"] = {k: survivor.get(entity_of[k], entity_of[k])
                                     for k in items}

    print(f"entity resolution on {args.gold.name}: {len(items)} distinct mention texts, "
          f"{len(gold)} same-concept pairs; {len(ents)} entities after normalisation, "
          f"{len(links)} same_as links")
    print(f"time: normalisation {t_norm:.1f} s, embedding {t_embed:.1f} s, "
          f"resolution {t_resolve:.1f} s")
    print(f"{'arm':<24}{'pairs':>8}{'P':>8}{'R':>8}{'F1':>8}")
    for name, clusters in arms.items():
        pred = _pairs(clusters)
        p, r, f = _score(pred, gold)
        print(f"{name:<24}{len(pred):>8}{p:>8.3f}{r:>8.3f}{f:>8.3f}")

    # Near misses: each pair as two entities of the same type, resolved together.
    near = [Entity(id=f"nm{i}{side}", layer=Layer.LITERATURE, name=name, type="DISO",
                   context=f"The patient has {name}.")
            for i, pair in enumerate(NEAR_MISSES) for side, name in zip("ab", pair, strict=True)]
    nv = embedder.embed([e.content() for e in near])
    nindex = VectorIndex(nv.shape[1])
    nindex.upsert([e.id for e in near], nv)
    merged = {frozenset((x.source, x.target)) for x in resolve(near, nv, nindex)}
    false_merges = [pair for i, pair in enumerate(NEAR_MISSES)
                    if frozenset((f"nm{i}a", f"nm{i}b")) in merged]
    print(f"near-miss pairs: {len(NEAR_MISSES)}, falsely merged: {len(false_merges)} "
          f"{false_merges}")


if __name__ == "__main__":
    main()
