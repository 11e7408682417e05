"""Tabular vocabularies: MeSH descriptor label lists and simple TSV/CSV files.

Simple files have a header with at least ``id`` and ``name``; optional columns
are ``synonyms`` and ``parents`` (``|``-separated), ``definition``,
``semantic_type`` and ``semantic_group``. The MeSH list is the
``id,scheme,subject`` CSV (descriptor IRI, scheme, label).
"""

from __future__ import annotations

import csv
from pathlib import Path

from medkg.errors import VocabularyError
from medkg.model import Concept

MESH_IRI = "https://id.nlm.nih.gov/mesh/"


def _open_rows(path: Path) -> tuple[list[str], list[tuple[int, dict[str, str]]]]:
    delimiter = "\t" if path.suffix.lower() in {".tsv", ".tab"} else ","
    try:
        text = path.read_text(encoding="utf-8-sig")
    except UnicodeDecodeError as exc:
        raise VocabularyError(path, None, f"not valid UTF-8 ({exc.reason})") from exc
    reader = csv.DictReader(text.splitlines(), delimiter=delimiter)
    header = [h.strip() for h in reader.fieldnames or []]
    rows = []
    for lineno, row in enumerate(reader, start=2):
        if None in row:  # more cells than header columns
            raise VocabularyError(path, lineno, f"more columns than the header's {len(header)}")
        if any(v is None for v in row.values()):
            raise VocabularyError(path, lineno, f"fewer columns than the header's {len(header)}")
        rows.append((lineno, {k.strip(): (v or "").strip() for k, v in row.items()}))
    return header, rows


def _split(row: dict[str, str], key: str) -> list[str]:
    return [x.strip() for x in row.get(key, "").split("|") if x.strip()]


def is_mesh_list(path: Path) -> bool:
    with path.open(encoding="utf-8-sig", errors="replace") as f:
        return f.readline().strip().lower() == "id,scheme,subject"


def read_mesh_list(path: Path, version: str = "unversioned") -> list[Concept]:
    _header, rows = _open_rows(path)
    concepts = []
    for lineno, row in rows:
        iri, label = row.get("id", ""), row.get("subject", "")
        if not iri.startswith(MESH_IRI) or not label:
            raise VocabularyError(path, lineno, f"expected a MeSH descriptor IRI and a label, "
                                  f"got {iri[:40]!r}")
        descriptor = iri[len(MESH_IRI):]
        concepts.append(Concept(id=f"MESH:{descriptor}", name=label, source=f"MeSH@{version}"))
    return concepts


def read_table(path: Path, source: str | None = None) -> list[Concept]:
    header, rows = _open_rows(path)
    missing = {"id", "name"} - set(header)
    if missing:
        raise VocabularyError(path, 1, f"header lacks column(s) {', '.join(sorted(missing))}",
                              hint="a vocabulary table needs at least 'id' and 'name'")
    src = source or path.stem
    concepts = []
    for lineno, row in rows:
        if not row["id"] or not row["name"]:
            raise VocabularyError(path, lineno, "empty id or name")
        concepts.append(Concept(
            id=row["id"], name=row["name"], synonyms=_split(row, "synonyms"),
            definition=row.get("definition") or None,
            semantic_type=row.get("semantic_type") or None,
            semantic_group=row.get("semantic_group") or None,
            parents=_split(row, "parents"), xrefs=_split(row, "xrefs"), source=src,
        ))
    if not concepts:
        raise VocabularyError(path, None, "no rows")
    return concepts
