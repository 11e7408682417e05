"""Which BM25 for the lexical index: SQLite FTS5 (the one medkg uses) against
``bm25s``, on the BioASQ dev pool, with the same biomedical tokenizer.

    python benchmarks/bench_lexical.py --dataset ../shared/data/eval/bioasq

Each snippet is one document; every question is a query. Prints index build
time, query latency (p50/p95) and recall@10 / MRR of the snippet ranking, both
libraries in one run, queries interleaved.

Then the index as ingest writes it: one transaction per snippet, the seconds
per block of ``--block`` upserts as the index grows, then as many deletes
(a cost that grows with the index is a scan; it should stay flat), beside
one batch load of the same snippets.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--dataset", type=Path, required=True)
    parser.add_argument("--limit", type=int, default=0)
    parser.add_argument("--block", type=int, default=2000,
                        help="upserts per row of the incremental table")
    args = parser.parse_args()
    if not args.dataset.exists():
        sys.exit(f"skip: {args.dataset} not found (the ../shared checkout is absent)")
    try:
        import bm25s
    except ImportError:
        sys.exit("skip: bm25s is not installed (pip install bm25s)")
    from medkg.evaluation.qa import read_bioasq, score_ranking
    from medkg.retrieval.lexical import LexicalIndex, tokens

    data = read_bioasq(args.dataset)
    items = data.items[: args.limit] if args.limit else data.items
    keys = [d.key for d in data.documents]
    texts = [d.text for d in data.documents]

    with tempfile.TemporaryDirectory() as tmp:
        t = time.perf_counter()
        fts = LexicalIndex(Path(tmp) / "lexical.sqlite")
        fts.upsert(zip(keys, texts, strict=True))
        fts_build = time.perf_counter() - t

        t = time.perf_counter()
        retriever = bm25s.BM25()
        retriever.index([tokens(x) for x in texts], show_progress=False)
        bm_build = time.perf_counter() - t

        def bm_search(question: str, k: int) -> list[str]:
            query = [w for w in tokens(question) if w in retriever.vocab_dict]
            if not query:
                return []
            found, _scores = retriever.retrieve([query], k=k, show_progress=False)
            return [keys[int(i)] for i in found[0]]

        searches = {"sqlite fts5": lambda q: [c for c, _ in fts.search(q, 100)],
                    "bm25s": lambda q: bm_search(q, 100)}
        times: dict[str, list[float]] = {name: [] for name in searches}
        scores: dict[str, list[tuple[float, float, float]]] = {name: [] for name in searches}
        for item in items:
            for name, search in searches.items():
                t = time.perf_counter()
                ranked = search(item.question)
                times[name].append((time.perf_counter() - t) * 1000)
                scores[name].append(score_ranking(ranked, item.gold))
        fts.close()
    builds = {"sqlite fts5": fts_build, "bm25s": bm_build}
    print(f"BioASQ {args.dataset.name}: {len(items)} questions, {len(texts)} snippets")
    print("| library | build s | p50 ms | p95 ms | recall@10 | MRR |")
    print("|---|---|---|---|---|---|")
    for name in searches:
        lat = sorted(times[name])
        n = len(scores[name])
        print(f"| {name} | {builds[name]:.1f} | {statistics.median(lat):.1f} | "
              f"{lat[int(0.95 * (len(lat) - 1))]:.1f} | "
              f"{sum(s[0] for s in scores[name]) / n:.3f} | "
              f"{sum(s[1] for s in scores[name]) / n:.3f} |")
    incremental(keys, texts, args.block)


def incremental(keys: list[str], texts: list[str], block: int) -> None:
    """Seconds per ``block`` single-snippet upserts, then deletes, as the index grows."""
    from medkg.retrieval.lexical import LexicalIndex

    with tempfile.TemporaryDirectory() as tmp:
        index = LexicalIndex(Path(tmp) / "one-by-one.sqlite")
        upserts: list[float] = []
        for start in range(0, len(keys), block):
            t = time.perf_counter()
            for key, text in zip(keys[start : start + block], texts[start : start + block],
                                 strict=True):
                index.upsert([(key, text)])
            upserts.append(time.perf_counter() - t)
        deletes: list[float] = []
        for start in range(0, len(keys), block):
            t = time.perf_counter()
            for key in keys[start : start + block]:
                index.delete([key])
            deletes.append(time.perf_counter() - t)
        index.close()
        t = time.perf_counter()
        batch = LexicalIndex(Path(tmp) / "batch.sqlite")
        batch.upsert(zip(keys, texts, strict=True))
        batch.close()
        batch_s = time.perf_counter() - t
    print(f"\nIncremental: one transaction per snippet, seconds per {block} "
          f"(index size at the start of the block); one batch load of all: {batch_s:.1f} s")
    print("| index size | upsert s | delete s (size before) |")
    print("|---|---|---|")
    for n, (up, down) in enumerate(zip(upserts, deletes, strict=True)):
        print(f"| {n * block} | {up:.2f} | {down:.2f} ({len(keys) - n * block}) |")


if __name__ == "__main__":
    main()
