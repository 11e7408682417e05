"""Example answers from the demo workspace, each citation checked against its source.

    python benchmarks/demo_answers.py [--dir /tmp/demo-answers]

Builds the demo workspace from examples/ (as `medkg demo` does), asks five
questions with the default mode (U-Retrieval), prints each answer with its
citations, facts and definitions, and checks that every citation's quote is
exactly ``document.text[start:end]``; exits 1 if one is not.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
REPO = Path(__file__).resolve().parents[1]
QUESTIONS = (
    "What is the first-line treatment for type 2 diabetes, and what are its risks?",
    "What can cause a dry cough?",
    "How is stroke prevented in atrial fibrillation?",
    "What are the symptoms of heart failure?",
    "Which drug treats community-acquired pneumonia?",
)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--dir", type=Path, default=Path("/tmp/demo-answers"))
    args = parser.parse_args()

    from medkg.model import Layer
    from medkg.workspace import Workspace

    examples = REPO / "examples"
    checked = wrong = 0
    with Workspace.create(args.dir, exist_ok=True) as ws:
        if len(ws.concept_index()) == 0:
            ws.load_vocabulary(examples / "vocabulary" / "medkg-seed.obo")
        for layer in (Layer.LITERATURE, Layer.USER):
            ws.ingest([examples / layer.value], layer)
        ws.build()
        for question in QUESTIONS:
            answer = ws.ask(question)
            print(answer.render())
            for c in answer.citations:
                checked += 1
                if ws.store.document(c.document_id).text[c.start:c.end] != c.quote:
                    wrong += 1
                    print(f"  !! citation [{c.n}] does not match its source")
            print("-" * 80)
    print(f"{len(QUESTIONS)} answers, {checked} citations, {checked - wrong} quotes equal "
          "their source text")
    sys.exit(1 if wrong else 0)


if __name__ == "__main__":
    main()
