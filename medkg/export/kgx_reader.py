"""Reading a KGX graph (TSV or JSON Lines, nodes and edges) into checked records.

Every row is checked before anything is used: a row that cannot be read, a
node without id or name, a category or predicate medkg cannot map, a bad
boolean or confidence, an edge whose end is not a node of the graph: each is
reported as ``file:line: reason``, all of them at once, and the graph is not
returned (so nothing is half-imported).
"""

from __future__ import annotations

import csv
import json
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

from medkg.errors import MedKGError
from medkg.export.biolink import BiolinkMap, biolink_map
from medkg.model import Predicate, Qualifiers
from medkg.text import clean_text, parse_json

MAX_ERRORS_SHOWN = 20
T = TypeVar("T")


class KgxImportError(MedKGError):
    """A KGX graph with bad rows; ``problems`` lists every one as ``file:line: reason``."""

    def __init__(self, problems: list[str]) -> None:
        shown = "\n  ".join(problems[:MAX_ERRORS_SHOWN])
        more = len(problems) - MAX_ERRORS_SHOWN
        super().__init__(
            f"{len(problems)} bad row(s) in the KGX graph, nothing imported:\n  {shown}"
            + (f"\n  ... and {more} more" if more > 0 else ""),
            hint="fix the rows named and import again")
        self.problems = problems


@dataclass(frozen=True)
class KgxNode:
    id: str
    name: str
    group: str  # semantic group, from the Biolink category
    category: str  # the Biolink category it was mapped from
    description: str | None
    synonyms: tuple[str, ...]
    where: str  # file:line


@dataclass(frozen=True)
class KgxEdge:
    subject: str
    predicate: Predicate
    object: str
    qualifiers: Qualifiers
    confidence: float
    publications: tuple[str, ...]
    supporting_text: tuple[str, ...]
    method: str | None
    level: int
    where: str


@dataclass
class KgxGraph:
    nodes: dict[str, KgxNode] = field(default_factory=dict)
    edges: list[KgxEdge] = field(default_factory=list)
    files: list[str] = field(default_factory=list)
    merges_skipped: int = 0  # biolink:same_as edges: entity resolution is the build's


def kgx_files(paths: Sequence[Path]) -> tuple[list[Path], list[Path]]:
    """The node and edge files among ``paths`` (files, or directories holding KGX's
    ``*nodes.tsv`` / ``*edges.tsv`` / ``*nodes.jsonl`` / ``*edges.jsonl``)."""
    files: list[Path] = []
    for p in paths:
        files.extend(sorted(x for x in p.iterdir() if x.is_file()) if p.is_dir() else [p])
    nodes = [f for f in files if f.name.endswith(("nodes.tsv", "nodes.jsonl"))]
    edges = [f for f in files if f.name.endswith(("edges.tsv", "edges.jsonl"))]
    missing = [str(p) for p in paths if not p.exists()]
    if missing:
        raise MedKGError(f"no such file: {', '.join(missing)}")
    if not nodes:
        raise MedKGError("no KGX node file (a name ending in nodes.tsv or nodes.jsonl) among "
                         + ", ".join(str(p) for p in paths),
                         hint="name the node and edge files, or the directory that holds them")
    return nodes, edges


def _rows(path: Path) -> Iterator[tuple[int, dict[str, Any] | str]]:
    """(line, row) pairs; a row that cannot be read is its reason instead."""
    try:
        with path.open(encoding="utf-8", newline="") as f:
            if path.suffix == ".jsonl":
                for n, line in enumerate(f, start=1):
                    if not line.strip():
                        continue
                    try:
                        row = parse_json(line)
                    except json.JSONDecodeError as exc:
                        yield n, f"not JSON: {exc.msg}"
                        continue
                    except ValueError as exc:
                        yield n, f"not JSON: {exc}"
                        continue
                    if not isinstance(row, dict):
                        yield n, "not a JSON object"
                        continue
                    try:
                        yield n, _clean(row)
                    except RecursionError:
                        yield n, "not JSON: nested too deeply"
            else:
                reader = csv.reader(f, delimiter="\t", quoting=csv.QUOTE_NONE)
                header = next(reader, None)
                header = [clean_text(h) for h in header] if header else header
                if not header:
                    yield 1, "empty file: no header row"
                    return
                for row in reader:
                    if not any(row):
                        continue
                    if len(row) != len(header):
                        yield reader.line_num, (f"{len(row)} columns where the header has "
                                                f"{len(header)}")
                        continue
                    yield reader.line_num, {k: _tsv_cell(k, clean_text(v))
                                            for k, v in zip(header, row, strict=True)}
    except UnicodeDecodeError as exc:
        yield 0, f"not UTF-8 text ({exc.reason} at byte {exc.start})"
    except OSError as exc:
        yield 0, f"cannot read: {exc.strerror or exc}"


def _clean(value: Any) -> Any:
    """A parsed row with every string normalised as text entering medkg is."""
    if isinstance(value, str):
        return clean_text(value)
    if isinstance(value, dict):
        return {clean_text(k): _clean(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_clean(v) for v in value]
    return value


_LISTS = frozenset({"category", "synonym", "xref", "publications", "supporting_text",
                    "provided_by", "medkg_evidence"})


def _tsv_cell(column: str, value: str) -> Any:
    if column in _LISTS:
        return [v for v in value.split("|") if v]
    return value if value != "" else None


def _as_list(value: Any) -> list[str]:
    if value is None:
        return []
    return [str(v) for v in value] if isinstance(value, list) else [str(value)]


def _bool(value: Any, column: str) -> bool:
    if value is None or isinstance(value, bool):
        return bool(value)
    text = str(value).strip().lower()
    if text in ("true", "1", "yes", "t"):
        return True
    if text in ("false", "0", "no", "f", ""):
        return False
    raise ValueError(f"{column} is {value!r}, not true or false")


def _node(row: dict[str, Any], where: str, bl: BiolinkMap) -> KgxNode:
    node_id = str(row.get("id") or "").strip()
    if not node_id or ":" not in node_id:
        raise ValueError(f"id {node_id!r} is not a CURIE")
    name = str(row.get("name") or "").strip()
    if not name:
        raise ValueError(f"node {node_id} has no name")
    categories = _as_list(row.get("category"))
    mapped = next(((c, g) for c in categories if (g := bl.group_of(c))), None)
    if mapped is None:
        given = ", ".join(categories) or "none"
        known = ", ".join(sorted(set(bl.groups.values())))
        raise ValueError(f"node {node_id}: no category medkg maps ({given}; known: {known} "
                         "and more "
                         "specific ones in medkg/export/data/biolink.toml)")
    return KgxNode(node_id, name, mapped[1], mapped[0], row.get("description") or None,
                   tuple(_as_list(row.get("synonym"))), where)


def _edge(row: dict[str, Any], where: str, bl: BiolinkMap) -> KgxEdge:
    missing = [c for c in ("subject", "predicate", "object") if not row.get(c)]
    if missing:
        raise ValueError(f"no {', '.join(missing)}")
    predicate = bl.predicate(str(row["predicate"]))
    if predicate is None:
        raise ValueError(f"predicate {row['predicate']} is not one medkg maps "
                         f"(biolink:{', biolink:'.join(p.biolink for p in Predicate)} and the "
                         "[import_predicates] of medkg/export/data/biolink.toml)")
    score = row.get("has_confidence_score", row.get("confidence"))
    try:
        confidence = 1.0 if score in (None, "") else float(score)
    except (TypeError, ValueError):
        raise ValueError(f"has_confidence_score {score!r} is not a number") from None
    if not 0.0 <= confidence <= 1.0:
        raise ValueError(f"has_confidence_score {confidence} is not in [0, 1]")
    level = row.get("medkg_level")
    try:
        level_n = int(level) if level not in (None, "") else 0
    except (TypeError, ValueError):
        raise ValueError(f"medkg_level {level!r} is not an integer") from None
    qualifiers = Qualifiers(
        negated=_bool(row.get("negated"), "negated"),
        uncertain=_bool(row.get("medkg_uncertain"), "medkg_uncertain"),
        hypothetical=_bool(row.get("medkg_hypothetical"), "medkg_hypothetical"),
        historical=_bool(row.get("medkg_historical"), "medkg_historical"),
        experiencer=str(row.get("medkg_experiencer") or "patient"),
        population=row.get("medkg_population") or None)
    return KgxEdge(str(row["subject"]), predicate, str(row["object"]), qualifiers, confidence,
                   tuple(_as_list(row.get("publications"))),
                   tuple(t for t in _as_list(row.get("supporting_text")) if t.strip()),
                   row.get("medkg_method") or None, level_n, where)


def _checked(files: list[Path], build: Callable[[dict[str, Any], str], T | None],
             problems: list[str]) -> Iterator[T]:
    """The records ``build`` makes of the rows of ``files``; a row that cannot be
    read or that ``build`` refuses (ValueError) goes to ``problems``, with its place."""
    for path in files:
        for line, row in _rows(path):
            where = f"{path}:{line}"
            try:
                if isinstance(row, str):
                    raise ValueError(row)
                record = build(row, where)
            except ValueError as exc:
                problems.append(f"{where}: {exc}")
                continue
            if record is not None:
                yield record


def read_kgx(paths: Sequence[Path]) -> KgxGraph:
    """Read and check a whole KGX graph; :class:`KgxImportError` names every bad row."""
    bl = biolink_map()
    node_files, edge_files = kgx_files(paths)
    graph = KgxGraph(files=[str(f) for f in (*node_files, *edge_files)])
    problems: list[str] = []
    for node in _checked(node_files, lambda row, where: _node(row, where, bl), problems):
        seen = graph.nodes.get(node.id)
        if seen is not None and seen.name != node.name:
            problems.append(f"{node.where}: node {node.id} again, named {node.name!r} here and "
                            f"{seen.name!r} at {seen.where}")
        graph.nodes.setdefault(node.id, node)

    def edge(row: dict[str, Any], where: str) -> KgxEdge | None:
        if row.get("predicate") == "biolink:same_as":
            graph.merges_skipped += 1
            return None
        found = _edge(row, where, bl)
        absent = [e for e in (found.subject, found.object) if e not in graph.nodes]
        if absent:
            raise ValueError(f"{' and '.join(absent)} not a node of the graph")
        return found

    graph.edges.extend(_checked(edge_files, edge, problems))
    if problems:
        raise KgxImportError(problems)
    return graph
