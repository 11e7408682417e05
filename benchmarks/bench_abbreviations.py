"""medkg's abbreviation finder (``medkg/abbreviations.py``, Schwartz & Hearst)
against scispacy's ``AbbreviationDetector`` (the same algorithm on spaCy
tokens), on the dev splits:

1. the pairs each finds, scored against the pairs the gold annotations define:
   a mention followed by ``(`` another mention ``)`` with a concept in common
   ("valproic acid (VPA)"). Recall of those pairs (short form and long form
   exact, case-insensitive) and of their short forms; precision over the pairs
   whose short form the gold annotates in that document.
2. with ``--workspace WS`` (a workspace with the default vocabulary loaded):
   the normalisation accuracy of ``medkg eval extraction`` with each finder in
   the extraction pipeline, and the share of gold mentions that are a defined
   short form and are normalised right.

    python benchmarks/bench_abbreviations.py
    python benchmarks/bench_abbreviations.py --workspace /tmp/ws-with-default-vocab
"""

from __future__ import annotations

import argparse
import itertools
import shutil
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
DATA = REPO.parent / "shared" / "data" / "eval"
GOLD = {"BC5CDR dev": DATA / "bc5cdr" / "CDR_DevelopmentSet.PubTator.txt",
        "BioRED dev": DATA / "biored" / "Dev.PubTator"}
Finder = Callable[[str], dict[str, str]]


def scispacy_finder() -> Finder:
    import warnings

    import spacy
    from scispacy.abbreviation import AbbreviationDetector  # noqa: F401 (registers it)

    # its second matcher is empty in a text that defines no abbreviation: a warning each
    warnings.filterwarnings("ignore", message=r"\[W036\]")

    nlp = spacy.blank("en")
    nlp.add_pipe("abbreviation_detector")

    def find(text: str) -> dict[str, str]:
        found: dict[str, str] = {}
        for short in nlp(text)._.abbreviations:
            found.setdefault(short.text, short._.long_form.text)
        return found

    return find


def gold_pairs(doc: object) -> dict[str, str]:
    """Short -> long form for each "<mention> (<mention>)" of one concept."""
    text: str = doc.text  # type: ignore[attr-defined]
    mentions = sorted(doc.mentions, key=lambda m: (m.start, m.end))  # type: ignore[attr-defined]
    pairs: dict[str, str] = {}
    for a, b in itertools.pairwise(mentions):
        if (text[a.end:b.start].strip() == "(" and text[b.end:b.end + 3].lstrip().startswith(")")
                and set(a.ids) & set(b.ids) and len(b.text) < len(a.text)):
            pairs.setdefault(b.text, a.text)
    return pairs


def score_pairs(docs: list[object], finder: Finder) -> dict[str, float]:
    found = gold = hit = short_hit = relevant = right = 0
    start = time.perf_counter()
    for doc in docs:
        got = finder(doc.text)  # type: ignore[attr-defined]
        want = gold_pairs(doc)
        shorts = {m.text for m in doc.mentions}  # type: ignore[attr-defined]
        found += len(got)
        gold += len(want)
        for short, long_form in want.items():
            short_hit += short in got
            hit += short in got and got[short].lower() == long_form.lower()
        for short, long_form in got.items():
            if short in shorts and short in want:
                relevant += 1
                right += long_form.lower() == want[short].lower()
    return {"pairs found": found, "gold pairs": gold,
            "pair recall": hit / gold if gold else 0.0,
            "short-form recall": short_hit / gold if gold else 0.0,
            "precision (gold short forms)": right / relevant if relevant else 0.0,
            "pair seconds": time.perf_counter() - start}


def normalisation(workspace: Path, gold: Path, finder: Finder) -> dict[str, float]:
    """``medkg eval extraction``'s normalisation with ``finder`` in the pipeline."""
    import medkg.extraction.nlp as nlp_module
    from medkg.evaluation.extraction import evaluate
    from medkg.workspace import Workspace

    original = nlp_module.find_abbreviations
    nlp_module.find_abbreviations = finder
    try:
        with Workspace.open(workspace, access="read") as ws:
            index = ws.concept_index()
            report = evaluate(gold, index, ws.nlp(index))
    finally:
        nlp_module.find_abbreviations = original
    n = report.normalization
    return {"normalisation accuracy": n.accuracy, "scored mentions": n.scored_mentions,
            "normalised right": round(n.accuracy * n.scored_mentions),
            "entity F1": report.entities.micro.f1, "extraction seconds": report.seconds}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--workspace", type=Path, help="a workspace with the default "
                        "vocabulary loaded (copied; adds the normalisation comparison)")
    args = parser.parse_args()
    if not all(p.exists() for p in GOLD.values()):
        sys.exit(f"skip: the dev splits are not under {DATA} (the ../shared checkout is absent)")
    sys.path.insert(0, str(REPO))
    from medkg.abbreviations import find_abbreviations
    from medkg.evaluation.pubtator import read_pubtator

    finders: dict[str, Finder] = {"medkg": find_abbreviations, "scispacy": scispacy_finder()}
    copy = None
    if args.workspace:
        copy = Path(tempfile.mkdtemp(prefix="bench-abbr-")) / "ws"
        shutil.copytree(args.workspace, copy)
    for corpus, path in GOLD.items():
        docs: list[object] = list(read_pubtator(path))
        rows = {name: score_pairs(docs, finder) for name, finder in finders.items()}
        if copy is not None:
            for name, finder in finders.items():
                rows[name].update(normalisation(copy, path, finder))
        keys = list(next(iter(rows.values())))
        print(f"\n{corpus}: {len(docs)} documents")
        print("| measure | " + " | ".join(rows) + " |")
        print("|---|" + "---:|" * len(rows))
        for key in keys:
            cells = [f"{r[key]:.3f}" if isinstance(r[key], float) else str(r[key])
                     for r in rows.values()]
            print(f"| {key} | " + " | ".join(cells) + " |")
    if copy is not None:
        shutil.rmtree(copy.parent, ignore_errors=True)


if __name__ == "__main__":
    main()
