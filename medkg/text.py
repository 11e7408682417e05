"""Sentence spans over raw text, with offsets into that text.

One splitter serves chunking, entity context and answer quotes, so a quote
cut from a chunk is always a substring of the document at its offsets.
"""

from __future__ import annotations

import os
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
    """Non-empty sentence spans within ``text[start:end]``, whitespace trimmed; a
    text's title line is a sentence of its own (see :func:`title_end`)."""
    end = len(text) if end is None else end
    out: list[tuple[int, int]] = []
    title = title_end(text) if start == 0 else None
    for s, e in split_pieces(text[start:end]):
        pieces = [(s, title), (title, e)] if title is not None and s < title < e else [(s, e)]
        for s, e in pieces:
            piece = text[start + s : start + e]
            lead = len(piece) - len(piece.lstrip())
            trail = len(piece) - len(piece.rstrip())
            if e - s - lead - trail > 0:
                out.append((start + s + lead, start + e - trail))
    return out


_TITLE_LINE = re.compile(r"[ \t]*([^\n]{1,150}?)[ \t]*\n[ \t]*(?=[A-Z0-9])")
_OPEN_END = frozenset({"a", "an", "and", "at", "by", "for", "from", "in", "of", "on", "or",
                       "the", "to", "with", "without", "vs", "versus"})


def title_end(text: str) -> int | None:
    """Where a text's title line ends, when it starts with one: a first line of at
    most twelve words, without a sentence's closing punctuation or a word that
    leaves it open ("... patients with"), followed by a line that starts a new
    sentence. "Warfarin pharmacology\nWarfarin is ..." quotes from "Warfarin is"."""
    match = _TITLE_LINE.match(text)
    if match is None:
        return None
    line = match.group(1)
    words = line.split()
    closed = re.search(r"[.?!]\s", line) or line.endswith((".", "?", "!", ":", ";", ","))
    if closed or not words or len(words) > 12 or words[-1].lower() in _OPEN_END:
        return None
    return match.end(1)


# -- text entering medkg ------------------------------------------------------
#
# One normalisation for every text that comes in from outside (document text,
# titles, JSON fields, file names, questions, vocabulary terms): what no output
# format can carry goes here, once, so no reader, store or writer meets it.
# Lone surrogates (from JSON's "\ud800" or undecodable bytes in a file name or an
# argument) and the C0 controls that XML 1.0 forbids (PDF text carries \x08 and
# \x0c) become U+FFFD or a space; U+FFFE/U+FFFF too. Tabs and line breaks stay.
# The length is kept, so offsets into the text mean the same before and after.

_FORBIDDEN = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ud800-\udfff\ufffe\uffff]")
_REPLACEMENT = "\ufffd"


def _replace(match: re.Match[str]) -> str:
    char = match.group()
    if char in "\x0b\x0c":  # vertical tab, form feed (a page break in PDF text)
        return "\n"
    return " " if char < "\x20" else _REPLACEMENT


def clean_text(text: str) -> str:
    """``text`` with lone surrogates, XML-forbidden controls and non-characters
    replaced (same length; a form feed becomes a line break, ``\\r`` is kept)."""
    return _FORBIDDEN.sub(_replace, text)


def path_text(path: str | os.PathLike[str]) -> str:
    """A file path as text that every store and format can carry: bytes that
    are not UTF-8 in a name (kept by Python as surrogates) are written as
    ``\\xff`` escapes, so two names never collapse into one."""
    raw = os.fsencode(path)
    return clean_text(raw.decode("utf-8", "backslashreplace"))


def parse_json(text: str) -> object:
    """``json.loads`` for text from outside: nesting too deep for the parser is a
    ``ValueError`` like any other malformed JSON, never a ``RecursionError``."""
    import json

    try:
        return json.loads(text)
    except RecursionError:
        raise ValueError("nested too deeply (arrays or objects inside each other "
                         "hundreds of levels down)") from None
