"""A vector index filled the way ingest fills it: one document's chunk vectors
at a time, so the cost of each upsert as the index grows is what a large build
pays (a build of N documents upserts N times).

    python benchmarks/bench_index_growth.py [--docs 10000 30000] [--chunks 2]
        [--baseline-src OLD_CHECKOUT]

Each arm runs in its own process (its own peak RSS) over the same random
vectors; no model and no ../shared data are needed.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def fill(docs: int, chunks: int) -> dict[str, float]:
    import resource

    import numpy as np

    from medkg.linking.vectors import VectorIndex

    index = VectorIndex(384)
    rng = np.random.default_rng(0)
    start, n = time.perf_counter(), 0
    for _ in range(docs):
        vectors = rng.standard_normal((chunks, 384)).astype(np.float32)
        index.upsert([f"chunk-{n + i}" for i in range(chunks)], vectors)
        n += chunks
    return {"seconds": time.perf_counter() - start, "rows": n,
            "peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--docs", type=int, nargs="+", default=[10_000, 30_000])
    parser.add_argument("--chunks", type=int, default=2, help="chunks a document")
    parser.add_argument("--baseline-src", type=Path, help="another checkout of medkg")
    parser.add_argument("--arm", nargs=2, type=int, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.arm:
        print(json.dumps(fill(*args.arm)))
        return
    arms = {"now": REPO, **({"before": args.baseline_src.resolve()} if args.baseline_src else {})}
    print(f"| documents ({args.chunks} chunks each) | arm | seconds | peak RSS MB |")
    print("|---:|---|---:|---:|")
    for docs in args.docs:
        for name, src in arms.items():
            done = subprocess.run([sys.executable, __file__, "--arm", str(docs), str(args.chunks)],
                                  env={**os.environ, "PYTHONPATH": str(src)}, cwd=src,
                                  capture_output=True, text=True, check=True)
            r = json.loads(done.stdout.strip().splitlines()[-1])
            print(f"| {docs:,} | {name} | {r['seconds']:.2f} | {r['peak_rss_mb']:.0f} |",
                  flush=True)


if __name__ == "__main__":
    main()
