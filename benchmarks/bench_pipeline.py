"""Pipeline speed and memory: ingest, build and ask, side by side for two chunkers.

Each arm runs in its own subprocess (so peak memory is its own) on the same
corpus in the same run, so the comparison holds on a noisy machine:

    python benchmarks/bench_pipeline.py                 # the bundled examples
    python benchmarks/bench_pipeline.py --openstax 50   # + 50 OpenStax modules (../shared)

The semantic chunker (the default) embeds every sentence; the sentence-window
chunker is the baseline that does not.
"""

from __future__ import annotations

import argparse
import json
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
OPENSTAX = (REPO.parent / "shared" / "data" / "corpora" / "openstax_nursing"
            / "modules_plaintext.jsonl")
QUESTIONS = [
    "What is the first-line treatment for type 2 diabetes, and what are its risks?",
    "What can cause a dry cough?",
    "How is atrial fibrillation confirmed and how is stroke prevented?",
    "What are the symptoms of heart failure?",
    "Which drug is used to treat community-acquired pneumonia?",
]


def run_arm(chunker: str, literature: Path, workdir: Path) -> dict[str, float]:
    """One arm, in this process: returns timings and peak RSS."""
    import os

    os.environ["MEDKG_INGEST__CHUNKER"] = chunker
    from medkg.model import Layer
    from medkg.workspace import Workspace

    ws = Workspace.create(workdir / f"ws-{chunker}")
    t0 = time.perf_counter()
    ws.load_vocabulary(REPO / "examples" / "vocabulary" / "medkg-seed.obo")
    _ = ws.embedder.dim  # load the model outside the timed stages
    t1 = time.perf_counter()
    lit = ws.ingest([literature], Layer.LITERATURE)
    user = ws.ingest([REPO / "examples" / "user"], Layer.USER)
    t2 = time.perf_counter()
    built = ws.build()
    t3 = time.perf_counter()
    latencies = []
    for q in QUESTIONS:
        s = time.perf_counter()
        ws.ask(q)
        latencies.append(time.perf_counter() - s)
    counts = ws.store.counts()
    ws.close()
    documents = lit.documents + user.documents
    return {
        "documents": documents,
        "chunks": lit.chunks + user.chunks,
        "entities": built.entities,
        "triples": built.triples,
        "quads": counts.quads,
        "vocab_s": t1 - t0,
        "ingest_s": t2 - t1,
        "ingest_docs_per_s": documents / (t2 - t1),
        "build_s": t3 - t2,
        "ask_p50_ms": 1000 * statistics.median(latencies),
        "ask_max_ms": 1000 * max(latencies),
        "peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
    }


def openstax_corpus(n: int, folder: Path) -> Path:
    if not OPENSTAX.exists():
        sys.exit(f"skip: {OPENSTAX} not found (the ../shared checkout is absent)")
    out = folder / "openstax"
    out.mkdir()
    lines = [json.loads(x) for x in OPENSTAX.read_text(encoding="utf-8").splitlines()]
    lines = [r for r in lines if r.get("book") == "pharmacology" and len(r["text"]) > 2000][:n]
    with (out / "modules.jsonl").open("w", encoding="utf-8") as f:
        for r in lines:
            f.write(json.dumps({"id": r["module"], "title": r["title"], "text": r["text"]}) + "\n")
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--openstax", type=int, default=0,
                        help="use N OpenStax pharmacology modules as the literature layer")
    parser.add_argument("--arm", help=argparse.SUPPRESS)
    parser.add_argument("--literature", help=argparse.SUPPRESS)
    parser.add_argument("--workdir", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.arm:  # child process
        result = run_arm(args.arm, Path(args.literature), Path(args.workdir))
        print(json.dumps(result))
        return
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        literature = (openstax_corpus(args.openstax, folder) if args.openstax
                      else REPO / "examples" / "literature")
        results = {}
        for arm in ("sentences", "semantic"):
            out = subprocess.run(
                [sys.executable, __file__, "--arm", arm, "--literature", str(literature),
                 "--workdir", str(folder)],
                check=True, capture_output=True, text=True,
            )
            results[arm] = json.loads(out.stdout.strip().splitlines()[-1])
    keys = list(results["semantic"])
    print(f"corpus: {'OpenStax x ' + str(args.openstax) if args.openstax else 'examples/'} "
          "literature + examples/user")
    print(f"{'metric':<20}" + "".join(f"{arm:>14}" for arm in results))
    for key in keys:
        print(f"{key:<20}" + "".join(f"{results[arm][key]:>14.2f}" for arm in results))


if __name__ == "__main__":
    main()
