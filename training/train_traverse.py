"""Fit the traverse mode's builtin guide (medkg/models/traverse/guide.json) and the
traversal's fusion weight, on the training splits' two-hop questions only.

    python benchmarks/bench_multihop.py --split train --workspace /tmp/mh-train --build-only
    python training/train_traverse.py --workspace /tmp/mh-train

Questions: both two-hop sets of the training splits of BioRED and BC5CDR
(``medkg.evaluation.multihop`` templates, ``medkg.evaluation.chains``), so
neither set's wording or relation types alone shapes the guide.

1. Exploration: each question is traversed with a wide beam, every candidate
   triple of every hop scored by a plain explorer (similarity + asked-for
   predicate + answer type, no fitted weight) and its features
   (``traverse.features``) recorded.
2. Labels, from the gold annotations only: ``keep`` when the triple joins two
   concepts of the question's gold chain (start-bridge, bridge-answer, by
   concept id or a gold surface form of the entity's name); ``evidence``
   when one of its evidence chunks holds a gold mention of an answer in a
   document stating the answer's relation (what recall@k counts).
3. Two logistic regressions (scikit-learn, L2, fixed seed); a fifth of the
   questions, chosen by a hash of the question's id, is held out and its
   average precision printed beside the explorer's.
4. The pruning threshold ``retrieval.traverse_min_keep``: the keep score 95 %
   of the on-chain triples reach.
5. The fusion weight of the traversal's ranking: with the fitted guide, every
   question is prepared once and its sources fused with each weight of a grid;
   the weight with the best mean recall@10 over the two sets is kept (the
   other sources' weights are BioASQ's, fitted elsewhere).

The threshold and the weight are written beside the models; ``medkg/config.py``'s
defaults (``traverse_min_keep``, ``fusion_weights.traverse``) are set to them.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import sys
from collections.abc import Sequence
from pathlib import Path

import numpy as np

os.environ.setdefault("HF_HUB_OFFLINE", "1")

from medkg.evaluation.multihop import GoldIndex, HopQuestion
from medkg.linking.embeddings import Embedder, Matrix
from medkg.model import EntityBrief
from medkg.retrieval.guide import FEATURES, BuiltinGuide, GuideModel, Logistic, features
from medkg.retrieval.traverse import Candidate, TraversalGraph

REPO = Path(__file__).resolve().parents[1]
EVAL = REPO.parent / "shared" / "data" / "eval"
TRAIN = (EVAL / "biored" / "Train.PubTator", EVAL / "bc5cdr" / "CDR_TrainingSet.PubTator.txt")
GRID = (0.5, 1.0, 2.0, 3.0, 4.0, 6.0, 8.0)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--workspace", type=Path, required=True,
                        help="the training split's workspace (bench_multihop.py --split "
                        "train --build-only)")
    parser.add_argument("--out", type=Path,
                        default=REPO / "medkg" / "models" / "traverse" / "guide.json")
    parser.add_argument("--limit", type=int, default=0, help="questions per set (a trial)")
    args = parser.parse_args()
    if not all(f.exists() for f in TRAIN):
        sys.exit(f"skip: {TRAIN[0]} not found (the ../shared checkout is absent)")

    from sklearn.linear_model import LogisticRegression
    from sklearn.metrics import average_precision_score

    from medkg.evaluation.chains import generate_chains
    from medkg.evaluation.multihop import found_at, generate, gold_index, read_corpora
    from medkg.model import Layer
    from medkg.retrieval.candidates import Indexes
    from medkg.retrieval.fusion import rrf
    from medkg.retrieval.local import LocalRetriever
    from medkg.workspace import Workspace

    documents = read_corpora(TRAIN)
    gold = gold_index(documents)
    sets = {"templates": [q for q in generate(documents) if q.kind == "2-hop"],
            "chains": generate_chains(documents)}
    if args.limit:
        sets = {k: v[:: max(1, len(v) // args.limit)][: args.limit] for k, v in sets.items()}
    ws = Workspace.open(args.workspace, access="read")
    parts = ws.parts
    spans: dict[str, tuple[str, int, int]] = {}
    for doc_id in ws.store.document_ids(Layer.LITERATURE):
        pmid = ws.store.document(doc_id).source.rsplit("#", 1)[-1]
        for chunk in ws.store.chunks(doc_id):
            spans[chunk.id] = (pmid, chunk.start, chunk.end)

    def retriever(guide: BuiltinGuide | Explorer, **settings: object) -> LocalRetriever:
        config = parts.settings.retrieval.model_copy(update=settings)
        return LocalRetriever(parts.store, parts.embedder, Indexes(
            chunks=parts.index("chunks"), entities=parts.index("entities"),
            lexical=parts.lexical), parts.nlp(), config, guide,
            parts.concept_index(), parts.settings.facts)

    plain = Logistic(0.0, tuple(float(w) for w in _EXPLORER))
    explorer = Explorer(parts.embedder, BuiltinGuide(parts.embedder, GuideModel(plain, plain)))
    wide = retriever(explorer, traverse_beam=48, traverse_min_keep=0.0)
    rows: list[Matrix] = []
    keep: list[int] = []
    evidence: list[int] = []
    held: list[bool] = []
    for name, questions in sets.items():
        for n, q in enumerate(questions):
            explorer.seen.clear()
            wide.prepare(q.question, mode="traverse")
            chain_ends = _chain(gold, q)
            for x, cand, entities in explorer.seen:
                ends = [_concepts(entities.get(e), chain_ends)
                        for e in (cand.triple.head, cand.triple.tail)]
                rows.append(x)
                keep.append(int(_on_chain(ends, q)))
                chunk_ids = [ev.chunk_id for ev in cand.triple.evidence]
                evidence.append(int(any(found_at(a, chunk_ids, spans.get, len(chunk_ids))
                                        for a in q.answers)))
                held.append(_held_out(q.id))
            if n % 50 == 0:
                print(f"{name}: {n}/{len(questions)} questions, {len(rows)} candidates",
                      flush=True)
    x = np.asarray(rows, dtype=np.float32)
    held_out = np.asarray(held)
    fitted: dict[str, Logistic] = {}
    report: dict[str, object] = {}
    for label, y in (("keep", np.asarray(keep)), ("evidence", np.asarray(evidence))):
        model = LogisticRegression(C=1.0, max_iter=2000, random_state=0)
        model.fit(x[~held_out], y[~held_out])
        fitted[label] = Logistic(float(model.intercept_[0]),
                                 tuple(round(float(w), 4) for w in model.coef_[0]))
        ap = average_precision_score(y[held_out], model.predict_proba(x[held_out])[:, 1])
        base = average_precision_score(y[held_out], x[held_out] @ _EXPLORER)
        report[label] = {"positives": int(y.sum()), "candidates": len(y),
                         "held_out_average_precision": round(float(ap), 4),
                         "explorer_average_precision": round(float(base), 4)}
        print(f"{label}: {int(y.sum())} positives of {len(y)}; held-out average precision "
              f"{ap:.3f} (explorer {base:.3f})", flush=True)
    guide = BuiltinGuide(parts.embedder, model=GuideModel(fitted["keep"], fitted["evidence"]))
    # the pruning threshold: 95 % of the triples on gold chains score at least this
    on_chain = np.asarray(fitted["keep"](x[np.asarray(keep) == 1]))
    min_score = round(float(np.quantile(on_chain, 0.05)), 4) if len(on_chain) else 0.0
    print(f"retrieval.traverse_min_keep: {min_score} (keeps 95 % of the on-chain triples)")
    fitted_retriever = retriever(guide, traverse_min_keep=min_score)
    weights = parts.settings.retrieval.fusion_weights.by_source()
    recall: dict[float, list[float]] = {w: [] for w in GRID}
    for questions in sets.values():
        hits = {w: 0 for w in GRID}
        total = 0
        for q in questions:
            prepared = fitted_retriever.prepare(q.question, mode="traverse")
            for w in GRID:
                ranking = [c for c, _ in rrf(prepared.sources, {**weights, "traverse": w},
                                             k=parts.settings.retrieval.rrf_k, limit=10)]
                hits[w] += sum(found_at(a, ranking, spans.get, 10) for a in q.answers)
            total += len(q.answers)
        for w in GRID:
            recall[w].append(hits[w] / max(1, total))
    best = max(GRID, key=lambda w: (round(float(np.mean(recall[w])), 4), -w))
    print("traverse fusion weight: mean recall@10 (templates, chains) on the training split")
    for w in GRID:
        print(f"  {w:>4}: {np.mean(recall[w]):.3f} ({', '.join(f'{r:.3f}' for r in recall[w])})"
              + ("  <- kept" if w == best else ""))
    ws.close()
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps({
        "features": list(FEATURES),
        "keep": {"bias": round(fitted["keep"].bias, 4), "weights": list(fitted["keep"].weights)},
        "evidence": {"bias": round(fitted["evidence"].bias, 4),
                     "weights": list(fitted["evidence"].weights)},
        "fusion_weight": best,
        "min_score": min_score,
        "fitted_on": {name: len(qs) for name, qs in sets.items()},
        "report": report,
        "command": "python training/train_traverse.py --workspace <the training split's "
                   "workspace>",
    }, indent=1) + "\n", encoding="utf-8")
    print(f"wrote {args.out}")


# The explorer: similarity + asked-for predicate + answer type, unweighted, so the
# exploration owes nothing to a fitted model.
_EXPLORER = np.array([1.0 if f in ("similarity", "asked", "answer_type") else 0.0
                      for f in FEATURES], dtype=np.float32)


class Explorer:
    """The explorer guide, recording each candidate's features as it scores them."""

    name = "explorer"

    def __init__(self, embedder: Embedder, builtin: BuiltinGuide) -> None:
        self.embedder = embedder
        self.builtin = builtin
        self.seen: list[tuple[Matrix, Candidate, dict[str, EntityBrief]]] = []

    def score(self, question: str, qvec: Matrix, candidates: Sequence[Candidate],
              entities: dict[str, EntityBrief]) -> list[float]:
        x = features(question, qvec, candidates, entities, self.embedder)
        self.seen += [(row, c, entities) for row, c in zip(x, candidates, strict=True)]
        return [float(v) for v in x @ _EXPLORER] if len(x) else []

    def evidence(self, question: str, qvec: Matrix, candidates: Sequence[Candidate],
                 entities: dict[str, EntityBrief]) -> list[float]:
        return self.builtin.evidence(question, qvec, candidates, entities)

    def clues(self, question: str, qvec: Matrix, candidates: Sequence[EntityBrief],
              graph: TraversalGraph, n: int) -> list[str]:
        return self.builtin.clues(question, qvec, candidates, graph, n)


def _held_out(question_id: str) -> bool:
    return int(hashlib.sha256(question_id.encode()).hexdigest()[:8], 16) % 5 == 0


def _chain(gold: GoldIndex, q: HopQuestion) -> dict[str, set[str]]:
    """The gold chain's concepts and their surface forms: start, bridges, answers."""
    concepts = [q.start, *q.bridges, *(a.concept for a in q.answers)]
    return {c: set(gold.surfaces(c)) for c in concepts}


def _concepts(entity: EntityBrief | None, chain: dict[str, set[str]]) -> set[str]:
    """The chain's concepts an entity of the graph is: by concept id (MeSH), or by a
    gold surface form among its name and mentions."""
    if entity is None:
        return set()
    ids = {c.split(":", 1)[-1] for c in entity.concept_ids}
    names = {entity.name.lower(), *(s.lower() for s in entity.surface)}
    return {c for c, surfaces in chain.items() if c in ids or surfaces & names}


def _on_chain(ends: Sequence[set[str]], q: HopQuestion) -> bool:
    """Whether a triple joins the start or a bridge to a bridge or an answer."""
    start = {q.start}
    bridges = set(q.bridges)
    answers = {a.concept for a in q.answers}
    a, b = ends
    return any(bool(x & (start | bridges) and y & (bridges | answers) and (x | y) - start)
               for x, y in ((a, b), (b, a)))


if __name__ == "__main__":
    main()
