"""The new user's ten questions, on a sample corpus written for it, with what a
trustworthy answer must show checked and printed.

    python benchmarks/trust_questions.py [--workspace /tmp/medkg-trust] [--relation-model bundled]

The corpus (``benchmarks/data/trust``: 8 clinic notes, 8 literature passages,
written for medkg; anticoagulation, CKD with metformin, NSAIDs in asthma, statin
myopathy, with a negation, a hedge, a family history, a contraindication and
doses) is built with the default vocabulary, then each question is asked and its
answer printed whole. The checks:

- the question about a drug no document names abstains;
- every cited sentence that states a family history, a hedge or a negation of
  what is asked carries the flag (share of such citations flagged);
- "statins" is not normalised to one statin;
- the global question's points cover the adverse effects the notes mention (and
  the demo notes', ``examples/user``, built with the seed vocabulary);
- "can I give metformin in CKD stage 4" gives a cited verdict;
- definition coverage: the share of the concepts an answer names (question
  concepts and facts' ends) whose definition it can show.
"""

from __future__ import annotations

import argparse
import os
import re
import sys
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
REPO = Path(__file__).resolve().parents[1]
CORPUS = REPO / "benchmarks" / "data" / "trust"
QUESTIONS: list[tuple[str, str | None]] = [  # (question, mode; None: the default)
    ("What is the recommended dose of dupilumab for atopic dermatitis?", None),
    ("Which of my patients had a stroke?", "hybrid"),
    ("Does Mr Adeyemi have pneumonia?", None),
    ("Has malignancy been ruled out in Mrs Novak?", None),
    ("What adverse effects do statins cause?", None),
    ("What adverse effects come up across my notes?", "global"),
    ("Which drugs treat what ibuprofen causes in asthma?", "traverse"),
    ("Can I give metformin in CKD stage 4?", None),
    ("What does warfarin interact with, and what are its risks?", None),
    ("What treats gout, and what treats hypertension?", None),
]
# The adverse effects each notes set mentions, as words a point or its quote says.
OWN_ADVERSE = {"nosebleeds": r"nosebleed|epistaxis", "bruising": r"bruis|ecchymos",
               "raised INR": r"\binr\b", "bronchospasm": r"bronchospasm",
               "wheeze": r"wheez", "myalgia": r"myalgia|muscle ache"}
DEMO_ADVERSE = {"dry cough": r"cough", "ankle edema": r"edema", "hypokalemia": r"hypokal",
                "hyperkalemia": r"hyperkal", "nausea": r"nausea", "bleeding": r"bleed"}
QUALIFIED = re.compile(r"family history|possibly|cannot rule out|\bno\b|denies", re.I)


def build(root: Path, notes: Path, literature: Path, vocabulary: Path | None):
    from medkg.model import Layer
    from medkg.workspace import Workspace

    fresh = not (root / "medkg.toml").exists()
    ws = Workspace.create(root, exist_ok=True)
    if fresh:
        ws.load_vocabulary(vocabulary)
    ws.ingest([literature], Layer.LITERATURE)
    ws.ingest([notes], Layer.USER)
    ws.build()
    return ws


def coverage(answer, gold: dict[str, str]) -> tuple[int, list[str]]:
    said = " ".join([answer.text, *(c.quote for c in answer.citations)]).lower()
    found = [name for name, pattern in gold.items() if re.search(pattern, said)]
    return len(found), found


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--workspace", type=Path, default=Path("/tmp/medkg-trust"))
    parser.add_argument("--relation-model", default=None,
                        help="set extraction.relation_model (e.g. bundled) for this build")
    args = parser.parse_args()
    if args.relation_model:
        os.environ["MEDKG_EXTRACTION__RELATION_MODEL"] = args.relation_model
    ws = build(args.workspace, CORPUS / "notes", CORPUS / "literature", None)
    checks: list[tuple[str, str]] = []
    flagged = qualified = 0
    concepts = defined = 0
    index = ws.concept_index()
    try:
        retriever = ws.retriever()
        for n, (question, mode) in enumerate(QUESTIONS, 1):
            answer = ws.ask(question, mode=mode, retriever=retriever, show_proposed=True)
            print(f"\n===== {n}. ({answer.mode}) =====\n{answer.render()}")
            for c in answer.citations:
                if QUALIFIED.search(c.quote):
                    qualified += 1
                    flagged += bool(c.flags)
            named = list(dict.fromkeys([*answer.trace.question_concepts,
                                        *(x for f in answer.facts for x in f.defined_by)]))
            concepts += len(named)
            defined += sum(1 for x in named if (c := index.get(x)) and c.definition)
            if n == 1:
                checks.append(("dupilumab question abstains",
                               f"answerable={answer.answerable}, not_found={answer.not_found}"))
            if n == 5:
                from medkg.model import Layer

                as_named = sorted({e.name for lay in (Layer.USER, Layer.LITERATURE)
                                   for e in ws.store.entities(lay)
                                   if any(m.text.lower() == "statins" for m in e.mentions)})
                checks.append(("'statins' normalised to", ", ".join(as_named) or "nothing"))
                checks.append(("facts naming simvastatin for the statins question",
                               str(sum(1 for f in answer.facts if "simvastatin" in
                                       f"{f.head} {f.tail}".lower()))))
            if n == 6:
                got, which = coverage(answer, OWN_ADVERSE)
                checks.append(("global: adverse effects of the notes covered",
                               f"{got}/{len(OWN_ADVERSE)} ({', '.join(which)})"))
                checks.append(("global: points cited", f"{len(answer.citations)} citations "
                               f"for {answer.text.count(chr(10) + '- ')} points"))
            if n == 8:
                v = answer.verdict
                checks.append(("metformin in CKD 4: verdict",
                               f"{v.kind} {v.citations}" if v else "none"))
    finally:
        ws.close()
    checks.append(("qualified citations flagged", f"{flagged}/{qualified}"))
    checks.append(("definition coverage of the concepts answers name",
                   f"{defined}/{concepts} = {defined / max(1, concepts):.2f}"))
    demo = build(args.workspace.with_name(args.workspace.name + "-demo"),
                 REPO / "examples" / "user", REPO / "examples" / "literature",
                 REPO / "examples" / "vocabulary" / "medkg-seed.obo")
    try:
        answer = demo.ask("What adverse effects come up across my notes?", mode="global")
        print(f"\n===== demo notes, global =====\n{answer.render()}")
        got, which = coverage(answer, DEMO_ADVERSE)
        checks.append(("global on the demo notes: adverse effects covered",
                       f"{got}/{len(DEMO_ADVERSE)} ({', '.join(which)})"))
    finally:
        demo.close()
    print("\ncheck | result\n---|---")
    for name, result in checks:
        print(f"{name} | {result}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
