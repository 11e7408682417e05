"""The multi-prompt extraction profile (KGCaRe) and the traverse mode's LLM guide,
with the local GGUF model: the calls they make, what they store, and that a weak
model's answers never break the graph or the search."""

from __future__ import annotations

from pathlib import Path

import pytest

from medkg.engines import use_llm
from medkg.model import Layer
from medkg.workspace import Workspace
from tests.conftest import EXAMPLES, SEED_OBO

pytestmark = pytest.mark.slow
NOTE = EXAMPLES / "user" / "note-02-cough-on-lisinopril.txt"


def test_the_multi_profile_asks_four_prompts_and_marks_inferred_triples(
        model_path: Path, tmp_path: Path) -> None:
    with Workspace.create(tmp_path / "ws") as ws:
        ws.load_vocabulary(SEED_OBO)
        ws.ingest([NOTE], Layer.USER)
        ws.settings.llm.backend, ws.settings.llm.model = "gguf", str(model_path)
        use_llm(ws.settings)
        ws.settings.retrieval.summary_engine = "builtin"
        single = ws.estimate_build()
        ws.settings.extraction.llm_profile = "multi"
        multi = ws.estimate_build()
        report = ws.build()
        calls = {s.stage: s.calls for s in ws.ledger.summary()}
        triples = ws.store.triples()
        failures = ws.ledger.failures()
    packs = single.stages["extract"][0]
    assert multi.stages["extract"][0] == 4 * packs  # four prompts per pack
    assert multi.stages["extract"][1] > single.stages["extract"][1]
    # the fourth prompt is skipped for a pack without entities: 3 or 4 calls a pack
    assert 3 * packs <= calls["extract"] <= 4 * packs, calls
    assert report.documents == 1 and report.entities > 0  # step 1's entities, found in the text
    for t in triples:
        assert t.method in ("builtin:llm", "llm:inferred"), t.method
        if t.method == "llm:inferred":
            assert t.confidence <= 0.5
        assert t.evidence  # anchored in the note's text, whatever the model said
    for stage, _item, reason in failures:
        assert stage == "extract" and reason
    print(f"\nmulti profile: {calls['extract']} extraction calls for {packs} pack(s); "
          f"{len(triples)} triples, {sum(t.method == 'llm:inferred' for t in triples)} "
          f"inferred; {report.entities} entities; {len(failures)} recorded failure(s): "
          f"{failures}")


def test_a_profile_change_makes_the_extraction_stale(tmp_path: Path) -> None:
    with Workspace.create(tmp_path / "ws") as ws:
        from medkg.pipeline.marks import settings_identity

        builtin = settings_identity(ws.settings)
        ws.settings.extraction.llm_profile = "multi"
        assert settings_identity(ws.settings) == builtin  # the builtin engine ignores it
        ws.settings.extraction.engine = "llm"
        multi = settings_identity(ws.settings)
        ws.settings.extraction.llm_profile = "single"
        assert settings_identity(ws.settings) != multi


def test_the_llm_guide_prunes_the_traversal(model_path: Path, tmp_path: Path) -> None:
    with Workspace.create(tmp_path / "ws") as ws:
        ws.load_vocabulary(SEED_OBO)
        ws.ingest([EXAMPLES / "literature" / "02-hypertension.md"], Layer.LITERATURE)
        ws.build()
        ws.settings.llm.backend, ws.settings.llm.model = "gguf", str(model_path)
        ws.settings.retrieval.traverse_guide = "llm"
        answer = ws.ask("What are the adverse effects of the drugs that treat hypertension?",
                        mode="traverse")
        calls = {s.stage: s.calls for s in ws.ledger.summary()}
        failures = ws.ledger.failures()
    assert calls.get("prune_triples", 0) >= 1, calls
    assert answer.trace.traversal
    for c in answer.citations:
        assert c.quote and c.start < c.end
    for stage, _item, reason in failures:  # an unusable answer: recorded, builtin kept
        assert stage in ("prune_triples", "clue_entities") and reason
    print(f"\nllm guide: {calls}; {len(answer.trace.paths or [])} path(s); "
          f"{len(failures)} recorded failure(s)")
