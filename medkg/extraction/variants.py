"""Sequence variants recognised by rules, as tmVar does: HGVS notation (``c.``,
``g.``, ``p.``, ``m.``, ``n.``, ``r.``), dbSNP ids (``rs121913529``), protein
changes in one- or three-letter code (``V600E``, ``Pro75Ala``, ``Arg84Gln``) and
short DNA changes (``5382insC``, ``1799T>A``, ``IVS4+1G>A``).

Variants are labelled ``VARI`` (sequence variants, within UMLS's Genes &
Molecular Sequences group); an rsID normalises to its dbSNP CURIE, other
variants keep no concept. ``medkg_variants`` is a registered spaCy component;
its spans replace any entity a statistical model put over the same text.

(No ``from __future__ import annotations`` here: spaCy's factory registry reads
the annotations at run time.)
"""

import re

from spacy.language import Language
from spacy.tokens import Doc, Span
from spacy.util import filter_spans

VARIANT_GROUP = "VARI"
_AA3 = ("Ala|Arg|Asn|Asp|Cys|Gln|Glu|Gly|His|Ile|Leu|Lys|Met|Phe|Pro|Ser|Thr|Trp|Tyr|Val"
        "|Sec|Pyl|Ter|Xaa")
_AA1 = "ACDEFGHIKLMNPQRSTVWY"
_NT = "ACGTU"
_POS = r"[-*]?\d+(?:[+-]\d+)?"
_HGVS = (
    rf"\b[cgmnr]\.{_POS}(?:_{_POS})?"
    rf"(?:[{_NT}]+>[{_NT}]+|delins[{_NT}]+|del[{_NT}]*|dup[{_NT}]*|ins[{_NT}]+|inv|=)"
    rf"|\bp\.(?:{_AA3}|[{_AA1}*])\d+(?:_(?:{_AA3}|[{_AA1}])\d+)?"
    rf"(?:delins(?:{_AA3}|[{_AA1}])+|del|dup|ins(?:{_AA3}|[{_AA1}])+|fs(?:\*|Ter|X)?\d*"
    rf"|(?:{_AA3}|[{_AA1}*X])|=)?"
)
_PATTERNS = (
    _HGVS,
    r"\brs\d{3,}\b",
    rf"\b(?:{_AA3})\s?\d{{1,5}}\s?(?:{_AA3}|X|\*|fs)(?![a-z])",
    # one-letter code, also glued to a gene or receptor name ("hGRalphaD401H")
    rf"(?<![A-Z0-9])[{_AA1}]\d{{2,5}}(?:[{_AA1}X*]|fs\*?\d*)(?![\w])",
    rf"(?<![\w.])[-+]?\d{{1,6}}(?:[+-]\d+)?"
    rf"(?:[{_NT}]>[{_NT}]|del[{_NT}]+|ins[{_NT}]+|dup[{_NT}]+|del\d+)(?![\w])",
    rf"\b[{_NT}]-\d{{2,5}}[{_NT}]\b|(?<![\w-])-\d{{2,5}}[{_NT}]{{1,2}}\b",
    r"\b(?:del|dup|ins)\d+bp\b|\bDelta\d{2,3}\b",
    rf"\bIVS\d+\s?[+-]\s?\d+\s?[{_NT}]>[{_NT}]",
)
VARIANT = re.compile("|".join(f"(?:{p})" for p in _PATTERNS))
# One-letter changes that are names, not variants (a protein, a vitamin, a cell line).
_NOT_VARIANTS = frozenset({"S100A", "S100B", "P450C"})


def find_variants(text: str) -> list[tuple[int, int]]:
    """Character spans of the variant mentions in ``text``."""
    return [(m.start(), m.end()) for m in VARIANT.finditer(text)
            if m.group(0) not in _NOT_VARIANTS]


def variant_concept(text: str) -> str:
    """The concept id of a variant mention: ``dbSNP:rsN`` for an rsID, else ""."""
    return f"dbSNP:{text}" if re.fullmatch(r"rs\d+", text) else ""


class VariantRecogniser:
    """Marks variant mentions as ``VARI`` entities; they win over overlapping ones."""

    def __init__(self, name: str) -> None:
        self.name = name

    def __call__(self, doc: Doc) -> Doc:
        spans = [doc.char_span(s, e, label=VARIANT_GROUP, alignment_mode="expand")
                 for s, e in find_variants(doc.text)]
        found = filter_spans([s for s in spans if s is not None])
        if not found:
            return doc
        taken = {i for s in found for i in range(s.start, s.end)}
        kept = [e for e in doc.ents if not taken.intersection(range(e.start, e.end))]
        doc.ents = sorted([*kept, *(Span(doc, s.start, s.end, label=VARIANT_GROUP,
                                         kb_id=variant_concept(s.text)) for s in found)],
                          key=lambda s: s.start)
        return doc


@Language.factory("medkg_variants")
def _make_variants(nlp: Language, name: str) -> VariantRecogniser:
    return VariantRecogniser(name)
