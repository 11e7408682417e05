"""What every medkg command shares: consoles, error reporting, progress bars."""

from __future__ import annotations

import errno
import json
import os
import sqlite3
import sys
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, TypeVar

import typer
from pydantic import BaseModel
from rich.console import Console
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    TaskID,
    TextColumn,
    TimeElapsedColumn,
)
from rich.text import Text
from typer.core import TyperGroup

from medkg.config import Settings
from medkg.errors import MedKGError

if TYPE_CHECKING:
    from medkg.components import Components
    from medkg.workspace import Workspace

# Neither console reads markup or highlights: what they print is user text (notes,
# quotes, titles, paths), and a "[/ref]" or "[see addendum]" in it must come out as
# written. Styled labels are built with label().
console = Console(stderr=True, markup=False, highlight=False)
out = Console(markup=False, highlight=False)


def label(name: str, style: str, text: str) -> Text:
    """``name`` in ``style``, then ``text`` exactly as it is."""
    return Text.assemble((name, style), " ", text)

WorkspaceOpt = Annotated[
    Path, typer.Option("--workspace", "-w", help="workspace directory", show_default=True)
]
# How medkg logs in to a SPARQL server (store copy --to sparql, publish): named once.
UpdateUrlOpt = Annotated[str, typer.Option(help="sparql: the update endpoint (default: the "
                                                "query endpoint)")]
GraphStoreUrlOpt = Annotated[str, typer.Option(
    help="sparql: a Graph Store Protocol endpoint for bulk inserts (Virtuoso: "
         "http://HOST:8890/sparql-graph-crud)")]
UserOpt = Annotated[str, typer.Option(help="user to log in as")]
PasswordEnvOpt = Annotated[str, typer.Option(
    help="NAME of the environment variable holding the password")]
AuthOpt = Annotated[str, typer.Option(help="sparql: basic or digest")]
T = TypeVar("T")
R = TypeVar("R")


JsonOpt = Annotated[bool, typer.Option(
    "--json", help="print JSON (the same shape as the HTTP API's) instead of a table")]


def print_json(value: BaseModel | Sequence[BaseModel]) -> None:
    """A model, or a list of them, as indented JSON on stdout (no markup, no wrapping)."""
    if isinstance(value, BaseModel):
        text = value.model_dump_json(indent=2)
    else:
        text = json.dumps([v.model_dump(mode="json") for v in value], indent=2,
                          ensure_ascii=False)
    sys.stdout.write(text + "\n")


def _fail(exc: MedKGError) -> None:
    console.print(label("error:", "bold red", exc.message), soft_wrap=True)
    if exc.hint:
        console.print(label("hint:", "yellow", exc.hint), soft_wrap=True)
    raise typer.Exit(code=1)


def open_to_read(path: Path) -> Workspace:
    """A workspace for a command that only reads it: written by no one, it opens
    as usual; while another process writes it (a build), it opens read-only and
    says so (the answer reflects what that process has committed)."""
    from medkg.workspace import Workspace

    ws = _run(lambda: Workspace.open(path, access="auto"))
    if ws.read_only:
        who = (f"the medkg server at {ws.served_by}" if ws.served_by is not None
               else ws.busy.describe() if ws.busy is not None else "another process")
        console.print(label("note:", "yellow", f"{who} is writing this workspace: reading "
                            "what it has committed so far"), soft_wrap=True)
    return ws


def read_listing(workspace: Path, read: Callable[[Components], R], as_json: bool) -> R | None:
    """``read`` over the workspace's parts, opened to read; with ``as_json`` what it
    returns is printed as JSON and None comes back (else the caller draws a table)."""
    with open_to_read(workspace) as ws:
        rows = _run(lambda: read(ws.parts))
    if as_json:
        print_json(rows)  # type: ignore[arg-type]  # a model or a list of them
        return None
    return rows


def _run(action: Callable[[], T]) -> T:
    try:
        return action()
    except MedKGError as exc:
        _fail(exc)
        raise  # unreachable: _fail exits


def as_medkg_error(exc: OSError | sqlite3.Error, workspace: Path | None = None
                   ) -> MedKGError:
    """A file-system or SQLite failure as one line with a hint, not a traceback."""
    from medkg.files import disk_full_hint, is_disk_full

    if is_disk_full(exc):  # ENOSPC, RocksDB's and SQLite's words for it
        where = getattr(exc, "filename", None) or workspace
        return MedKGError(f"{where or 'the workspace'}: cannot write: {exc}",
                          hint=disk_full_hint(where))
    if isinstance(exc, sqlite3.Error):
        text = str(exc)
        hint = ("another medkg process is using this workspace: wait for it" if "locked" in text
                else "the workspace is read-only for you" if "readonly" in text
                else "check the workspace's disk and permissions")
        return MedKGError(f"a workspace database failed: {text}", hint=hint)
    where = f"{exc.filename}: " if exc.filename else ""
    hints = {errno.EROFS: "that file system is read-only",
             errno.EACCES: "you may not write there: check the permissions",
             errno.EPERM: "you may not write there: check the permissions"}
    return MedKGError(f"{where}{exc.strerror or exc}",
                      hint=hints.get(exc.errno or 0, "check the path, the disk and permissions"))


class Group(TyperGroup):
    """Every command's medkg errors, OS errors (a full disk, a read-only
    directory) and SQLite errors end as ``error:`` and ``hint:`` lines and exit
    status 1, wherever in the command they happen."""

    def invoke(self, ctx: Any) -> Any:
        # What a command writes is its user's alone (files 0600, folders 0700),
        # RocksDB's and SQLite's files included, which medkg does not open itself.
        os.umask(0o077)
        try:
            return super().invoke(ctx)
        except MedKGError as exc:
            _fail(exc)
        except (OSError, sqlite3.Error) as exc:
            if isinstance(exc, BrokenPipeError):
                raise
            workspace = (ctx.params or {}).get("workspace")
            _fail(as_medkg_error(exc, workspace if isinstance(workspace, Path) else None))


@contextmanager
def _progress() -> Iterator[Callable[[str, int, int], None]]:
    """A Rich progress bar per stage, fed by the workspace's progress callback."""
    with Progress(
        TextColumn("{task.description:<8}"), BarColumn(), MofNCompleteColumn(),
        TimeElapsedColumn(), console=console, transient=False, disable=not console.is_terminal,
    ) as bar:
        tasks: dict[str, TaskID] = {}

        def update(stage: str, done: int, total: int) -> None:
            if stage not in tasks:
                tasks[stage] = bar.add_task(stage, total=total)
            bar.update(tasks[stage], completed=done, total=total)

        yield update


LLMOpt = Annotated[
    str | None,
    typer.Option("--llm", help="extract with a chat model for this run: openai:MODEL (any "
                 "OpenAI-compatible endpoint, llm.base_url) or gguf:PATH/TO/model.gguf"),
]


def apply_llm_option(settings: Settings, option: str | None) -> None:
    """``--llm BACKEND:MODEL`` switches this run to the LLM engine for every stage
    that has one: extraction, the SAC-KG generator, tag summaries, answers (not saved)."""
    if option is None:
        return
    from medkg.engines import use_llm
    from medkg.llm.client import parse_llm_option

    backend, model = parse_llm_option(option)
    settings.llm.backend = backend  # type: ignore[assignment]
    settings.llm.model = model
    use_llm(settings)
