"""What every medkg command shares: consoles, error reporting, progress bars."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Annotated, TypeVar

import typer
from rich.console import Console
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    TaskID,
    TextColumn,
    TimeElapsedColumn,
)

from medkg.errors import MedKGError

console = Console(stderr=True)
out = Console()

WorkspaceOpt = Annotated[
    Path, typer.Option("--workspace", "-w", help="workspace directory", show_default=True)
]
T = TypeVar("T")


def _fail(exc: MedKGError) -> None:
    console.print(f"[bold red]error:[/] {exc.message}", highlight=False)
    if exc.hint:
        console.print(f"[yellow]hint:[/] {exc.hint}", highlight=False)
    raise typer.Exit(code=1)


def _run(action: Callable[[], T]) -> T:
    try:
        return action()
    except MedKGError as exc:
        _fail(exc)
        raise  # unreachable: _fail exits


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
