"""Stage state: fingerprints of whole-workspace stages, and what a rebuild redoes."""

from __future__ import annotations

from pathlib import Path

import pytest

from medkg.model import Layer
from medkg.pipeline.marks import StageFingerprints, documents_to_extract, fingerprint
from medkg.pipeline.stages import BUILD_STAGES
from medkg.workspace import Workspace
from tests.conftest import EXAMPLES, SEED_OBO


def test_fingerprints_are_stable_and_order_free() -> None:
    assert fingerprint({"a": 1, "b": [2]}) == fingerprint({"b": [2], "a": 1})
    assert fingerprint({"a": 1}) != fingerprint({"a": 2})


def test_stage_state_records_and_forgets(tmp_path: Path) -> None:
    state = StageFingerprints(tmp_path / "state.sqlite")
    assert not state.current("link", "x")
    state.record("link", "x")
    assert state.current("link", "x") and not state.current("link", "y")
    state.close()
    reopened = StageFingerprints(tmp_path / "state.sqlite")  # it is on disk
    assert reopened.recorded() == {"link": "x"}
    reopened.forget("link")
    assert not reopened.current("link", "x")
    reopened.close()


def test_the_build_is_a_declared_list() -> None:
    assert [s.name for s in BUILD_STAGES] == ["extract", "grow", "link", "review", "summarise"]


@pytest.mark.slow
def test_what_a_rebuild_redoes(tmp_path: Path) -> None:
    """Nothing after a complete build; the links after a vocabulary load; the
    tag tree after a change of its settings."""
    with Workspace.create(tmp_path / "ws") as ws:
        ws.load_vocabulary(SEED_OBO)
        ws.ingest([EXAMPLES / "user" / "note-02-cough-on-lisinopril.txt"], Layer.USER)
        assert [d for _, d in documents_to_extract(ws.store)] == ws.store.document_ids()
        ws.build()
        assert documents_to_extract(ws.store) == []
        done = {k: v for k, v in ws.parts.fingerprints.recorded().items() if k != "reconciled"}
        assert set(done) == {"store.backend", "store.base_iri", "store.iri_scheme", "store.tables",
                             "embedding.encoder", "vocabulary", "link", "summarise"}
        ws.build()
        assert {k: v for k, v in ws.parts.fingerprints.recorded().items()
                if k != "reconciled"} == done  # nothing changed: same fingerprints
        ws.load_vocabulary(SEED_OBO)
        assert "link" not in ws.parts.fingerprints.recorded()  # links are redone
        ws.build()
        assert ws.parts.fingerprints.recorded()["link"] == done["link"]
        ws.settings.retrieval.tree_floor = 0.3
        ws.build()
        assert ws.parts.fingerprints.recorded()["summarise"] != done["summarise"]
