"""Re-extraction when its inputs change: a vocabulary load redoes only the
documents it can have changed, and the graph then equals one built from scratch
with the new vocabulary; a changed extraction setting redoes every document;
``--reextract`` forces it; ``medkg status`` says which documents are stale."""

from __future__ import annotations

from pathlib import Path

import pytest
from rdflib.namespace import PROV
from typer.testing import CliRunner

from medkg.cli import app
from medkg.model import Layer
from medkg.store.vocab import MKG
from medkg.workspace import Workspace
from tests.conftest import SEED_OBO

pytestmark = pytest.mark.slow
runner = CliRunner()

NOTES = {
    "a.txt": "The patient has a hacking cough since starting lisinopril.\n",
    "b.txt": "Metformin treats type 2 diabetes.\n",
    "c.txt": "Amlodipine can cause ankle edema in older patients.\n",
}
NEW_SYNONYM = ('synonym: "non-productive cough" EXACT []\n',
               'synonym: "non-productive cough" EXACT []\nsynonym: "hacking cough" EXACT []\n')


def _graph(ws: Workspace) -> list[str]:
    """Sorted N-Quads, less what differs between two workspaces by construction:
    load times and the vocabulary version in extraction marks."""
    return sorted(f"{s.n3()} {p.n3()} {o.n3()} {g.n3()}" for s, p, o, g in ws.store.quads()
                  if p != PROV.generatedAtTime
                  and not (p == MKG.completed and str(o).startswith("extracted@")))


def _workspace(tmp_path: Path, name: str, vocabulary: Path) -> Workspace:
    notes = tmp_path / "notes"
    if not notes.exists():
        notes.mkdir()
        for file, text in NOTES.items():
            (notes / file).write_text(text, encoding="utf-8")
    ws = Workspace.create(tmp_path / name)
    ws.load_vocabulary(vocabulary)
    ws.ingest([notes], Layer.USER)
    ws.build()
    return ws


def _doc(ws: Workspace, name: str) -> str:
    return next(d for d in ws.store.document_ids(Layer.USER)
                if ws.store.document(d).source.endswith(name))


def test_a_vocabulary_update_redoes_only_the_documents_it_touches(tmp_path: Path) -> None:
    vocabulary = tmp_path / "vocab" / "seed.obo"
    vocabulary.parent.mkdir()
    vocabulary.write_text(SEED_OBO.read_text(encoding="utf-8"), encoding="utf-8")
    with _workspace(tmp_path, "updated", vocabulary) as ws:
        assert ws.extraction_status().current and not ws.extraction_status().stale_vocabulary
        vocabulary.write_text(vocabulary.read_text(encoding="utf-8").replace(*NEW_SYNONYM),
                              encoding="utf-8")
        ws.load_vocabulary(vocabulary)
        status = ws.extraction_status()
        assert status.stale_vocabulary == [_doc(ws, "a.txt")]
        assert sorted(status.current) == sorted([_doc(ws, "b.txt"), _doc(ws, "c.txt")])
    shown = runner.invoke(app, ["status", "-w", str(ws.root)])
    with Workspace.open(ws.root) as ws:
        report = ws.build()
        assert report.reextracted == 1 and report.documents == 1
        assert ws.build().documents == 0  # current now
        entities = [e for e in ws.store.entities(Layer.USER) if "MEDKG:0000031" in e.concept_ids]
        assert entities and entities[0].mentions[0].text == "hacking cough"
        updated = _graph(ws)
    assert shown.exit_code == 0 and "run `medkg build` to extract 1 document(s)" in shown.output
    assert "cross-layer links: made again by the next build" in shown.output
    with _workspace(tmp_path, "fresh", vocabulary) as ws:
        assert updated == _graph(ws)


def test_changed_settings_redo_every_document_and_reextract_forces_it(tmp_path: Path) -> None:
    with _workspace(tmp_path, "ws", SEED_OBO) as ws:
        ws.settings.extraction.context_chars = 120
        status = ws.extraction_status()
        assert len(status.stale_settings) == 3 and not status.current
        report = ws.build()
        assert report.reextracted == 3
        assert {len(e.context) <= 120 for e in ws.store.entities(Layer.USER)} == {True}
        assert len(ws.extraction_status().current) == 3
        assert ws.build(reextract=True).reextracted == 3


def test_an_obsoleted_concept_is_replaced_in_the_documents_that_used_it(tmp_path: Path) -> None:
    vocabulary = tmp_path / "vocab" / "seed.obo"
    vocabulary.parent.mkdir()
    seed = SEED_OBO.read_text(encoding="utf-8")
    vocabulary.write_text(seed, encoding="utf-8")
    with _workspace(tmp_path, "ws", vocabulary) as ws:
        old = [e for e in ws.store.entities(Layer.USER) if "MEDKG:0000047" in e.concept_ids]
        assert old  # lisinopril
        # MEDKG:0000047 obsoleted, replaced by a new id with the same name.
        vocabulary.write_text(seed.replace(
            "id: MEDKG:0000047\nname: lisinopril\n",
            "id: MEDKG:0000047\nname: lisinopril (old)\nis_obsolete: true\n"
            "replaced_by: MEDKG:0000947\n\n[Term]\nid: MEDKG:0000947\nname: lisinopril\n"),
            encoding="utf-8")
        ws.load_vocabulary(vocabulary)
        assert ws.extraction_status().stale_vocabulary == [_doc(ws, "a.txt")]
        ws.build()
        ids = {c for e in ws.store.entities(Layer.USER) for c in e.concept_ids}
        assert "MEDKG:0000947" in ids and "MEDKG:0000047" not in ids
        stages = ws.store.stages(_doc(ws, "a.txt"))
        assert sum(s.startswith("extracted@") for s in stages) == 1
