"""Abstention on questions the workspace cannot answer, against the cost to the
ones it can, in one run.

    python benchmarks/bench_abstention.py \\
        --pool ../shared/data/eval/bioasq/Task7BGoldenEnriched/7B1_golden.json \\
        --others ../shared/data/eval/bioasq/Task7BGoldenEnriched/7B2_golden.json \\
        --workspace /tmp/qa-abstain

The pool's questions are answerable (their gold snippets are the pool). The
other file's questions whose gold documents are all outside the pool are not:
their evidence is absent, and often what they name too. Every question is asked
once (mode hybrid); the table gives the share of each set the answer abstains
on (``answerable: false``), abstention precision and recall, and the pool's
recall@10 of the full ranking as it is and with an abstained answer counted as
finding nothing. Training/dev data only: BioASQ 7B (the fusion weights' own
training questions), never a test split.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")


def main() -> int:
    from medkg.evaluation.qa import chunk_keys, qa_workspace, read_bioasq, score_ranking

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--pool", type=Path, required=True)
    parser.add_argument("--others", type=Path, required=True)
    parser.add_argument("--workspace", type=Path, default=Path("/tmp/qa-abstain"))
    parser.add_argument("--mode", default="hybrid")
    args = parser.parse_args()
    for path in (args.pool, args.others):
        if not path.exists():
            print(f"skipped: {path} is absent (the ../shared checkout?)")
            return 0
    pool, others = read_bioasq(args.pool), read_bioasq(args.others)
    pooled = {d.key for d in pool.documents}
    unanswerable = [q for q in others.items if not q.gold & pooled]
    started = time.perf_counter()
    with qa_workspace(args.workspace, pool, print) as ws:
        print(f"workspace ready in {time.perf_counter() - started:.0f} s")
        keys = chunk_keys(ws)
        retriever = ws.retriever()
        rows = []
        for kind, items in (("answerable", pool.items), ("unanswerable", unanswerable)):
            for item in items:
                answer = ws.ask(item.question, mode=args.mode, retriever=retriever)
                ranked = [k for c in answer.trace.ranking if (k := keys.get(c)) is not None]
                recall = score_ranking(ranked, item.gold)[0] if kind == "answerable" else 0.0
                rows.append((kind, not answer.answerable, recall, answer.not_found))
    ans = [r for r in rows if r[0] == "answerable"]
    una = [r for r in rows if r[0] == "unanswerable"]
    abstained = [r for r in rows if r[1]]
    right = [r for r in abstained if r[0] == "unanswerable"]
    r10 = sum(r[2] for r in ans) / max(1, len(ans))
    r10_after = sum(0.0 if r[1] else r[2] for r in ans) / max(1, len(ans))
    print(f"\n{len(ans)} answerable questions ({args.pool.name}), {len(una)} unanswerable "
          f"({args.others.name}: gold documents all outside the pool); mode {args.mode}")
    print(f"{'measure':<44}{'value':>10}")
    for name, value in (
            ("abstained on unanswerable (recall)", len(right) / max(1, len(una))),
            ("abstained on answerable", sum(r[1] for r in ans) / max(1, len(ans))),
            ("abstention precision", len(right) / max(1, len(abstained))),
            ("answerable recall@10, as ranked", r10),
            ("answerable recall@10, abstained = 0", r10_after),
            ("recall@10 lost", r10 - r10_after)):
        print(f"{name:<44}{value:>10.3f}")
    wrong = [r for r in ans if r[1]]
    for r in wrong[:10]:
        print(f"  abstained on an answerable question: not found {r[3]}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
