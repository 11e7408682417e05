"""Learn the normalisation lexicon (medkg/models/lexicon/mentions.json).

    python training/train_lexicon.py \
        --train ../shared/data/eval/bc5cdr/CDR_TrainingSet.PubTator.txt \
        --train ../shared/data/eval/biored/Train.PubTator

Every gold chemical and disease mention with one MeSH id votes for that id
under its normalised text; a text keeps its majority id when at least 80% of
its mentions agree (acronyms also need two mentions). Only ids the default
vocabulary resolves are written, so the file holds nothing a default user
cannot use. Development splits are never read.
"""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
MESH_ID = re.compile(r"^[CD]\d{6,9}$")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--train", type=Path, action="append", required=True)
    parser.add_argument("--out", type=Path,
                        default=REPO / "medkg" / "models" / "lexicon" / "mentions.json")
    args = parser.parse_args()
    missing = [p for p in args.train if not p.exists()]
    if missing:
        sys.exit(f"skip: {missing[0]} not found (the ../shared checkout is absent)")

    from medkg.evaluation.pubtator import read_pubtator
    from medkg.extraction.lexicon import Lexicon
    from medkg.ontology.index import ConceptIndex
    from medkg.ontology.loaders import load_default

    index = ConceptIndex(load_default().concepts)
    pairs = []
    documents = 0
    for path in args.train:
        for doc in read_pubtator(path):
            documents += 1
            pairs += [(m.text, f"MESH:{m.ids[0]}") for m in doc.mentions
                      if len(m.ids) == 1 and MESH_ID.match(m.ids[0])]
    learned = Lexicon.learn(pairs)
    entries = {}
    for key, concept_id in learned.entries.items():
        concept = index.resolve(concept_id)
        if concept is not None:
            entries[key] = concept_id
    sources = ", ".join(p.name for p in args.train)
    lexicon = Lexicon(entries, about=f"learned from {sources} ({documents} documents, "
                      f"{len(pairs)} mentions); {len(learned)} consistent texts, "
                      f"{len(entries)} resolvable in the default vocabulary")
    lexicon.save(args.out)
    print(lexicon.about)
    print(f"lexicon written to {args.out}")


if __name__ == "__main__":
    main()
