"""A streaming reader for OBO 1.4 flat files (Disease Ontology, HPO, our seed).

Only ``[Term]`` stanzas become concepts. Malformed lines raise a
:class:`VocabularyError` naming the file and line; nothing is yielded for a
file that fails, because callers collect the whole list before storing it.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

from medkg.errors import VocabularyError
from medkg.model import Concept
from medkg.ontology.lines import utf8_lines

_QUOTED = re.compile(r'^"((?:[^"\\]|\\.)*)"\s*(.*)$')
_SEMANTIC_PROPS = {"semantic_group", "medkg:semantic_group"}
_SEMANTIC_TYPE_PROPS = {"semantic_type", "medkg:semantic_type"}


def _unquote(value: str, path: Path, lineno: int) -> tuple[str, str]:
    match = _QUOTED.match(value)
    if not match:
        raise VocabularyError(path, lineno, f"expected a quoted string, got {value[:60]!r}")
    text = re.sub(r"\\(.)", r"\1", match.group(1))
    return text, match.group(2)


def _strip_comment(value: str) -> str:
    # "DOID:4 ! disease" -> "DOID:4"; a '!' inside quotes never reaches here.
    return value.split(" !", 1)[0].strip()


class _Stanza:
    def __init__(self, lineno: int) -> None:
        self.lineno = lineno
        self.fields: dict[str, list[tuple[str, int]]] = {}

    def add(self, tag: str, value: str, lineno: int) -> None:
        self.fields.setdefault(tag, []).append((value, lineno))

    def first(self, tag: str) -> str | None:
        values = self.fields.get(tag)
        return values[0][0] if values else None


def _to_concept(stanza: _Stanza, path: Path, source: str) -> Concept:
    concept_id = stanza.first("id")
    if not concept_id:
        raise VocabularyError(path, stanza.lineno, "[Term] stanza without an id")
    name = stanza.first("name")
    obsolete = (stanza.first("is_obsolete") or "").lower() == "true"
    if not name:
        raise VocabularyError(path, stanza.lineno, f"term {concept_id} has no name")
    definition: str | None = None
    if (raw_def := stanza.fields.get("def")) is not None:
        definition, _ = _unquote(raw_def[0][0], path, raw_def[0][1])
    synonyms = []
    for value, lineno in stanza.fields.get("synonym", []):
        text, rest = _unquote(value, path, lineno)
        scope = rest.split(" ", 1)[0] if rest else "RELATED"
        if scope in {"EXACT", "RELATED", "NARROW"}:  # a BROAD synonym names something wider
            synonyms.append(text)
    group = semantic_type = None
    for value, lineno in stanza.fields.get("property_value", []):
        prop, _, rest = value.partition(" ")
        if prop in _SEMANTIC_PROPS | _SEMANTIC_TYPE_PROPS:
            text, _ = _unquote(rest.strip(), path, lineno)
            if prop in _SEMANTIC_PROPS:
                group = text
            else:
                semantic_type = text
    return Concept(
        id=concept_id.strip(),
        name=name.strip(),
        synonyms=list(dict.fromkeys(s for s in synonyms if s != name)),
        definition=definition,
        semantic_group=group,
        semantic_type=semantic_type,
        parents=[_strip_comment(v) for v, _ in stanza.fields.get("is_a", [])],
        xrefs=[_strip_comment(v).split(" ", 1)[0] for v, _ in stanza.fields.get("xref", [])],
        source=source,
        obsolete=obsolete,
        replaced_by=_strip_comment(stanza.first("replaced_by") or "") or None,
    )


def read_obo(path: Path) -> tuple[dict[str, str], list[Concept]]:
    """Parse an OBO file into (header, concepts). Raises VocabularyError on bad input."""
    header: dict[str, str] = {}
    concepts: list[Concept] = []
    for kind, payload in _stanzas(path):
        if kind == "header":
            assert isinstance(payload, dict)
            header = payload
        else:
            assert isinstance(payload, _Stanza)
            name = header.get("ontology", path.stem)
            source = f"{name}@{header.get('data-version', 'unversioned')}"
            concepts.append(_to_concept(payload, path, source))
    if not concepts:
        raise VocabularyError(path, None, "no [Term] stanzas found: is this an OBO file?")
    return header, concepts


def _stanzas(path: Path) -> Iterator[tuple[str, dict[str, str] | _Stanza]]:
    header: dict[str, str] = {}
    current: _Stanza | None = None
    in_header = True
    for lineno, raw in utf8_lines(path):
        line = raw.strip()
        if not line or line.startswith("!"):
            continue
        if line.startswith("[") and line.endswith("]"):
            if in_header:
                yield "header", header
                in_header = False
            if current is not None:
                yield "term", current
            current = _Stanza(lineno) if line == "[Term]" else None
            continue
        tag, sep, value = line.partition(":")
        if not sep or not tag or " " in tag:
            raise VocabularyError(path, lineno, f"expected 'tag: value', got {line[:60]!r}")
        value = value.strip()
        if in_header:
            header.setdefault(tag, value)
        elif current is not None:
            current.add(tag, value, lineno)
    if in_header:
        yield "header", header
    if current is not None:
        yield "term", current
