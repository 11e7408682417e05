"""The SAC-KG loop scored against gold relations, three arms in one run.

    python benchmarks/bench_loop.py --out /tmp/loop [--docs 100] [--levels 2]

For each gold file (default: the BC5CDR and BioRED development sets in
../shared/data; the benchmark says so and stops when they are absent), the first
``--docs`` abstracts are ingested as literature into one workspace with the
default vocabulary and the bundled relation model; extraction runs once
(``build(grow=False)``); then the workspace is copied for each arm and the loop
grows the graph from the literature layer's entities ``--levels`` deep:

- ``on``: verifier (RuleHub, corrections) and pruner on;
- ``verify``: verifier on, pruner off;
- ``off``: every generated triple kept, every new entity grown.

Scoring is the document-level pair scoring of ``medkg eval extraction``: a kept
triple (level >= 1) is right when its two entities' concepts, mapped to the gold
id space, form a gold pair of a document its evidence comes from. Only the
predicates that carry the gold file's meaning are scored (BC5CDR CID: causes,
has_adverse_effect; BioRED: every relation predicate); the per-predicate table
shows every predicate, so an indication restated as ``treats`` is seen leaving the
scored set. Recall is over the gold pairs of the ingested documents.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import time
from collections import Counter
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
REPO = Path(__file__).resolve().parents[1]
EVAL = REPO.parent / "shared" / "data" / "eval"
GOLD = (EVAL / "bc5cdr" / "CDR_DevelopmentSet.PubTator.txt", EVAL / "biored" / "Dev.PubTator")
ARMS = {"on": {"verify": True, "prune": True}, "verify": {"verify": True, "prune": False},
        "off": {"verify": False, "prune": False}}


def _prepare(base: Path, gold: Path, docs: int, levels: int, seed_cache: Path | None) -> None:
    from medkg.evaluation.pubtator import read_pubtator
    from medkg.model import Layer
    from medkg.workspace import Workspace

    pubs = list(read_pubtator(gold))[:docs]
    source = base.parent / f"{gold.stem}.jsonl"
    source.write_text("".join(json.dumps({"id": p.pmid, "title": p.title, "text": p.text}) + "\n"
                              for p in pubs), encoding="utf-8")
    with Workspace.create(base) as ws:
        if seed_cache is not None and seed_cache.exists():
            # The vocabulary's concept vectors, made once (keyed by model and text).
            (base / "cache").mkdir(exist_ok=True)
            shutil.copyfile(seed_cache, base / "cache" / "embeddings.sqlite")
        ws.load_vocabulary(None)
        ws.ingest([source], Layer.LITERATURE)
        ws.settings.construction.levels = levels
        ws.settings.construction.seeds = "literature"
        ws.settings.extraction.relation_model = "bundled"
        ws.save_settings()
        ws.build(grow=False)


def _grow(arm: Path, flags: dict[str, bool]) -> float:
    from medkg.workspace import Workspace

    with Workspace.open(arm) as ws:
        ws.settings.construction.verify = flags["verify"]
        ws.settings.construction.prune = flags["prune"]
        ws.save_settings()
        start = time.perf_counter()
        ws.grow()
        return time.perf_counter() - start


def _score(arm: Path, gold: Path) -> dict[str, object]:
    from medkg.evaluation.extraction import _gold_ids, _scored_predicates
    from medkg.evaluation.pubtator import read_pubtator
    from medkg.model import Layer
    from medkg.workspace import Workspace

    pubs = {p.pmid: p for p in read_pubtator(gold)}
    with Workspace.open(arm) as ws:
        index = ws.concept_index()
        store = ws.store
        pmid_of = {doc_id: store.document(doc_id).source.rsplit("#", 1)[-1]
                   for doc_id in store.document_ids(Layer.LITERATURE)}
        ingested = [pubs[p] for p in pmid_of.values() if p in pubs]
        gold_pairs = {(p.pmid, frozenset((r.first, r.second))) for p in ingested
                      for r in p.relations}
        scored = _scored_predicates({r.type for p in ingested for r in p.relations})
        entities = {e.id: e for e in store.entities(Layer.LITERATURE)}
        kept = [t for t in store.triples() if t.level >= 1]
        per_predicate: Counter[str] = Counter()
        right_by_predicate: Counter[str] = Counter()
        tp = fp = 0
        found: set[tuple[str, frozenset[str]]] = set()
        for t in kept:
            head, tail = entities.get(t.head), entities.get(t.tail)
            pmids = {pmid_of.get(e.document_id, "") for e in t.evidence}
            match = None
            if head and tail and head.concept_ids and tail.concept_ids:
                a, b = index.get(head.concept_ids[0]), index.get(tail.concept_ids[0])
                if a and b:
                    match = next(((pmid, frozenset((x, y))) for pmid in pmids
                                  for x in _gold_ids(a) for y in _gold_ids(b)
                                  if (pmid, frozenset((x, y))) in gold_pairs), None)
            per_predicate[t.predicate.value] += 1
            right_by_predicate[t.predicate.value] += match is not None
            if t.predicate in scored and not t.qualifiers.negated:
                if match is not None:
                    tp += 1
                    found.add(match)
                else:
                    fp += 1
    p = tp / (tp + fp) if tp + fp else 0.0
    r = len(found) / len(gold_pairs) if gold_pairs else 0.0
    return {"kept": len(kept), "scored": tp + fp, "precision": round(p, 4),
            "recall": round(r, 4), "f1": round(2 * p * r / (p + r), 4) if p + r else 0.0,
            "gold_pairs": len(gold_pairs),
            "by_predicate": {k: [right_by_predicate[k], v] for k, v in per_predicate.items()}}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--gold", type=Path, action="append")
    parser.add_argument("--docs", type=int, default=100)
    parser.add_argument("--levels", type=int, default=2)
    parser.add_argument("--reuse-base", action="store_true",
                        help="keep each gold file's prepared workspace from an earlier run "
                        "in --out (same documents and levels) and rerun only the arms")
    parser.add_argument("--seed-cache", type=Path, help="an embeddings.sqlite to start from "
                        "(keyed by model and text: the default vocabulary's concept vectors "
                        "take minutes to make)")
    args = parser.parse_args()
    golds = args.gold or list(GOLD)
    for gold in golds:
        if not gold.exists():
            sys.exit(f"skip: {gold} not found (the ../shared checkout is absent)")
    if args.out.exists() and not args.reuse_base:
        shutil.rmtree(args.out)
    args.out.mkdir(parents=True, exist_ok=True)
    results: dict[str, dict[str, object]] = {}
    seed_cache: Path | None = args.seed_cache
    for gold in golds:
        base = args.out / gold.stem / "base"
        if not (args.reuse_base and base.exists()):
            shutil.rmtree(base.parent, ignore_errors=True)
            base.parent.mkdir(parents=True)
            start = time.perf_counter()
            _prepare(base, gold, args.docs, args.levels, seed_cache)
            print(f"{gold.name}: {args.docs} abstracts prepared in "
                  f"{time.perf_counter() - start:.0f} s", flush=True)
        seed_cache = base / "cache" / "embeddings.sqlite"
        print("| arm | kept | scored | precision | recall | F1 | loop s "
              "| right/kept by predicate |")
        print("|---|---|---|---|---|---|---|---|")
        for arm, flags in ARMS.items():
            path = args.out / gold.stem / arm
            shutil.rmtree(path, ignore_errors=True)
            shutil.copytree(base, path)
            seconds = _grow(path, flags)
            s = _score(path, gold)
            results[f"{gold.stem}:{arm}"] = {**s, "seconds": round(seconds, 1)}
            by = ", ".join(f"{k} {r}/{n}" for k, (r, n) in sorted(s["by_predicate"].items()))  # type: ignore[attr-defined]
            print(f"| {arm} | {s['kept']} | {s['scored']} | {s['precision']:.3f} | "
                  f"{s['recall']:.3f} | {s['f1']:.3f} | {seconds:.0f} | {by} |", flush=True)
    (args.out / "results.json").write_text(json.dumps(results, indent=1), encoding="utf-8")


if __name__ == "__main__":
    main()
