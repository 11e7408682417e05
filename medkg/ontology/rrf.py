"""A streaming reader for a UMLS Metathesaurus release in RRF format.

Reads MRCONSO (names), MRDEF (definitions), MRSTY (semantic types) and, when
present, MRREL (parents) line by line, keeping only what passes the filters
(language, source vocabularies, suppression). Each file's column count is
checked on every line; a malformed line raises a VocabularyError naming the
file and the line, and nothing is returned.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

from medkg.errors import VocabularyError
from medkg.model import Concept
from medkg.ontology.lines import utf8_lines
from medkg.ontology.semantic import group_of_tree_number

# Columns (without the trailing empty field that every RRF line ends with).
COLUMNS = {"MRCONSO.RRF": 18, "MRDEF.RRF": 8, "MRSTY.RRF": 6, "MRREL.RRF": 16}
SUPPRESSED = {"O", "E", "Y"}  # obsolete, editor-suppressed, suppressible


@dataclass(frozen=True)
class RRFFilter:
    languages: frozenset[str] = frozenset({"ENG"})
    sources: frozenset[str] | None = None  # None: every source vocabulary
    keep_suppressed: bool = False


@dataclass
class _Partial:
    name: str | None = None
    name_rank: int = 9
    synonyms: dict[str, None] = field(default_factory=dict)
    definitions: list[str] = field(default_factory=list)
    types: list[tuple[str, str]] = field(default_factory=list)
    parents: dict[str, None] = field(default_factory=dict)
    xrefs: dict[str, None] = field(default_factory=dict)


def _rows(path: Path) -> Iterator[tuple[int, list[str]]]:
    expected = COLUMNS[path.name]
    for lineno, line in utf8_lines(path):
        fields = line.rstrip("\r\n").split("|")
        if fields and fields[-1] == "":
            fields.pop()
        if len(fields) != expected:
            raise VocabularyError(
                path, lineno,
                f"expected {expected} '|'-separated columns, found {len(fields)}",
                hint="is this file from a complete, unmodified RRF release?",
            )
        yield lineno, fields


def _rank(ts: str, stt: str, ispref: str) -> int:
    """Lower is better: the UMLS preferred term is TS=P, STT=PF, ISPREF=Y."""
    return (ts != "P") * 4 + (stt != "PF") * 2 + (ispref != "Y")


def read_rrf(
    directory: Path, flt: RRFFilter = RRFFilter(), release: str | None = None
) -> list[Concept]:
    """Concepts (CUIs) of a UMLS release directory (the one holding MRCONSO.RRF)."""
    conso = directory / "MRCONSO.RRF"
    if not conso.exists():
        raise VocabularyError(directory, None, "no MRCONSO.RRF here",
                              hint="point at the META directory of a UMLS release")
    version = release or _release_name(directory)
    partial: dict[str, _Partial] = {}
    for _lineno, f in _rows(conso):
        cui, lat, ts, stt, ispref, sab, code, text, suppress = (
            f[0], f[1], f[2], f[4], f[6], f[11], f[13], f[14], f[16])
        if lat not in flt.languages or (flt.sources is not None and sab not in flt.sources):
            continue
        if suppress in SUPPRESSED and not flt.keep_suppressed:
            continue
        p = partial.setdefault(cui, _Partial())
        rank = _rank(ts, stt, ispref)
        if p.name is None or rank < p.name_rank:
            if p.name is not None:
                p.synonyms[p.name] = None
            p.name, p.name_rank = text, rank
        else:
            p.synonyms[text] = None
        if sab == "MSH" and code:
            p.xrefs[f"MESH:{code}"] = None
    for name, handler in (("MRDEF.RRF", _defs), ("MRSTY.RRF", _types), ("MRREL.RRF", _rels)):
        path = directory / name
        if path.exists():
            handler(path, partial, flt)
    concepts = []
    for cui, p in partial.items():
        assert p.name is not None
        p.synonyms.pop(p.name, None)
        tui, stn = p.types[0] if p.types else (None, None)
        concepts.append(Concept(
            id=f"UMLS:{cui}", name=p.name, synonyms=list(p.synonyms),
            definition=p.definitions[0] if p.definitions else None,
            semantic_type=tui, semantic_group=group_of_tree_number(stn) if stn else None,
            parents=list(p.parents), xrefs=list(p.xrefs), source=f"UMLS@{version}",
        ))
    if not concepts:
        raise VocabularyError(conso, None, "no concept passed the filters",
                              hint="check the language and source filters")
    return concepts


def _defs(path: Path, partial: dict[str, _Partial], flt: RRFFilter) -> None:
    for _lineno, f in _rows(path):
        cui, sab, text, suppress = f[0], f[4], f[5], f[6]
        wanted = cui in partial and (flt.sources is None or sab in flt.sources)
        if wanted and (suppress not in SUPPRESSED or flt.keep_suppressed):
            partial[cui].definitions.append(text)


def _types(path: Path, partial: dict[str, _Partial], flt: RRFFilter) -> None:
    for _lineno, f in _rows(path):
        if f[0] in partial:
            partial[f[0]].types.append((f[1], f[2]))


def _rels(path: Path, partial: dict[str, _Partial], flt: RRFFilter) -> None:
    # REL is the relation of the second concept to the first: PAR = CUI2 is CUI1's parent.
    for _lineno, f in _rows(path):
        cui1, rel, cui2, suppress = f[0], f[3], f[4], f[14]
        kept = suppress not in SUPPRESSED or flt.keep_suppressed
        if rel == "PAR" and kept and cui1 in partial and cui2 in partial and cui1 != cui2:
            partial[cui1].parents[f"UMLS:{cui2}"] = None


def _release_name(directory: Path) -> str:
    # A release sits in e.g. 2024AA/META; fall back to the directory name.
    for part in (directory.name, directory.parent.name):
        if len(part) == 6 and part[:4].isdigit():
            return part
    return directory.name
