"""A small built workspace (three literature passages, two clinic notes, the seed
vocabulary) whose parts the retrieval tests call directly."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from medkg.model import Layer
from medkg.workspace import Workspace
from tests.conftest import EXAMPLES, SEED_OBO

LITERATURE = ["01-type2-diabetes.md", "02-hypertension.md", "05-asthma.md"]
NOTES = ["note-02-cough-on-lisinopril.txt", "note-05-asthma-review.txt"]


@pytest.fixture(scope="package")
def small_ws(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Workspace]:
    ws = Workspace.create(tmp_path_factory.mktemp("retrieval") / "ws")
    ws.load_vocabulary(SEED_OBO)
    ws.ingest([EXAMPLES / "literature" / n for n in LITERATURE], Layer.LITERATURE)
    ws.ingest([EXAMPLES / "user" / n for n in NOTES], Layer.USER)
    ws.build()
    yield ws
    ws.close()


def workspace_of(tmp_path_factory: pytest.TempPathFactory, texts: dict[str, str],
                 layer: Layer) -> Path:
    """A closed workspace (the seed vocabulary) built from ``texts`` (file name ->
    text) in ``layer``: for tests that need a few documents of their own."""
    docs = tmp_path_factory.mktemp("docs")
    for name, text in texts.items():
        (docs / name).write_text(text, encoding="utf-8")
    root = tmp_path_factory.mktemp("ws") / "ws"
    with Workspace.create(root) as ws:
        ws.load_vocabulary(SEED_OBO)
        ws.ingest([docs], layer)
        ws.build()
    return root
