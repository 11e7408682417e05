"""U-Retrieval against its baselines on a QA dataset, side by side in one run.

    python benchmarks/bench_qa.py --dataset ../shared/data/eval/pubmedqa/pqal_dev.json \\
        --format pubmedqa --workspace /tmp/qa-pubmedqa
    python benchmarks/bench_qa.py --dataset ../shared/data/eval/bioasq --format bioasq \\
        --workspace /tmp/qa-bioasq

Builds (or reuses) one workspace from the dataset's texts exactly as
``medkg eval qa`` does, then asks every question (or the first ``--limit``) in
each mode, the modes interleaved question by question so a noisy machine
slows them alike (the first mode of each question rotates: it pays for the
sentence embeddings the others then find cached), and prints, for all the
questions asked and for each ``--also`` subset: recall@10, MRR, nDCG@10 of the
full ranking, citation precision, yes/no accuracy, p50/p95 latency; ROUGE-2 /
ROUGE-SU4 against the ideal answers with the three-snippet baseline; the
exact-answer hit rate; the on-topic share; and the process's peak RSS.

    python benchmarks/bench_qa.py --dataset ../shared/data/eval/bioasq --format bioasq \\
        --workspace /tmp/qa-bioasq --also ../shared/data/eval/bioasq/Task8BGoldenEnriched \\
        --also ../shared/data/eval/bioasq/Task9BGoldenEnriched
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from medkg.evaluation.qa import QAItem, QAReport

os.environ.setdefault("HF_HUB_OFFLINE", "1")
MODES = ("u-retrieval", "hybrid", "local", "vector", "bm25")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--dataset", type=Path, required=True)
    parser.add_argument("--format", choices=("bioasq", "pubmedqa"), required=True)
    parser.add_argument("--workspace", type=Path, required=True)
    parser.add_argument("--limit", type=int, default=0)
    parser.add_argument("--questions", type=Path, help="ask only the questions of this file "
                        "or directory (e.g. one BioASQ year); the workspace still holds every "
                        "text of --dataset")
    parser.add_argument("--modes", default=",".join(MODES), help="comma-separated modes")
    parser.add_argument("--also", type=Path, action="append", default=[],
                        help="also print the tables for the asked questions that are in "
                        "this file or directory (e.g. the years not tuned on); repeatable")
    parser.add_argument("--seed-cache", type=Path, help="an embeddings.sqlite to start a "
                        "new workspace's embedding cache from (it is keyed by model and "
                        "text, so any workspace's cache serves)")
    args = parser.parse_args()
    if not args.dataset.exists():
        sys.exit(f"skip: {args.dataset} not found (the ../shared checkout is absent)")

    from medkg.evaluation.qa import (
        READERS,
        chunk_keys,
        qa_workspace,
        question_terms,
        score_answers,
    )
    from medkg.retrieval.answer import Answer
    from medkg.workspace import Workspace

    if args.seed_cache and not args.workspace.exists():
        Workspace.create(args.workspace).close()
        (args.workspace / "cache").mkdir(exist_ok=True)
        shutil.copyfile(args.seed_cache, args.workspace / "cache" / "embeddings.sqlite")
    data = READERS[args.format](args.dataset)
    items = READERS[args.format](args.questions).items if args.questions else data.items
    items = items[: args.limit] if args.limit else items
    modes = [m.strip() for m in args.modes.split(",") if m.strip()]
    start = time.perf_counter()
    with qa_workspace(args.workspace, data, print) as ws:
        counts = dict(ws.store.counts().rows())
        print(f"workspace ready in {time.perf_counter() - start:.0f} s: {counts}")
        keys = chunk_keys(ws)
        retriever = ws.retriever()
        ws.ask(items[0].question, retriever=retriever)  # load models before timing
        answers: dict[str, dict[str, Answer]] = {m: {} for m in modes}
        times: dict[str, dict[str, float]] = {m: {} for m in modes}
        for n, item in enumerate(items):
            # The first mode to see a question pays for embedding its candidate
            # sentences (the cache serves the others): rotate who goes first.
            for mode in modes[n % len(modes):] + modes[: n % len(modes)]:
                t = time.perf_counter()
                answers[mode][item.id] = ws.ask(item.question, mode=mode, retriever=retriever)
                times[mode][item.id] = (time.perf_counter() - t) * 1000
            if n % 50 == 0:
                print(f"{n}/{len(items)} questions", flush=True)
        # The on-topic measure uses one set of terms per question for every mode: the
        # question's concepts and their neighbours in a graph mode's facts.
        graph_mode = next((m for m in modes if m in ("u-retrieval", "hybrid", "local")), None)
        terms: dict[str, frozenset[str]] | None = None
        if graph_mode is not None:
            def names_of(cid: str) -> list[str]:
                c = ws.store.concept(cid)
                return [c.name, *c.synonyms]

            terms = {i.id: question_terms(answers[graph_mode][i.id], names_of) for i in items}
        # The answer baseline: the first three snippets of vector search, as they are.
        first3 = ({i.id: " ".join(ws.store.chunk(c).text
                                  for c in answers["vector"][i.id].trace.ranking[:3])
                   for i in items} if "vector" in modes else None)
        subsets = [("all asked", items)]
        for path in args.also:
            wanted = {i.id for i in READERS[args.format](path).items}
            subsets.append((path.name, [i for i in items if i.id in wanted]))
        out = {}
        for title, chosen in subsets:
            if not chosen:
                continue
            reports = {m: score_answers(chosen, [answers[m][i.id] for i in chosen],
                                        [times[m][i.id] for i in chosen], keys.get, m,
                                        len(data.documents), len(keys),
                                        [terms[i.id] for i in chosen] if terms else None)
                       for m in modes}
            print_tables(f"{args.format} {args.dataset.name}, {title}: {len(chosen)} questions, "
                         f"{len(data.documents)} documents, {len(keys)} chunks",
                         chosen, reports, first3, graph_mode)
            out[title] = {m: r.model_dump() for m, r in reports.items()}
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"\npeak RSS of this process: {peak:.0f} MB")
    (args.workspace / "bench_qa.json").write_text(json.dumps(out, indent=1), encoding="utf-8")


def print_tables(title: str, items: list[QAItem], reports: dict[str, QAReport],
                 first3: dict[str, str] | None, graph_mode: str | None) -> None:
    from medkg.evaluation.qa import rouge

    print(f"\n{title}")
    print("Ranking: each mode's full candidate ranking; citation precision: the share of "
          "the answer's cited documents that are gold.")
    print("| mode | recall@10 | MRR | nDCG@10 | citation precision | yes/no acc | p50 ms "
          "| p95 ms |")
    print("|---|---|---|---|---|---|---|---|")
    for mode, r in reports.items():
        acc = r.answers["yesno_accuracy"]
        print(f"| {mode} | {r.retrieval['recall@10']:.3f} | {r.retrieval['mrr']:.3f} | "
              f"{r.retrieval['ndcg@10']:.3f} | {r.retrieval['citation_precision']:.3f} | "
              f"{'n/a' if acc is None else f'{acc:.3f}'} | "
              f"{r.latency_ms['p50']} | {r.latency_ms['p95']} |")
    kinds = [k for k in ("summary", "list", "factoid", "yesno")
             if any(i.type == k and i.ideal for i in items)]
    if kinds:
        print("\nAnswers against the BioASQ ideal answers (ROUGE-2 / ROUGE-SU4 F1), and the "
              "share of factoid/list questions whose exact answer is in a cited sentence:")
        print("| mode | " + " | ".join(f"{k} R-2 | {k} R-SU4" for k in kinds) + " | exact hit |")
        print("|---|" + "---|---|" * len(kinds) + "---|")
        rows: list[tuple[str, dict[str, Any]]] = [(m, r.answers) for m, r in reports.items()]
        if first3 is not None:
            base = {k: rouge([first3[i.id] for i in items if i.type == k and i.ideal],
                             [i.ideal for i in items if i.type == k and i.ideal]) for k in kinds}
            rows.append(("vector: first 3 snippets", {
                f"{k}_{x}": base[k][x] for k in kinds for x in ("rouge2_f", "rougesu4_f")}))
        for mode, a in rows:
            cells = [f"{a.get(f'{k}_rouge2_f', 0):.3f} | {a.get(f'{k}_rougesu4_f', 0):.3f}"
                     for k in kinds]
            hit = a.get("exact_hit_rate")
            print(f"| {mode} | " + " | ".join(cells) +
                  f" | {'n/a' if hit is None else f'{hit:.3f}'} |")
    if graph_mode is not None:
        print(f"\nOn topic: the share of answer sentences that name a question concept or a "
              f"direct neighbour of one in the {graph_mode} answer's facts (questions with such "
              "terms only):")
        print("| mode | on-topic share | questions |")
        print("|---|---|---|")
        for mode, r in reports.items():
            share = r.answers.get("on_topic_share")
            print(f"| {mode} | {'n/a' if share is None else f'{share:.3f}'} | "
                  f"{r.answers.get('on_topic_questions')} |")


if __name__ == "__main__":
    main()
