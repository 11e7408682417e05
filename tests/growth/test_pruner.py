"""The bundled pruner: loads, scores with the real embedding model, and says what
its training labels say (drugs and diseases that head relations grow; body
parts and organisms, which only appear as tails, are pruned)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from medkg.errors import ConfigError
from medkg.growth.pruner import BUNDLED_PRUNER, Pruner, resolve_pruner


def test_bundled_model_is_small_and_documented() -> None:
    data = json.loads(BUNDLED_PRUNER.read_text())
    assert BUNDLED_PRUNER.stat().st_size < 50_000
    assert data["report"]["held_out_accuracy"] > 0.8
    assert "head = grow" in data["trained_on"]


def test_decisions_follow_the_training_labels(embedder: object) -> None:
    pruner = resolve_pruner("bundled")
    names = ["Warfarin", "Lisinopril", "Diabetes Mellitus, Type 2", "Liver", "Heart",
             "Staphylococcus aureus"]
    groups = ["CHEM", "CHEM", "DISO", "ANAT", "ANAT", "LIVB"]
    scores = pruner.scores(embedder, names, groups)  # type: ignore[arg-type]
    assert all(0.0 <= s <= 1.0 for s in scores)
    assert pruner.grow(embedder, names, groups) == [  # type: ignore[arg-type]
        True, True, True, False, False, False]


def test_a_broken_model_file_is_a_clear_error(tmp_path: Path) -> None:
    bad = tmp_path / "p.json"
    bad.write_text("{}")
    with pytest.raises(ConfigError, match="cannot read the pruner model"):
        Pruner.load(bad)
