"""One regression test per defect of the hostile probe ("Sixteen reliability
defects"), named after it. Defects whose tests live beside the code they
exercise are listed in ``docs/RELIABILITY.md``."""

from __future__ import annotations

import errno
import http.server
import os
import shutil
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
from typer.testing import CliRunner

from medkg.cli import app
from medkg.config import IngestConfig
from medkg.errors import DocumentError, LLMUnavailableError, WorkspaceError
from medkg.layout import WorkspaceLayout
from medkg.model import Layer
from medkg.reading.readers import read_documents
from medkg.workspace import Workspace
from tests.conftest import EXAMPLES, SEED_OBO

pytestmark = pytest.mark.slow
QUESTION = "What are the adverse effects of metformin?"
runner = CliRunner()


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("built") / "ws"
    with Workspace.create(root) as ws:
        ws.load_vocabulary(SEED_OBO)
        ws.ingest([EXAMPLES / "literature" / "01-type2-diabetes.md",
                   EXAMPLES / "literature" / "02-hypertension.md"], Layer.LITERATURE)
        ws.ingest([EXAMPLES / "user" / "note-01-diabetes-followup.txt"], Layer.USER)
        ws.build()
    return root


@pytest.fixture
def ws_copy(built: Path, tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    shutil.copytree(built, root)
    return root


def _quads(root: Path) -> list[str]:
    with Workspace.open(root) as ws:
        return sorted(" ".join(t.n3() for t in q) for q in ws.store.quads())


def test_defect_01_an_interrupted_delete_is_finished_and_ask_keeps_working(
        ws_copy: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from medkg.linking.vectors import VectorIndex

    with Workspace.open(ws_copy) as ws:
        doc_id = ws.store.document_ids(Layer.LITERATURE)[0]
        other = ws.store.document_ids(Layer.USER)[0]

    def crash(self: VectorIndex, ids: object) -> None:
        raise KeyboardInterrupt("killed after the graph, before the vectors")

    monkeypatch.setattr(VectorIndex, "delete", crash)
    with Workspace.open(ws_copy) as ws, pytest.raises(KeyboardInterrupt):
        ws.delete_document(doc_id)
    monkeypatch.undo()
    with Workspace.open(ws_copy) as ws:
        assert not ws.store.has_document(doc_id)
        assert doc_id in ws.parts.fingerprints.pending_deletes()
        # Any question finishes the delete first: no stale vector or leaf is left.
        answer = ws.ask(QUESTION)
        assert answer.text
        assert ws.parts.fingerprints.pending_deletes() == {}
        chunk_ids = ws.store.chunk_ids()
        assert set(ws.index("chunks").ids()) <= chunk_ids
    # Re-running the delete (with another id after it) reports and goes on.
    done = runner.invoke(app, ["delete", doc_id, other, "-w", str(ws_copy)])
    assert done.exit_code == 1
    assert "no document with id" in done.output and f"deleted {other}" in done.output


def test_defect_02_a_delete_never_leaves_the_documents_text_behind(
        ws_copy: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import rdflib

    with Workspace.open(ws_copy) as ws:
        doc_id = ws.store.document_ids(Layer.USER)[0]
        text = ws.store.document(doc_id).text
    before = _quads(ws_copy)

    from medkg.store.tables import TableStore

    def crash(self: object, *args: object, **kwargs: object) -> None:
        raise KeyboardInterrupt("killed in the store's transaction")

    monkeypatch.setattr(rdflib.Dataset, "update", crash)  # the RDF stores
    monkeypatch.setattr(TableStore, "_delete", crash)  # the tables
    with Workspace.open(ws_copy) as ws, pytest.raises(KeyboardInterrupt):
        ws.delete_document(doc_id)
    monkeypatch.undo()
    assert _quads(ws_copy) == before  # all of it or none of it
    with Workspace.open(ws_copy) as ws:
        ws.delete_document(doc_id)
    assert not any(text[:40] in q for q in _quads(ws_copy))


def test_defect_06_duplicate_ids_in_one_file_keep_the_last(tmp_path: Path) -> None:
    obo = tmp_path / "dup.obo"
    obo.write_text("format-version: 1.2\n\n[Term]\nid: X:1\nname: first name\n"
                   "def: \"first\" []\n\n[Term]\nid: X:1\nname: second name\n"
                   "def: \"second\" []\n", encoding="utf-8")
    with Workspace.create(tmp_path / "ws") as ws:
        ws.load_vocabulary(obo)
        concept = ws.store.concept("X:1")
    assert (concept.name, concept.definition) == ("second name", "second")


@pytest.mark.parametrize("damage", ["concepts.jsonl", "tagtree-vectors.npz", "chunks.npz"])
def test_defect_07_a_torn_derived_file_is_rebuilt_not_read(ws_copy: Path, damage: str) -> None:
    layout = WorkspaceLayout(ws_copy)
    path = {"concepts.jsonl": layout.concept_terms / "concepts.jsonl",
            "tagtree-vectors.npz": layout.tag_tree / "tagtree-vectors.npz",
            "chunks.npz": layout.vector_index("chunks")}[damage]
    with Workspace.open(ws_copy) as ws:
        concepts = len(ws.concept_index())
        chunks = len(ws.index("chunks"))
    data = path.read_bytes()
    path.write_bytes(data[: len(data) // 2])  # cut short, as by a crash mid-write
    with Workspace.open(ws_copy) as ws:
        assert len(ws.concept_index()) == concepts  # never a shrunken vocabulary
        answer = ws.ask(QUESTION)
        assert answer.text
        assert len(ws.index("chunks")) == chunks  # re-embedded from the graph
        ws.build()
        assert ws.parts.tree() is not None


def test_defect_08_another_store_backend_is_refused(ws_copy: Path,
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    vectors = WorkspaceLayout(ws_copy).vector_index("chunks").read_bytes()
    monkeypatch.setenv("MEDKG_STORE__BACKEND", "memory")
    with Workspace.open(ws_copy) as ws, pytest.raises(WorkspaceError, match="sqlite"):
        ws.ingest([EXAMPLES / "user" / "note-05-asthma-review.txt"], Layer.USER)
    assert WorkspaceLayout(ws_copy).vector_index("chunks").read_bytes() == vectors


class _NotJSON(http.server.BaseHTTPRequestHandler):
    def do_POST(self) -> None:
        body = b"<html>maintenance</html>"
        self.send_response(200)
        self.send_header("Content-Type", "text/html")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: object) -> None:
        return None


@pytest.fixture
def not_json() -> Iterator[str]:
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _NotJSON)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{server.server_address[1]}/v1"
    server.shutdown()


def test_defect_10_an_endpoint_answering_200_with_html_is_an_error(
        not_json: str, monkeypatch: pytest.MonkeyPatch) -> None:
    from medkg.config import LLMConfig
    from medkg.llm.openai_backend import OpenAIBackend
    from medkg.llm.port import GenerationParams, Message

    monkeypatch.setenv("NO_PROXY", "127.0.0.1")
    backend = OpenAIBackend(LLMConfig(backend="openai", model="m", base_url=not_json,
                                      max_retries=0))
    with pytest.raises(LLMUnavailableError, match="did not answer with a chat completion"):
        backend.complete([Message(role="user", content="hi")], None, GenerationParams())


def test_defect_10_vocabulary_ids_with_iri_breaking_characters_load(tmp_path: Path) -> None:
    tsv = tmp_path / "odd.tsv"
    tsv.write_text("id\tname\nX:a>b\tangle drug\nX:c d\tspaced drug\n", encoding="utf-8")
    with Workspace.create(tmp_path / "ws") as ws:
        ws.load_vocabulary(tsv)
        assert ws.store.concept("X:a>b").name == "angle drug"
        assert ws.store.concept("X:c d").name == "spaced drug"


def test_defect_10_init_on_a_file_and_a_full_disk_are_errors(
        tmp_path: Path, ws_copy: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from medkg.linking.vectors import VectorIndex

    a_file = tmp_path / "notes.txt"
    a_file.write_text("x", encoding="utf-8")
    done = runner.invoke(app, ["init", str(a_file)])
    assert done.exit_code == 1 and "is a file, not a directory" in done.output

    def full(self: VectorIndex) -> None:
        raise OSError(errno.ENOSPC, "No space left on device", str(self.path))

    monkeypatch.setattr(VectorIndex, "save", full)
    done = runner.invoke(app, ["ingest", str(EXAMPLES / "user" / "note-05-asthma-review.txt"),
                               "-w", str(ws_copy)])
    assert done.exit_code == 1, done.output
    assert "No space left on device" in done.output and "disk is full" in done.output
    assert done.exception is None or isinstance(done.exception, SystemExit)


def test_defect_12_an_ingest_rerun_from_another_path_keeps_one_source(tmp_path: Path) -> None:
    from medkg.pipeline.marks import STAGE_INGESTED
    from medkg.reading.chunking import chunk_document

    note = EXAMPLES / "user" / "note-02-cough-on-lisinopril.txt"
    moved = tmp_path / "moved" / note.name
    moved.parent.mkdir()
    shutil.copy(note, moved)
    with Workspace.create(tmp_path / "ws") as ws:
        ws.load_vocabulary(SEED_OBO)
        # An ingest cut short: the document stored, its mark not yet written.
        doc = read_documents(note, Layer.USER, max_file_mb=25)[0]
        ws.store.add_document(doc, chunk_document(doc, ws.embedder, IngestConfig()))
        ws.ingest([moved], Layer.USER)
        assert STAGE_INGESTED in ws.store.stages(doc.id)
        sources = [str(o) for s, p, o, g in ws.store.quads()
                   if str(s).endswith(doc.id) and str(p).endswith("/source")]
    assert sources == [str(moved)]


def test_defect_14_input_checks_say_what_is_wrong(tmp_path: Path) -> None:
    late_nul = tmp_path / "late.txt"
    late_nul.write_bytes(b"a" * 10_000 + b"\x00" + b"b" * 10)
    with pytest.raises(DocumentError, match="NUL character \\(at offset 10000\\)"):
        read_documents(late_nul, Layer.USER, max_file_mb=25)
    utf16 = tmp_path / "utf16.txt"
    utf16.write_bytes("Metformin caused nausea.".encode("utf-16"))
    assert read_documents(utf16, Layer.USER, max_file_mb=25)[0].text == "Metformin caused nausea."
    fifo = tmp_path / "pipe.txt"
    os.mkfifo(fifo)
    with pytest.raises(DocumentError, match="named pipe"):
        read_documents(fifo, Layer.USER, max_file_mb=25)
    loop = tmp_path / "loop.txt"
    loop.symlink_to(loop)
    with pytest.raises(DocumentError, match="symbolic links"):
        read_documents(loop, Layer.USER, max_file_mb=25)


def test_defect_15_an_over_long_document_is_refused_at_once(tmp_path: Path) -> None:
    blob = tmp_path / "one-line.txt"
    blob.write_text("word " * 400_000, encoding="utf-8")  # 2 MB on one line
    with pytest.raises(DocumentError, match="over the 1,000,000 a document may have"):
        read_documents(blob, Layer.USER, max_file_mb=25)


def test_defect_14_a_latin1_vocabulary_is_reported_at_its_own_line(tmp_path: Path) -> None:
    from medkg.errors import VocabularyError
    from medkg.ontology.loaders import load_file

    lines = ["format-version: 1.2", ""]
    for i in range(400):  # far more than one decoder block before the bad byte
        lines += ["[Term]", f"id: X:{i}", f"name: term {i}", ""]
    bad_line = len(lines) + 3
    lines += ["[Term]", "id: X:latin", "name: Sjögren syndrome"]
    obo = tmp_path / "latin1.obo"
    obo.write_bytes("\n".join(lines).encode("latin-1"))
    with pytest.raises(VocabularyError) as err:
        load_file(obo)
    assert err.value.line == bad_line and "column 9" in err.value.message
