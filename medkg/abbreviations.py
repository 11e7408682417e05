"""Abbreviations defined in a text: "valproic acid (VPA)" -> {"VPA": "valproic acid"}.

The Schwartz & Hearst (2003) algorithm: for each parenthesised short form,
take the words before it as candidate long form, then match the short form's
characters right to left inside it; the first character must start a word.
"""

from __future__ import annotations

import re

_PAREN = re.compile(r"\(([^()]{1,12})\)")


def _short_form_ok(short: str) -> bool:
    return (2 <= len(short) <= 10 and any(c.isalpha() for c in short)
            and short[0].isalnum() and len(short.split()) <= 2)


def _best_long_form(short: str, candidate: str) -> str | None:
    s, lf = short.lower(), candidate.lower()
    si, li = len(s) - 1, len(lf) - 1
    while si >= 0:
        ch = s[si]
        if not ch.isalnum():
            si -= 1
            continue
        while li >= 0 and (lf[li] != ch or (si == 0 and li > 0 and lf[li - 1].isalnum())):
            li -= 1
        if li < 0:
            return None
        si -= 1
        li -= 1
    start = li + 1
    long_form = candidate[start:].strip()
    return long_form if long_form and len(long_form) > len(short) else None


def find_abbreviations(text: str) -> dict[str, str]:
    """Short form -> long form for every abbreviation the text defines."""
    found: dict[str, str] = {}
    for match in _PAREN.finditer(text):
        short = match.group(1).strip()
        if not _short_form_ok(short) or short in found:
            continue
        before = text[: match.start()].rstrip()
        sentence_start = max(before.rfind(". "), before.rfind("\n")) + 1
        words = before[sentence_start:].split()
        window = words[-min(len(short) + 5, len(short) * 2):]
        long_form = _best_long_form(short, " ".join(window))
        if long_form:
            found[short] = long_form.strip(" ,;:")
    return found
