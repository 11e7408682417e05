"""Living documents: a file is its document's identity; an edited file replaces
its earlier version (what only the old text supported goes, what both support
stays, curators' decisions on surviving statements stay), and ``ingest --sync``
mirrors a folder."""

from __future__ import annotations

from pathlib import Path

import pytest
from rdflib.namespace import PROV
from typer.testing import CliRunner

from medkg.cli import app
from medkg.model import Layer, Predicate, ReviewAction
from medkg.pipeline.review import Request
from medkg.workspace import Workspace
from tests.conftest import SEED_OBO

pytestmark = pytest.mark.slow
runner = CliRunner()

V1 = ("Clinic note: persistent cough.\n"
      "History: Hypertension treated with lisinopril since March.\n"
      "Assessment: The dry cough is likely caused by lisinopril.\n")
V2 = V1 + "Plan: Start amlodipine 5 mg daily for hypertension.\n"
V3 = (V2.replace("Assessment: The dry cough is likely caused by lisinopril.\n", "")
      + "Warned that amlodipine can cause ankle edema.\n")


def _quads(ws: Workspace) -> list[str]:
    """The graph as sorted N-Quads lines; left out: revision records, and when the
    vocabulary was loaded (two workspaces load it at different times)."""
    return sorted(f"{s.n3()} {p.n3()} {o.n3()} {g.n3()}" for s, p, o, g in ws.store.quads()
                  if p not in (PROV.wasRevisionOf, PROV.generatedAtTime))


def _new(root: Path) -> Workspace:
    ws = Workspace.create(root)
    ws.load_vocabulary(SEED_OBO)
    return ws


def test_a_note_edited_twice_equals_one_that_only_saw_the_last_version(tmp_path: Path) -> None:
    note = tmp_path / "notes" / "note.txt"
    note.parent.mkdir()
    with _new(tmp_path / "edited") as ws:
        first = None
        for i, text in enumerate((V1, V2, V3)):
            note.write_text(text, encoding="utf-8")
            report = ws.ingest([note], Layer.USER)
            assert report.documents == 1 and len(report.replaced) == (1 if i else 0)
            ws.build()
            first = first or ws.store.document_ids(Layer.USER)[0]
        [doc_id] = ws.store.document_ids(Layer.USER)
        doc = ws.store.document(doc_id)
        assert doc.text == V3 and len(doc.revision_of) == 2 and first in doc.revision_of
        edited = _quads(ws)
        assert len(edited) < len(list(ws.store.quads()))  # the revisions are recorded
    with _new(tmp_path / "fresh") as ws:
        ws.ingest([note], Layer.USER)
        ws.build()
        assert edited == _quads(ws)


def test_review_decisions_on_statements_that_survive_an_edit_stay(tmp_path: Path) -> None:
    note = tmp_path / "note.txt"
    note.write_text(V1, encoding="utf-8")
    with _new(tmp_path / "ws") as ws:
        ws.ingest([note], Layer.USER)
        ws.build()
        [cough] = [t for t in ws.store.triples(Layer.USER)
                   if t.predicate is Predicate.HAS_ADVERSE_EFFECT]
        ws.review(Request(action=ReviewAction.REJECT, target=cough.id, reason="checked"),
                  "curator")
        assert ws.store.triple(cough.id).review.value == "rejected"
        note.write_text(V2, encoding="utf-8")  # the statement's sentence is kept
        ws.ingest([note], Layer.USER)
        ws.build()
        kept = ws.store.triple(cough.id)
        assert kept.review.value == "rejected"
        assert [d.action for d in ws.review_log(cough.id)] == [ReviewAction.REJECT]


def test_a_bad_edit_keeps_the_version_that_was_there(tmp_path: Path) -> None:
    note = tmp_path / "note.txt"
    note.write_text(V1, encoding="utf-8")
    with _new(tmp_path / "ws") as ws:
        ws.ingest([note], Layer.USER)
        before = ws.store.document_ids(Layer.USER)
        note.write_bytes(b"\x00\x01binary\xff" * 10)
        report = ws.ingest([note], Layer.USER)
        assert report.failed and not report.replaced
        assert ws.store.document_ids(Layer.USER) == before


def test_sync_mirrors_a_folder_and_dry_run_changes_nothing(tmp_path: Path) -> None:
    folder = tmp_path / "notes"
    folder.mkdir()
    (folder / "a.txt").write_text(V1, encoding="utf-8")
    (folder / "b.txt").write_text("Metformin treats type 2 diabetes.\n", encoding="utf-8")
    (folder / "c.txt").write_text("Amlodipine can cause ankle edema.\n", encoding="utf-8")
    elsewhere = tmp_path / "other.txt"
    elsewhere.write_text("Asthma in childhood.\n", encoding="utf-8")
    root = tmp_path / "ws"
    with _new(root) as ws:
        ws.ingest([folder, elsewhere], Layer.USER)
    (folder / "a.txt").write_text(V2, encoding="utf-8")  # changed
    (folder / "b.txt").unlink()  # removed
    (folder / "d.txt").write_text("Lisinopril treats hypertension.\n", encoding="utf-8")  # new
    (folder / "e.txt").write_bytes(b"\xff\xfe\x00broken")  # unreadable: nothing changes for it

    dry = runner.invoke(app, ["ingest", "--sync", "--dry-run", str(folder), "-w", str(root)])
    assert dry.exit_code == 0, dry.output
    lines = {tuple(line.split("\t")[:2]) for line in dry.stdout.splitlines()}
    assert ("add", str(folder / "d.txt")) in lines
    assert ("update", str(folder / "a.txt")) in lines
    assert ("delete", str(folder / "b.txt")) in lines
    assert not any(what == "delete" and "other.txt" in src for what, src in lines)
    assert "would add 1, update 1, delete 1, move 0; 1 unchanged, 1 unreadable" in dry.output
    with Workspace.open(root) as ws:
        assert len(ws.store.document_ids(Layer.USER)) == 4  # the dry run changed nothing

    done = runner.invoke(app, ["ingest", "--sync", str(folder), "-w", str(root)])
    assert done.exit_code == 1  # e.txt could not be read: a script must see that
    with Workspace.open(root) as ws:
        sources = sorted(ws.store.document(d).source
                         for d in ws.store.document_ids(Layer.USER))
        assert sources == sorted(str(p) for p in (folder / "a.txt", folder / "c.txt",
                                                  folder / "d.txt", elsewhere))
        assert ws.store.document(next(
            d for d in ws.store.document_ids(Layer.USER)
            if ws.store.document(d).source.endswith("a.txt"))).text == V2


def test_sync_keeps_a_renamed_file_as_the_same_document(tmp_path: Path) -> None:
    folder = tmp_path / "notes"
    folder.mkdir()
    (folder / "old name.txt").write_text(V1, encoding="utf-8")
    with _new(tmp_path / "ws") as ws:
        ws.ingest([folder], Layer.USER)
        ws.build()
        [doc_id] = ws.store.document_ids(Layer.USER)
        statements = sorted(t.id for t in ws.store.triples(Layer.USER))
        (folder / "old name.txt").rename(folder / "new name.txt")
        plan = ws.plan_sync([folder], Layer.USER)
        report = ws.ingest([folder], Layer.USER, sync=True)
        assert report.removed == [] and report.documents == 0 and report.skipped == 1
        assert ws.store.document_ids(Layer.USER) == [doc_id]
        assert ws.store.document(doc_id).source == str(folder / "new name.txt")
        assert sorted(t.id for t in ws.store.triples(Layer.USER)) == statements
    assert plan.moved == [(str(folder / "old name.txt"), str(folder / "new name.txt"))]
    assert not plan.added and not plan.removed


@pytest.mark.parametrize("executor", ["local", "processes:1"])
def test_an_edited_file_whose_old_text_another_file_now_holds(tmp_path: Path,
                                                              executor: str) -> None:
    """a.txt goes from V1 to V2 and b.txt (after it) now holds V1: a.txt's old
    version goes and comes back as b.txt's document, with its chunks, also when
    workers chunk ahead of the writer (they planned V1 while it was still here)."""
    folder = tmp_path / "notes"
    folder.mkdir()
    (folder / "a.txt").write_text(V1, encoding="utf-8")
    with _new(tmp_path / "ws") as ws:
        ws.settings.extraction.executor = executor
        ws.ingest([folder], Layer.USER)
        [v1] = ws.store.document_ids(Layer.USER)
        (folder / "a.txt").write_text(V2, encoding="utf-8")
        (folder / "b.txt").write_text(V1, encoding="utf-8")
        ws.ingest([folder], Layer.USER)
        docs = {ws.store.document(d).source: d for d in ws.store.document_ids(Layer.USER)}
        assert set(docs) == {str(folder / "a.txt"), str(folder / "b.txt")}
        assert docs[str(folder / "b.txt")] == v1
        assert all(ws.store.chunks(d) for d in docs.values())
        assert all(ws.parts.index("chunks").vector(c.id) is not None
                   for d in docs.values() for c in ws.store.chunks(d))
