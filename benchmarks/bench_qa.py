"""U-Retrieval against its baselines on a QA dataset, side by side in one run.

    python benchmarks/bench_qa.py --dataset ../shared/data/eval/pubmedqa/pqal_dev.json \\
        --format pubmedqa --workspace /tmp/qa-pubmedqa
    python benchmarks/bench_qa.py --dataset ../shared/data/eval/bioasq --format bioasq \\
        --workspace /tmp/qa-bioasq

Builds (or reuses) one workspace from the dataset's texts exactly as
``medkg eval qa`` does, then asks every question (or the first ``--limit``) in
each mode, the modes interleaved question by question so a noisy machine
slows them alike, and prints one table: recall@10, MRR, nDCG@10, yes/no
accuracy and latency per mode.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import time
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
MODES = ("u-retrieval", "local", "vector")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--dataset", type=Path, required=True)
    parser.add_argument("--format", choices=("bioasq", "pubmedqa"), required=True)
    parser.add_argument("--workspace", type=Path, required=True)
    parser.add_argument("--limit", type=int, default=0)
    parser.add_argument("--seed-cache", type=Path, help="an embeddings.sqlite to start a "
                        "new workspace's embedding cache from (it is keyed by model and "
                        "text, so any workspace's cache serves)")
    args = parser.parse_args()
    if not args.dataset.exists():
        sys.exit(f"skip: {args.dataset} not found (the ../shared checkout is absent)")

    from medkg.evaluation.qa import READERS, chunk_keys, qa_workspace, score_answers
    from medkg.retrieval.answer import Answer
    from medkg.workspace import Workspace

    if args.seed_cache and not args.workspace.exists():
        Workspace.create(args.workspace).close()
        (args.workspace / "cache").mkdir(exist_ok=True)
        shutil.copyfile(args.seed_cache, args.workspace / "cache" / "embeddings.sqlite")
    data = READERS[args.format](args.dataset)
    items = data.items[: args.limit] if args.limit else data.items
    start = time.perf_counter()
    with qa_workspace(args.workspace, data, print) as ws:
        counts = dict(ws.store.counts().rows())
        print(f"workspace ready in {time.perf_counter() - start:.0f} s: {counts}")
        keys = chunk_keys(ws)
        retriever = ws.retriever()
        ws.ask(items[0].question, retriever=retriever)  # load models before timing
        answers: dict[str, dict[str, Answer]] = {m: {} for m in MODES}
        times: dict[str, dict[str, float]] = {m: {} for m in MODES}
        for n, item in enumerate(items):
            for mode in MODES:
                t = time.perf_counter()
                answers[mode][item.id] = ws.ask(item.question, mode=mode, retriever=retriever)
                times[mode][item.id] = (time.perf_counter() - t) * 1000
            if n % 50 == 0:
                print(f"{n}/{len(items)} questions", flush=True)
        reports = {m: score_answers(items, [answers[m][i.id] for i in items],
                                    [times[m][i.id] for i in items], keys.get, m,
                                    len(data.documents), len(keys)) for m in MODES}
    print(f"\n{args.format} {args.dataset.name}: {len(items)} questions, "
          f"{len(data.documents)} documents, {len(keys)} chunks")
    print("| mode | recall@10 | MRR | nDCG@10 | yes/no acc | p50 ms | p95 ms |")
    print("|---|---|---|---|---|---|---|")
    for mode, r in reports.items():
        acc = r.answers["yesno_accuracy"]
        print(f"| {mode} | {r.retrieval['recall@10']:.3f} | {r.retrieval['mrr']:.3f} | "
              f"{r.retrieval['ndcg@10']:.3f} | {'n/a' if acc is None else f'{acc:.3f}'} | "
              f"{r.latency_ms['p50']} | {r.latency_ms['p95']} |")
    (args.workspace / "bench_qa.json").write_text(
        json.dumps({m: r.model_dump() for m, r in reports.items()}, indent=1),
        encoding="utf-8")


if __name__ == "__main__":
    main()
