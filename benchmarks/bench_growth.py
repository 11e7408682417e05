"""The SAC-KG loop on a real corpus, with the verifier and pruner on and off.

    python benchmarks/bench_growth.py --out /tmp/growth            # build both arms
    python benchmarks/bench_growth.py --out /tmp/growth --score    # after labelling

Corpus: the first ``--docs`` OpenStax Pharmacology modules (literature layer)
and the sample notes in ``examples/user`` (user layer; their entities are the
seeds). One workspace is ingested (and the vocabulary's concept vectors made)
once, then copied for each arm, so both arms read identical inputs:

- ``on``: verifier (RuleHub) and correction rounds on, pruner on;
- ``off``: every generated triple kept, every new entity grown.

The extraction both arms read is done once (``build(grow=False)``, with the
bundled relation classifier on: pattern relations alone are sparse in textbook
prose) and the builtin generator reads ``--context`` characters per head.

Prints the per-level table of each arm and writes ``labels.tsv``: a random
sample of ``--sample`` kept triples per arm, shuffled together without saying
which arm each came from (``key.json`` says), with the evidence quote and an
empty ``label`` column. Label each row ``1`` when the quote states that
relation between the two entities in that direction, else ``0``: hedged claims
("can cause", "associated with") count; a negated claim, or an indication or
contraindication read as an adverse effect, does not; an entity normalised to
the wrong concept (calcium for "calcium channel blockers") makes the triple
wrong, a class normalised from its member (vasopressins for desmopressin) does
not. ``--score`` then prints the precision of each arm. The session-3 labels
are kept, without corpus text, in ``benchmarks/data/growth-labels.tsv``;
session 9's (30 modules, 40 per arm) in ``growth-labels-session9.tsv``.
Also validates the ``on`` graph with the SHACL shapes.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import random
import shutil
import sys
import time
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
REPO = Path(__file__).resolve().parents[1]
CORPUS = (REPO.parent / "shared" / "data" / "corpora" / "openstax_nursing"
          / "modules_plaintext.jsonl")
ARMS = {"on": {"verify": True, "prune": True}, "off": {"verify": False, "prune": False}}


def _prepare(base: Path, docs: int, levels: int, context: int,
             seed_cache: Path | None) -> None:
    from medkg.model import Layer
    from medkg.workspace import Workspace

    rows = [json.loads(line) for line in CORPUS.read_text(encoding="utf-8").splitlines()]
    modules = [r for r in rows if r["book"] == "pharmacology" and r["text"].strip()][:docs]
    source = base.parent / "pharmacology.jsonl"
    source.write_text("".join(json.dumps({"id": r["module"], "title": r["title"],
                                          "text": r["text"]}) + "\n" for r in modules),
                      encoding="utf-8")
    with Workspace.create(base) as ws:
        if seed_cache is not None:
            (base / "cache").mkdir(exist_ok=True)
            shutil.copyfile(seed_cache, base / "cache" / "embeddings.sqlite")
        ws.load_vocabulary(None)
        ws.ingest([REPO / "examples" / "user"], Layer.USER)
        report = ws.ingest([source], Layer.LITERATURE)
        ws.settings.construction.levels = levels
        ws.settings.construction.context_chars = context
        ws.settings.extraction.relation_model = "bundled"
        ws.save_settings()
        ws.build(grow=False)
        candidates = ws.corpus.candidate_count()
    print(f"ingested {report.documents} modules, {report.chunks} chunks; "
          f"{candidates} candidate triples")


def _grow(arm: Path, flags: dict[str, bool]) -> dict[str, object]:
    from medkg.workspace import Workspace

    with Workspace.open(arm) as ws:
        ws.settings.construction.verify = flags["verify"]
        ws.settings.construction.prune = flags["prune"]
        ws.save_settings()
        start = time.perf_counter()
        levels = ws.grow()
        seconds = time.perf_counter() - start
        kept = [t for t in ws.store.triples() if t.level >= 1]
    return {"seconds": round(seconds, 1), "levels": [s.as_dict() for s in levels],
            "triples": len(kept)}


def _table(arm: str, result: dict[str, object]) -> None:
    print(f"\narm {arm}: {result['triples']} triples in the graph, loop {result['seconds']} s")
    print("| level | heads | generated | rejected (by error type) | corrected | dropped | kept "
          "| grown | pruned |")
    print("|---|---|---|---|---|---|---|---|---|")
    for lv in result["levels"]:  # type: ignore[attr-defined]
        by = ", ".join(f"{k} {v}" for k, v in lv["rejected"].items()) or "0"
        print(f"| {lv['level']} | {lv['heads']} | {lv['generated']} | {by} | {lv['corrected']} "
              f"| {lv['dropped']} | {lv['kept']} | {lv['grown']} | {lv['pruned']} |")


def _sample(out: Path, n: int, seed: int) -> None:
    from medkg.model import Layer
    from medkg.workspace import Workspace

    rng = random.Random(seed)
    rows, key = [], {}
    for arm in ARMS:
        with Workspace.open(out / arm) as ws:
            names = {e.id: e.name for layer in (Layer.USER, Layer.LITERATURE)
                     for e in ws.store.entities(layer)}
            kept = sorted((t for t in ws.store.triples() if t.level >= 1), key=lambda t: t.id)
            for t in rng.sample(kept, min(n, len(kept))):
                quote = " ".join(t.evidence[0].quote.split()) if t.evidence else ""
                rows.append((arm, t, names.get(t.head, t.head), names.get(t.tail, t.tail), quote))
    rng.shuffle(rows)
    with (out / "labels.tsv").open("w", encoding="utf-8") as f:
        f.write("item\thead\tpredicate\ttail\tquote\tlabel\n")
        for i, (arm, t, head, tail, quote) in enumerate(rows, start=1):
            f.write(f"{i}\t{head}\t{t.predicate.value}\t{tail}\t{quote}\t\n")
            key[str(i)] = {"arm": arm, "triple": t.id, "level": t.level, "method": t.method}
    (out / "key.json").write_text(json.dumps(key, indent=1), encoding="utf-8")
    print(f"\nwrote {len(rows)} triples to label: {out / 'labels.tsv'}")


def _wilson(k: int, n: int, z: float = 1.96) -> tuple[float, float]:
    if n == 0:
        return (0.0, 0.0)
    p = k / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return (centre - half, centre + half)


def _score(out: Path) -> None:
    key = json.loads((out / "key.json").read_text(encoding="utf-8"))
    counts: dict[str, list[int]] = {arm: [0, 0] for arm in ARMS}
    for line in (out / "labels.tsv").read_text(encoding="utf-8").splitlines()[1:]:
        cols = line.split("\t")
        if len(cols) < 6 or cols[5].strip() not in ("0", "1"):
            sys.exit(f"unlabelled row: {line[:80]}")
        arm = key[cols[0]]["arm"]
        counts[arm][0] += int(cols[5])
        counts[arm][1] += 1
    print("| arm | labelled | correct | precision | 95% CI (Wilson) |")
    print("|---|---|---|---|---|")
    for arm, (k, n) in counts.items():
        lo, hi = _wilson(k, n)
        print(f"| {arm} | {n} | {k} | {k / max(1, n):.3f} | {lo:.3f}-{hi:.3f} |")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--docs", type=int, default=200)
    parser.add_argument("--levels", type=int, default=3)
    parser.add_argument("--sample", type=int, default=100)
    parser.add_argument("--context", type=int, default=4000)
    parser.add_argument("--seed", type=int, default=13)
    parser.add_argument("--score", action="store_true")
    parser.add_argument("--seed-cache", type=Path, help="an embeddings.sqlite to start the "
                        "workspace's embedding cache from (keyed by model and text)")
    args = parser.parse_args()
    if args.score:
        _score(args.out)
        return
    if not CORPUS.exists():
        sys.exit(f"skip: {CORPUS} not found (the ../shared checkout is absent)")
    if args.out.exists():
        shutil.rmtree(args.out)
    args.out.mkdir(parents=True)
    base = args.out / "base"
    start = time.perf_counter()
    _prepare(base, args.docs, args.levels, args.context, args.seed_cache)
    print(f"prepared in {time.perf_counter() - start:.0f} s")
    results = {}
    for arm, flags in ARMS.items():
        shutil.copytree(base, args.out / arm)
        results[arm] = _grow(args.out / arm, flags)
        _table(arm, results[arm])
    (args.out / "results.json").write_text(json.dumps(results, indent=1), encoding="utf-8")
    _sample(args.out, args.sample, args.seed)

    from medkg.rulehub.shacl import validate
    from medkg.workspace import Workspace

    with Workspace.open(args.out / "on") as ws:
        start = time.perf_counter()
        report = validate(ws.store, base_iri=ws.settings.store.base_iri)
    print(f"\nSHACL (arm on): conforms {report.conforms}, {report.hard_violations} violation(s) "
          f"of hard rules, {report.warnings} warning(s) {dict(report.by_rule)}, "
          f"{time.perf_counter() - start:.1f} s")


if __name__ == "__main__":
    main()
