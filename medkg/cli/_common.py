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
from rich.text import Text

from medkg.config import Settings
from medkg.errors import MedKGError

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
T = TypeVar("T")


def _fail(exc: MedKGError) -> None:
    console.print(label("error:", "bold red", exc.message), soft_wrap=True)
    if exc.hint:
        console.print(label("hint:", "yellow", exc.hint), soft_wrap=True)
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
