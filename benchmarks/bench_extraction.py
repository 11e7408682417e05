"""Builtin extraction throughput and memory on PubTator abstracts, arms side by side:
dictionary matching only (the baseline), dictionary + the bundled NER models +
lexicon, and that + the bundled relation model.

    python benchmarks/bench_extraction.py [--gold FILE] [--limit N]
    python benchmarks/bench_extraction.py --baseline-src /tmp/medkg-before

``--baseline-src`` names a checkout of an earlier medkg: its "relations" arm runs
in the same invocation (``PYTHONPATH`` set to that checkout), so before and after
are measured on the same machine minutes apart.

Each arm runs in its own subprocess with the default vocabulary (the one
installed packages ship), so peak memory is its own; the vocabulary load is
timed apart from extraction. Defaults to the BC5CDR development set in
../shared/data (the benchmark says so and stops when it is absent).
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
BC5CDR_DEV = REPO.parent / "shared" / "data" / "eval" / "bc5cdr" / "CDR_DevelopmentSet.PubTator.txt"


def run_arm(arm: str, gold: Path, limit: int) -> dict[str, float]:
    from medkg.evaluation.pubtator import read_pubtator
    from medkg.extraction.extract import extract
    from medkg.extraction.lexicon import resolve_lexicon
    from medkg.extraction.nlp import build_pipeline, resolve_ner_models
    from medkg.model import Chunk, Document, Layer
    from medkg.ontology.index import ConceptIndex
    from medkg.ontology.loaders import load_default

    t0 = time.perf_counter()
    index = ConceptIndex(load_default().concepts)
    nlp = (build_pipeline(index, 3, resolve_ner_models("bundled"), resolve_lexicon("bundled"))
           if arm != "dictionary" else build_pipeline(index, 3))
    relate = None
    if arm == "relations":
        from medkg.extraction.relation_model import resolve_relation_model

        model = resolve_relation_model("bundled", index.ancestors)
        relate = model.relations if model is not None else None
    t1 = time.perf_counter()
    docs = list(read_pubtator(gold))[:limit]
    chunks = []
    for pub in docs:
        doc = Document.create(layer=Layer.LITERATURE, title=pub.title, source=pub.pmid,
                              media_type="text/plain", text=pub.text)
        chunks.append(Chunk.create(doc, 0, 0, len(pub.text)))
    t2 = time.perf_counter()
    mentions = relations = 0
    for ex in extract(chunks, nlp, relate=relate):
        mentions += len(ex.mentions)
        relations += len(ex.relations)
    t3 = time.perf_counter()
    return {
        "abstracts": len(docs),
        "setup_s": t1 - t0,
        "extract_s": t3 - t2,
        "abstracts_per_s": len(docs) / (t3 - t2),
        "mentions": mentions,
        "relations": relations,
        "peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--gold", type=Path, default=BC5CDR_DEV)
    parser.add_argument("--limit", type=int, default=500)
    parser.add_argument("--baseline-src", type=Path,
                        help="a checkout of an earlier medkg to run the relations arm with too")
    parser.add_argument("--arm", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if not args.gold.exists():
        sys.exit(f"skip: {args.gold} not found (the ../shared checkout is absent)")
    if args.arm:
        print(json.dumps(run_arm(args.arm, args.gold, args.limit)))
        return
    runs = [(arm, arm, None) for arm in ("dictionary", "ner", "relations")]
    if args.baseline_src:
        runs.append(("relations (before)", "relations", args.baseline_src))
    results = {}
    for label, arm, src in runs:
        env = dict(os.environ, HF_HUB_OFFLINE="1")
        if src is not None:
            env["PYTHONPATH"] = str(src.resolve())
        out = subprocess.run([sys.executable, __file__, "--arm", arm, "--gold", str(args.gold),
                              "--limit", str(args.limit)], check=True, capture_output=True,
                             text=True, env=env)
        results[label] = json.loads(out.stdout.strip().splitlines()[-1])
    print(f"builtin extraction on {args.gold.name} (default vocabulary)")
    print(f"{'metric':<18}" + "".join(f"{arm:>20}" for arm in results))
    for key in results["ner"]:
        print(f"{key:<18}" + "".join(f"{results[arm][key]:>20.2f}" for arm in results))


if __name__ == "__main__":
    main()
