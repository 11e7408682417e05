"""Abstention on questions the workspace cannot answer, against the cost to the
ones it can, in one run.

    python benchmarks/bench_abstention.py \\
        --pool ../shared/data/eval/bioasq/Task7BGoldenEnriched/7B1_golden.json \\
        --others ../shared/data/eval/bioasq/Task7BGoldenEnriched/7B2_golden.json \\
        --others ../shared/data/eval/bioasq/Task7BGoldenEnriched/7B3_golden.json \\
        --workspace /tmp/qa-abstain

The pool's questions are answerable (their gold snippets are the pool). The
other file's questions whose gold documents are all outside the pool are not:
their evidence is absent, and often what they name too. Every question is asked
once (mode hybrid); the table gives the share of each set the answer abstains
on (``answerable: false``), abstention precision and recall, and the pool's
recall@10 of the full ranking as it is and with an abstained answer counted as
finding nothing. Training/dev data only: BioASQ 7B (the fusion weights' own
training questions), never a test split. ``retrieval.min_evidence`` was fitted
on the first ``--others`` file (7B2) with the pool's questions: the largest
threshold that costs at most 0.005 more answerable recall@10; the second (7B3)
is held out from that fit.
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
    parser.add_argument("--others", type=Path, action="append", required=True,
                        help="a question file whose questions outside the pool are the "
                        "unanswerable set (repeat: each reported apart; fit on the first, "
                        "the others are held out)")
    parser.add_argument("--workspace", type=Path, default=Path("/tmp/qa-abstain"))
    parser.add_argument("--mode", default="hybrid")
    args = parser.parse_args()
    for path in (args.pool, *args.others):
        if not path.exists():
            print(f"skipped: {path} is absent (the ../shared checkout?)")
            return 0
    pool = read_bioasq(args.pool)
    pooled = {d.key for d in pool.documents}
    unanswerable = {path.name: [q for q in read_bioasq(path).items if not q.gold & pooled]
                    for path in args.others}
    started = time.perf_counter()
    with qa_workspace(args.workspace, pool, print) as ws:
        print(f"workspace ready in {time.perf_counter() - started:.0f} s")
        keys = chunk_keys(ws)
        retriever = ws.retriever()
        rows = []
        sets = [("answerable", pool.items), *unanswerable.items()]
        for kind, items in sets:
            for item in items:
                answer = ws.ask(item.question, mode=args.mode, retriever=retriever)
                ranked = [k for c in answer.trace.ranking if (k := keys.get(c)) is not None]
                recall = score_ranking(ranked, item.gold)[0] if kind == "answerable" else 0.0
                rows.append((kind, not answer.answerable, recall, answer.why_not,
                             answer.trace.closest))
    ans = [r for r in rows if r[0] == "answerable"]
    r10 = sum(r[2] for r in ans) / max(1, len(ans))
    r10_after = sum(0.0 if r[1] else r[2] for r in ans) / max(1, len(ans))
    print(f"\n{len(ans)} answerable questions ({args.pool.name}); mode {args.mode}")
    print(f"{'measure':<58}{'value':>10}")
    for name in unanswerable:
        mine = [r for r in rows if r[0] == name]
        right = sum(r[1] for r in mine)
        weak = sum(1 for r in mine if r[1] and r[3].startswith("weak evidence"))
        print(f"{f'abstained on {len(mine)} unanswerable of {name} (recall)':<58}"
              f"{right / max(1, len(mine)):>10.3f}")
        print(f"{'  of which for weak evidence':<58}{weak / max(1, len(mine)):>10.3f}")
        print(f"{'  abstention precision (against the answerable)':<58}"
              f"{right / max(1, right + sum(r[1] for r in ans)):>10.3f}")
    for name, value in (
            ("abstained on answerable", sum(r[1] for r in ans) / max(1, len(ans))),
            ("answerable recall@10, as ranked", r10),
            ("answerable recall@10, abstained = 0", r10_after),
            ("recall@10 lost", r10 - r10_after)):
        print(f"{name:<58}{value:>10.3f}")
    for r in [r for r in ans if r[1]][:10]:
        print(f"  abstained on an answerable question: {r[3]}")
    # What another retrieval.min_evidence would do (an abstention for what is in no
    # document stays one): the sweep the default was chosen from, on the first file.
    print("\nmin_evidence | abstained on answerable | recall@10 lost | "
          + " | ".join(f"recall on {n}" for n in unanswerable))
    for floor in (0.2, 0.25, 0.28, 0.3, 0.35, 0.4, 0.45, 0.5):
        def out(r: tuple, floor: float = floor) -> bool:  # type: ignore[type-arg]
            entity_gone = r[1] and not r[3].startswith("weak evidence")
            return entity_gone or (r[4] is not None and r[4] < floor)
        lost = sum(r[2] for r in ans if out(r)) / max(1, len(ans))
        recalls = [sum(out(r) for r in rows if r[0] == n) / max(1, len(unanswerable[n]))
                   for n in unanswerable]
        print(f"{floor} | {sum(out(r) for r in ans) / max(1, len(ans)):.3f} | {lost:.3f} | "
              + " | ".join(f"{x:.3f}" for x in recalls))
    return 0


if __name__ == "__main__":
    sys.exit(main())
