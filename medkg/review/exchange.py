"""Decisions as files, out and in: JSONL (one decision per line, every field)
or TSV (one row per decision; ``after`` as JSON), so a curation done elsewhere
can be applied and one done here can be checked by other tools."""

from __future__ import annotations

import csv
import io
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Literal

from pydantic import ValidationError

from medkg.errors import ReviewError
from medkg.model import Decision, ReviewAction
from medkg.text import parse_json

Format = Literal["jsonl", "tsv"]
TSV_COLUMNS = ("id", "at", "reviewer", "target_kind", "target", "action", "reason", "after",
               "undoes")


def format_of(path: Path) -> Format:
    suffix = path.suffix.lower()
    if suffix in (".jsonl", ".ndjson"):
        return "jsonl"
    if suffix in (".tsv", ".tab"):
        return "tsv"
    raise ReviewError(f"{path}: cannot tell the format from the name",
                      hint="name the file .jsonl or .tsv")


def dumps(decisions: Iterable[Decision], fmt: Format) -> str:
    if fmt == "jsonl":
        return "".join(d.model_dump_json() + "\n" for d in decisions)
    buffer = io.StringIO()
    writer = csv.writer(buffer, delimiter="\t", lineterminator="\n")
    writer.writerow(TSV_COLUMNS)
    for d in decisions:
        writer.writerow([d.id, d.at.isoformat(), d.reviewer, d.target_kind.value, d.target,
                         d.action.value, d.reason,
                         d.after.model_dump_json() if d.after is not None else "",
                         d.undoes or ""])
    return buffer.getvalue()


@dataclass(frozen=True)
class Row:
    """One decision read from a file: whole (JSONL), or its essentials (TSV: the
    snapshot of the target is taken from the workspace when it is applied)."""

    line: int
    id: str | None
    at: datetime | None
    reviewer: str
    target: str
    action: ReviewAction
    reason: str
    after: dict[str, object] | None
    undoes: str | None
    whole: Decision | None = None


def _bad(path: Path, line: int, what: str) -> ReviewError:
    return ReviewError(f"{path}:{line}: {what}", hint="nothing from the file was applied")


def read(path: Path) -> list[Row]:
    """Every row of a decisions file; a malformed row stops the whole import
    before anything is applied."""
    try:
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError as exc:
        raise ReviewError(f"{path}: not UTF-8 text ({exc.reason})") from exc
    rows = list(_jsonl(path, text) if format_of(path) == "jsonl" else _tsv(path, text))
    if not rows:
        raise ReviewError(f"{path}: holds no decisions")
    return rows


def _jsonl(path: Path, text: str) -> Iterator[Row]:
    for n, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        try:
            d = Decision.model_validate_json(line)
        except ValidationError as exc:
            raise _bad(path, n, f"not a decision: {exc.errors()[0]['msg']}") from exc
        yield Row(n, d.id, d.at, d.reviewer, d.target, d.action, d.reason,
                  d.after.model_dump() if d.after is not None else None, d.undoes, whole=d)


def _tsv(path: Path, text: str) -> Iterator[Row]:
    reader = csv.DictReader(io.StringIO(text), delimiter="\t")
    needed = {"reviewer", "target", "action"}
    if reader.fieldnames is None or not needed <= set(reader.fieldnames):
        raise _bad(path, 1, f"the header needs the columns {', '.join(sorted(needed))}")
    for n, row in enumerate(reader, 2):
        try:
            action = ReviewAction((row.get("action") or "").strip())
        except ValueError as exc:
            raise _bad(path, n, f"unknown action {row.get('action')!r}") from exc
        try:
            after = parse_json(row["after"]) if (row.get("after") or "").strip() else None
            at = datetime.fromisoformat(row["at"]) if (row.get("at") or "").strip() else None
        except ValueError as exc:
            raise _bad(path, n, f"unreadable after or at: {exc}") from exc
        if after is not None and not isinstance(after, dict):
            raise _bad(path, n, "after must be a JSON object")
        target = (row.get("target") or "").strip()
        if not target and action is not ReviewAction.UNDO:
            raise _bad(path, n, "no target")
        yield Row(n, (row.get("id") or "").strip() or None, at,
                  (row.get("reviewer") or "").strip(), target, action,
                  row.get("reason") or "", after, (row.get("undoes") or "").strip() or None)
