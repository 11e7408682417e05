"""Two-hop and conditional questions: every retrieval mode on one workspace, one run.

    python benchmarks/bench_multihop.py --workspace /tmp/mh-dev            # dev splits
    python benchmarks/bench_multihop.py --split train --workspace /tmp/mh-train
    python benchmarks/bench_multihop.py --workspace /tmp/mh-dev --questions chains

The questions come from the gold relations of BioRED and BC5CDR, in two sets
built differently: ``templates`` (``medkg.evaluation.multihop``: four fixed
chains and questions, plus the conditional ones) and ``chains``
(``medkg.evaluation.chains``: every relation type, several wordings, the
bridge named or not); the workspace holds the same split's
abstracts (title + abstract, so gold offsets are document offsets), built once
with the bundled relation model (trained on the training splits only) and
reused. Every question is asked in each mode, the modes interleaved question
by question (the first mode rotates: it pays for the sentence embeddings the
others then find cached). Printed: answer-entity recall@5/@10 of each mode's
full candidate ranking over all answers and over the cross-document ones,
the condition-stated rate on the conditional questions, p50/p95 latency, for
each set; then recall@10 per family (a template, or a chain's kinds).
Tune on ``--split train`` only; report ``--split dev``.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from medkg.evaluation.multihop import HopQuestion, HopReport

os.environ.setdefault("HF_HUB_OFFLINE", "1")
EVAL = Path(__file__).resolve().parents[2] / "shared" / "data" / "eval"
SPLITS = {
    "dev": (EVAL / "biored" / "Dev.PubTator", EVAL / "bc5cdr" / "CDR_DevelopmentSet.PubTator.txt"),
    "train": (EVAL / "biored" / "Train.PubTator",
              EVAL / "bc5cdr" / "CDR_TrainingSet.PubTator.txt"),
}
MODES = ("vector", "hybrid", "local", "u-retrieval", "traverse")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--split", choices=sorted(SPLITS), default="dev")
    parser.add_argument("--workspace", type=Path, required=True)
    parser.add_argument("--modes", default=",".join(MODES))
    parser.add_argument("--limit", type=int, default=0, help="ask only N questions, spread "
                        "evenly over the set (every template)")
    parser.add_argument("--questions", choices=("templates", "chains", "both"), default="both")
    parser.add_argument("--build-only", action="store_true")
    parser.add_argument("--set", action="append", default=[], metavar="SECTION.KEY=JSON",
                        help="a retrieval setting for this run, e.g. "
                        "retrieval.max_depth=3 (repeatable; not saved)")
    args = parser.parse_args()
    files = SPLITS[args.split]
    missing = [f for f in files if not f.exists()]
    if missing:
        sys.exit(f"skip: {missing[0]} not found (the ../shared checkout is absent)")

    from medkg.evaluation.chains import generate_chains
    from medkg.evaluation.multihop import generate, read_corpora, score
    from medkg.model import Layer
    from medkg.workspace import Workspace

    documents = read_corpora(files)
    sets = {name: make(documents) for name, make in
            (("templates", generate), ("chains", generate_chains))
            if args.questions in (name, "both")}
    if args.limit:
        sets = {name: qs[:: max(1, len(qs) // args.limit)][: args.limit]
                for name, qs in sets.items()}
    questions = [q for qs in sets.values() for q in qs]
    t0 = time.perf_counter()
    fresh = not (args.workspace / "medkg.toml").exists()
    ws = Workspace.create(args.workspace, exist_ok=True)
    if fresh:
        ws.settings.extraction.relation_model = "bundled"
        ws.save_settings()
        ws.load_vocabulary(None)
    corpus = args.workspace / "corpus.jsonl"
    if not corpus.exists():
        corpus.write_text("".join(json.dumps({"id": d.pmid, "title": d.title, "text": d.text})
                                  + "\n" for d in documents.values()), encoding="utf-8")
    ws.ingest([corpus], Layer.LITERATURE)
    ws.build()
    counts = ws.store.counts()
    print(f"workspace ready in {time.perf_counter() - t0:.0f} s: {len(documents)} documents, "
          f"{counts.entities} entities, {counts.triples} triples, {counts.links} links",
          flush=True)
    if args.build_only:
        ws.close()
        return
    # The retrieval settings measured are this code's defaults (plus --set), whatever
    # defaults the workspace's medkg.toml was written with.
    ws.settings.retrieval = type(ws.settings.retrieval)()
    for assignment in args.set:
        key, _, raw = assignment.partition("=")
        section, _, name = key.partition(".")
        setattr(getattr(ws.settings, section), name, json.loads(raw))

    spans: dict[str, tuple[str, int, int]] = {}
    for doc_id in ws.store.document_ids(Layer.LITERATURE):
        pmid = ws.store.document(doc_id).source.rsplit("#", 1)[-1]
        for chunk in ws.store.chunks(doc_id):
            spans[chunk.id] = (pmid, chunk.start, chunk.end)
    modes = [m.strip() for m in args.modes.split(",") if m.strip()]
    retriever = ws.retriever()
    ws.ask(questions[0].question, retriever=retriever)  # load the models before timing
    rankings: dict[str, list[list[str]]] = {m: [] for m in modes}
    stated: dict[str, list[str]] = {m: [] for m in modes}
    times: dict[str, list[float]] = {m: [] for m in modes}
    for n, q in enumerate(questions):
        for mode in modes[n % len(modes):] + modes[: n % len(modes)]:
            t = time.perf_counter()
            answer = ws.ask(q.question, mode=mode, retriever=retriever)
            times[mode].append((time.perf_counter() - t) * 1000)
            rankings[mode].append(answer.trace.ranking)
            stated[mode].append(" ".join([answer.text, *(c.text for c in answer.conditions)]))
        if n % 25 == 0:
            print(f"{n}/{len(questions)} questions", flush=True)
    ws.close()
    where = spans.get
    report: dict[str, object] = {"split": args.split, "settings": args.set}
    offset = 0
    for name, qs in sets.items():
        part = slice(offset, offset + len(qs))
        offset += len(qs)
        reports = {m: score(m, qs, rankings[m][part], stated[m][part], times[m][part], where)
                   for m in modes}
        _print_set(name, args.split, qs, reports, len(documents), len(spans), args.set)
        families = sorted({q.template for q in qs if q.kind == "2-hop"})
        by_family = {f: {m: score(m, *_only(f, qs, rankings[m][part], stated[m][part],
                                            times[m][part]), where)
                         for m in modes} for f in families}
        print(f"\n{name}: recall@10 per family (answers)")
        print("| family | answers | " + " | ".join(modes) + " |")
        print("|---|---|" + "---|" * len(modes))
        for f, per_mode in by_family.items():
            n = sum(len(q.answers) for q in qs if q.template == f)
            print(f"| {f} | {n} | " + " | ".join(
                f"{per_mode[m].recall['recall@10']:.3f}" for m in modes) + " |")
        report[name] = {"overall": {m: r.model_dump() for m, r in reports.items()},
                        "families": {f: {m: r.recall for m, r in per.items()}
                                     for f, per in by_family.items()}}
    (args.workspace / f"bench_multihop_{args.split}.json").write_text(
        json.dumps(report, indent=1), encoding="utf-8")


def _only(family: str, questions: list[HopQuestion], rankings: list[list[str]],
          stated: list[str], times: list[float]
          ) -> tuple[list[HopQuestion], list[list[str]], list[str], list[float]]:
    keep = [i for i, q in enumerate(questions) if q.template == family]
    return ([questions[i] for i in keep], [rankings[i] for i in keep],
            [stated[i] for i in keep], [times[i] for i in keep])


def _print_set(name: str, split: str, questions: list[HopQuestion],
               reports: dict[str, HopReport], documents: int, chunks: int,
               settings: list[str]) -> None:
    first = next(iter(reports.values()))
    two_hop = [q for q in questions if q.kind == "2-hop"]
    answers = sum(len(q.answers) for q in two_hop)
    print(f"\n{name}, {split}: {len(two_hop)} 2-hop questions ({answers} answers, "
          f"{first.cross_document_answers} cross-document), "
          f"{first.conditional_questions} conditional questions; "
          f"{documents} documents, {chunks} chunks"
          + (f"; settings {' '.join(settings)}" if settings else ""))
    print("| mode | recall@5 | recall@10 | cross-doc recall@5 | cross-doc recall@10 "
          "| condition stated | p50 ms | p95 ms |")
    print("|---|---|---|---|---|---|---|---|")
    for mode, r in reports.items():
        cond = "n/a" if r.condition_stated is None else f"{r.condition_stated:.3f}"
        print(f"| {mode} | {r.recall['recall@5']:.3f} | {r.recall['recall@10']:.3f} | "
              f"{r.recall['cross-document recall@5']:.3f} | "
              f"{r.recall['cross-document recall@10']:.3f} | {cond} | "
              f"{r.latency_ms['p50']} | {r.latency_ms['p95']} |")


if __name__ == "__main__":
    main()
