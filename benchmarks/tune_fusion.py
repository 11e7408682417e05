"""Fit the fusion weights on *training* questions only (BioASQ 7B), offline.

    python benchmarks/tune_fusion.py --dataset ../shared/data/eval/bioasq \\
        --questions ../shared/data/eval/bioasq/Task7BGoldenEnriched --workspace /tmp/qa-bioasq

Every candidate source (lexical, dense, graph, and the tag tree's descent)
ranks each question's chunks once; a grid of weights and RRF constants is then
scored on those rankings (recall@10 of the fused list, MRR as the tie-break),
for hybrid (no tree) and U-Retrieval (with the tree). Prints the best settings
and the defaults' figures; report the held-out years (8B, 9B) with
``bench_qa.py --questions`` and the chosen weights, never these.
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import sys
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")

GRID = {"lexical": (0.0, 0.5, 1.0, 1.5, 2.0), "dense": (0.5, 1.0, 1.5, 2.0),
        "graph": (0.0, 0.25, 0.5, 1.0), "tree": (0.0, 0.25, 0.5, 1.0, 1.5)}
KS = (10, 30, 60)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--dataset", type=Path, required=True)
    parser.add_argument("--questions", type=Path, required=True)
    parser.add_argument("--workspace", type=Path, required=True)
    parser.add_argument("--limit", type=int, default=0)
    args = parser.parse_args()
    if not args.dataset.exists():
        sys.exit(f"skip: {args.dataset} not found (the ../shared checkout is absent)")

    from medkg.evaluation.qa import chunk_keys, qa_workspace, read_bioasq, score_ranking
    from medkg.retrieval.fusion import rrf
    from medkg.retrieval.uretrieval import plan

    data = read_bioasq(args.dataset)
    items = read_bioasq(args.questions).items
    items = items[: args.limit] if args.limit else items
    with qa_workspace(args.workspace, data, print) as ws:
        keys = chunk_keys(ws)
        retriever = ws.retriever()
        tree = ws.parts.tree()
        if tree is None:
            sys.exit("the workspace has no tag tree: run `medkg build`")
        config = ws.settings.retrieval
        cached = []
        for n, item in enumerate(items):
            p = plan(item.question, retriever, tree, ws.embedder, config)
            cached.append((item, {**p.prepared.sources, "tree": p.prior[: config.candidates]}))
            if n % 100 == 0:
                print(f"{n}/{len(items)} questions", flush=True)

    def score(weights: dict[str, float], k: int) -> tuple[float, float]:
        recall = mrr = 0.0
        for item, sources in cached:
            fused = rrf(sources, weights, k=k, limit=100)
            ranked = [key for c, _ in fused if (key := keys.get(c)) is not None]
            r, rr, _nd = score_ranking(ranked, item.gold)
            recall += r
            mrr += rr
        return recall / len(cached), mrr / len(cached)

    for name in ("lexical", "dense", "graph", "tree"):
        r, rr = score({name: 1.0}, 60)
        print(f"{name} alone: recall@10 {r:.3f}, MRR {rr:.3f}")
    best: dict[str, tuple[tuple[float, float], dict[str, float], int]] = {}
    for values in itertools.product(*GRID.values()):
        weights = dict(zip(GRID, values, strict=True))
        for k in KS:
            result = score(weights, k)
            mode = "u-retrieval" if weights["tree"] > 0 else "hybrid"
            if mode not in best or result > best[mode][0]:
                best[mode] = (result, weights, k)
    defaults = {"lexical": 1.0, "dense": 1.0, "graph": 1.0}
    for mode, with_tree in (("hybrid", defaults), ("u-retrieval", {**defaults, "tree": 1.0})):
        r, rr = score(with_tree, 60)
        print(f"{mode} with the default weights (k 60): recall@10 {r:.3f}, MRR {rr:.3f}")
    for mode, ((r, rr), weights, k) in best.items():
        print(f"{mode} best on {args.questions.name}: recall@10 {r:.3f}, MRR {rr:.3f} "
              f"with {json.dumps(weights)}, k {k}")
    # The settings hold one set of weights: U-Retrieval is hybrid plus the tree's
    # vote, so its tree weight is fitted on top of hybrid's best.
    (_h, hybrid_weights, hybrid_k) = best["hybrid"]
    on_top = max(((score({**hybrid_weights, "tree": t}, hybrid_k), t) for t in GRID["tree"]),
                 key=lambda x: x[0])
    (r, rr), tree_weight = on_top
    chosen = {**hybrid_weights, "tree": tree_weight}
    print(f"u-retrieval on hybrid's best weights: recall@10 {r:.3f}, MRR {rr:.3f} with tree "
          f"{tree_weight}")
    print("settings: [retrieval] rrf_k = " f"{hybrid_k}; fusion_weights = {json.dumps(chosen)}")


if __name__ == "__main__":
    main()
