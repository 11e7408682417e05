"""The ask stage refuses what it cannot answer before loading any model."""

from __future__ import annotations

from pathlib import Path

import pytest

from medkg.errors import RetrievalError
from medkg.workspace import Workspace


@pytest.mark.parametrize(("question", "message"), [
    ("   ", "the question is empty"),
    ("x" * 100_000, "the question is 100,000 characters; at most 2,000"),
])
def test_defect_14_15_bad_questions_are_refused_at_once(tmp_path: Path, question: str,
                                                       message: str) -> None:
    """An empty question was refused only after ~16 s of model loading; a
    100k-character one took 220 s and 1.2 GB before an answer."""
    with Workspace.create(tmp_path / "ws") as ws:
        with pytest.raises(RetrievalError, match=message):
            ws.ask(question)
        assert ws.parts._embedder is None  # no model was loaded for it
