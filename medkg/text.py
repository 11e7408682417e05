"""Sentence spans over raw text, with offsets into that text.

One splitter serves chunking, entity context and answer quotes, so a quote
cut from a chunk is always a substring of the document at its offsets.
"""

from __future__ import annotations

import re

# Words that end in a period without ending a sentence ("vs. placebo", "Fig. 2",
# "et al. showed"); matched case-insensitively as whole words. Units ("30 min.") and
# "etc." end sentences too often to be listed.
ABBREVIATIONS = (
    "al", "approx", "ca", "cf", "dr", "eq", "fig", "figs", "inc", "incl", "mr", "mrs", "no",
    "nos", "pp", "prof", "ref", "refs", "resp", "sp", "spp", "st", "subsp", "var", "viz",
    "vol", "vs",
)


def _not_after_abbreviation() -> str:
    """Negative look-behinds (one per length: ``re`` needs a fixed width each) that
    stop a break after an abbreviation, a dotted one ("i.v.", "b.i.d.", "e.g.")
    or a capital initial ("E. coli", "J. Smith")."""
    by_length: dict[int, list[str]] = {}
    for word in ABBREVIATIONS:
        by_length.setdefault(len(word), []).append(word)
    words = "".join(rf"(?<!\b(?i:{'|'.join(ws)})\.)" for _, ws in sorted(by_length.items()))
    return words + r"(?<!\.[A-Za-z]\.)(?<!\b[A-Z]\.)"


# A sentence ends at . ? ! followed by whitespace (unless the period closes an
# abbreviation, or the next word is all lower case: "approx. five", "i.v. bolus"),
# at a blank line, or at a line break before a Markdown heading, a list item or a
# "Label:" line of a note.
SENTENCE_BREAK = (
    rf"(?<=[.?!]){_not_after_abbreviation()}\s+(?![a-z][a-z-]*[\s,;:.)])"
    r"|\n[ \t]*\n\s*"
    r"|\n(?=[ \t]*(?:#|[-*+] |\d+[.)] |[A-Z][A-Za-z /-]{0,30}:))"
)
_BREAK = re.compile(SENTENCE_BREAK)


def split_pieces(text: str) -> list[tuple[int, int]]:
    """Spans of the pieces between breaks, exactly as ``re.split(SENTENCE_BREAK)`` yields."""
    spans: list[tuple[int, int]] = []
    start = 0
    for match in _BREAK.finditer(text):
        spans.append((start, match.start()))
        start = match.end()
    spans.append((start, len(text)))
    return spans


def sentence_spans(text: str, start: int = 0, end: int | None = None) -> list[tuple[int, int]]:
    """Non-empty sentence spans within ``text[start:end]``, whitespace trimmed."""
    end = len(text) if end is None else end
    out: list[tuple[int, int]] = []
    for s, e in split_pieces(text[start:end]):
        piece = text[start + s : start + e]
        lead = len(piece) - len(piece.lstrip())
        trail = len(piece) - len(piece.rstrip())
        if e - s - lead - trail > 0:
            out.append((start + s + lead, start + e - trail))
    return out
