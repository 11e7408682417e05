"""Qualifier (ConText) accuracy on a table of sentences with an expected target.

The table has columns ``sentence, term, negated, uncertain, hypothetical,
historical, experiencer``; the target is the entity whose text equals
``term``. A sentence counts as right for a qualifier when the predicted value
equals the expected one; a missing target counts as wrong for every qualifier.
"""

from __future__ import annotations

import csv
from pathlib import Path

from spacy.language import Language

from medkg.extraction.nlp import qualifiers_of

FLAGS = ("negated", "uncertain", "hypothetical", "historical")


def evaluate_qualifiers(table: Path, nlp: Language) -> dict[str, float | int | list[str]]:
    rows = list(csv.DictReader(table.read_text(encoding="utf-8").splitlines(), delimiter="\t"))
    right = dict.fromkeys((*FLAGS, "experiencer", "all"), 0)
    misses: list[str] = []
    for row in rows:
        doc = nlp(row["sentence"])
        target = next((e for e in doc.ents if e.text.lower() == row["term"].lower()), None)
        if target is None:
            misses.append(f"target not found: {row['term']!r} in {row['sentence']!r}")
            continue
        q = qualifiers_of(target)
        ok_all = True
        for flag in FLAGS:
            ok = getattr(q, flag) == (row[flag] == "1")
            right[flag] += ok
            ok_all &= ok
        ok = q.experiencer == row["experiencer"]
        right["experiencer"] += ok
        right["all"] += ok_all and ok
        if not (ok_all and ok):
            misses.append(f"{row['sentence']!r}: got {q.model_dump(exclude={'population'})}")
    n = len(rows)
    return {"sentences": n, **{k: round(v / n, 4) for k, v in right.items()}, "misses": misses}
