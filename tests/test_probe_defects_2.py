"""One regression test (or more) per defect of the second hostile probe
("Nineteen new defects"), named after it; docs/RELIABILITY.md lists them with
the rule each class now keeps."""

from __future__ import annotations

import csv
import errno
import http.server
import json
import os
import signal
import sqlite3
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from xml.dom import minidom

import pytest
from fastapi.testclient import TestClient
from typer.testing import CliRunner

from medkg.cli import app
from medkg.config import Settings
from medkg.errors import ConfigError, DocumentError, MedKGError, ReviewError, VocabularyError
from medkg.layout import WorkspaceLayout
from medkg.model import (
    Layer,
    LinkKind,
    Predicate,
    Qualifiers,
    ReviewAction,
    ReviewState,
    StatementEdit,
    Triple,
)
from medkg.pipeline.review import Request
from medkg.reading.readers import read_documents
from medkg.workspace import Workspace
from tests.conftest import SEED_OBO, copy_workspace

pytestmark = pytest.mark.slow
runner = CliRunner()
MAX_MB = 25.0


def _read(path: Path) -> list[object]:
    return read_documents(path, Layer.USER, max_file_mb=MAX_MB)  # type: ignore[return-value]


@pytest.fixture(scope="module")
def vocab_only(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("v") / "V"
    with Workspace.create(root) as ws:
        ws.load_vocabulary(SEED_OBO)
    return root


@pytest.fixture
def v(vocab_only: Path, tmp_path: Path) -> Path:
    return copy_workspace(vocab_only, tmp_path / "V")


# -- 1, 2, 8: document identity ---------------------------------------------------

def test_defect_01_a_repeated_jsonl_id_fails_its_file_only_and_names_line_and_id(
        v: Path, tmp_path: Path) -> None:
    d = tmp_path / "d"
    d.mkdir()
    (d / "dup.jsonl").write_text(
        '{"id":"x","text":"Record one: metformin treats type 2 diabetes."}\n'
        '{"id":"x","text":"Record two: lisinopril causes dry cough."}\n', encoding="utf-8")
    (d / "plain.txt").write_text("Aspirin treats headache.", encoding="utf-8")
    for _ in range(2):  # and the same on every rerun: nothing is blocked
        with Workspace.open(v) as ws:
            report = ws.ingest([d], Layer.USER)
            sources = ws.store.document_sources(Layer.USER)
        why = report.failed[str(d / "dup.jsonl")]
        assert "line 2" in why and "'x'" in why and "repeats line 1" in why
        assert list(sources) == [str(d / "plain.txt")]  # no record half-stored
    result = runner.invoke(app, ["ingest", "-w", str(v), str(d)])
    assert result.exit_code == 1
    assert "dup.jsonl" in result.output and "repeats line 1" in result.output


def test_defect_01_one_source_twice_in_a_batch_never_deletes_the_first(
        v: Path, tmp_path: Path) -> None:
    a, b = tmp_path / "a.txt", tmp_path / "b.txt"
    a.write_text("Metformin treats type 2 diabetes.", encoding="utf-8")
    b.write_text("Lisinopril causes dry cough.", encoding="utf-8")
    with Workspace.open(v) as ws:  # two uploads under one name in one call
        report = ws.ingest([a, b], Layer.USER, names={a: "upload:n.txt", b: "upload:n.txt"})
        assert report.documents == 1 and str(b) in report.failed
        assert ws.store.document_sources(Layer.USER) == {
            "upload:n.txt": [ws.store.document_ids(Layer.USER)[0]]}
        for doc_id in ws.store.document_ids(Layer.USER):
            assert "ingested" in ws.store.stages(doc_id)


def test_defect_02_sync_keeps_a_dangling_symlink_and_names_a_loop(
        v: Path, tmp_path: Path) -> None:
    target, notes = tmp_path / "real.txt", tmp_path / "notes"
    notes.mkdir()
    target.write_text("Ibuprofen causes bronchospasm in asthma.", encoding="utf-8")
    (notes / "n.txt").symlink_to(target)
    (notes / "loop.txt").symlink_to("loop.txt")
    (notes / "up").symlink_to(notes)  # a linked directory that leads back: walked once
    with Workspace.open(v) as ws:
        first = ws.ingest([notes], Layer.USER, sync=True)
        assert first.documents == 1 and set(first.failed) == {str(notes / "loop.txt")}
        target.rename(tmp_path / "moved.txt")  # the mount went away
        plan = ws.plan_sync([notes], Layer.USER)
        assert plan.removed == [] and str(notes / "n.txt") in plan.failed
        assert "missing file" in plan.failed[str(notes / "n.txt")]
        assert "symbolic links" in plan.failed[str(notes / "loop.txt")]
        report = ws.ingest([notes], Layer.USER, sync=True)
        assert report.removed == [] and str(notes / "n.txt") in report.failed
        assert list(ws.store.document_sources(Layer.USER)) == [str(notes / "n.txt")]
    dry = runner.invoke(app, ["ingest", "-w", str(v), "--sync", "--dry-run", str(notes)])
    assert "unreadable\t" + str(notes / "n.txt") in dry.output
    assert "delete 0" in dry.output and "2 unreadable" in dry.output


def test_defect_08_a_record_without_id_is_known_by_its_text_not_its_line(
        v: Path, tmp_path: Path) -> None:
    path = tmp_path / "r.jsonl"

    def write(*texts: str) -> None:
        path.write_text("".join(json.dumps({"text": t}) + "\n" for t in texts),
                        encoding="utf-8")

    a, b, c, z = ("A: metformin treats diabetes.", "B: lisinopril causes cough.",
                  "C: aspirin treats pain.", "Z: warfarin causes bleeding.")
    write(a, b, c)
    with Workspace.open(v) as ws:
        ws.ingest([path], Layer.USER)
        before = {ws.store.document(d).text: d for d in ws.store.document_ids(Layer.USER)}
        write(z, a, b, c)  # a record prepended
        report = ws.ingest([path], Layer.USER)
        assert (report.documents, report.skipped, report.replaced, report.removed) == (
            1, 3, [], [])
        after = {ws.store.document(d).text: d for d in ws.store.document_ids(Layer.USER)}
        assert {t: after[t] for t in (a, b, c)} == before  # same documents, same marks
        assert all(ws.store.document(d).revision_of == [] for d in after.values())
        write(z, c)  # records taken out of a file that was read whole are gone
        gone = ws.ingest([path], Layer.USER)
        assert sorted(gone.removed) == sorted([before[a], before[b]])
        assert sorted(ws.store.document(d).text for d in ws.store.document_ids(Layer.USER)) \
            == sorted([z, c])


# -- 3, 4, 11, 12: outside the process ---------------------------------------------

@pytest.fixture
def listener() -> Iterator[tuple[str, list[str]]]:
    """A web server on loopback that records every request it gets."""
    asked: list[str] = []
    body = (b'<?xml version="1.0"?><rdf:RDF xmlns:rdf="http://www.w3.org/1999/02/22-rdf-'
            b'syntax-ns#" xmlns:owl="http://www.w3.org/2002/07/owl#" xmlns:rdfs="http://www'
            b'.w3.org/2000/01/rdf-schema#"><owl:Class rdf:about="http://x.org/Leak">'
            b'<rdfs:label>leaked</rdfs:label></owl:Class></rdf:RDF>')

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            asked.append(self.path)
            self.send_response(200)
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args: object) -> None:
            pass

    server = http.server.HTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}", asked
    finally:
        server.shutdown()


def _owl_importing(path: Path, iri: str) -> Path:
    path.write_text(f"""<?xml version="1.0"?>
<rdf:RDF xmlns:rdf="http://www.w3.org/1999/02/22-rdf-syntax-ns#"
  xmlns:owl="http://www.w3.org/2002/07/owl#" xmlns:rdfs="http://www.w3.org/2000/01/rdf-schema#">
  <owl:Ontology rdf:about="http://x.org/main.owl"><owl:imports rdf:resource="{iri}"/></owl:Ontology>
  <owl:Class rdf:about="http://x.org/Own"><rdfs:label>own class</rdfs:label></owl:Class>
</rdf:RDF>
""", encoding="utf-8")
    return path


def test_defect_03_an_owl_import_is_never_fetched(
        listener: tuple[str, list[str]], tmp_path: Path) -> None:
    from medkg.ontology.loaders import load_file

    url, asked = listener
    owl = _owl_importing(tmp_path / "main.owl", f"{url}/leak.owl")
    with pytest.raises(VocabularyError) as err:
        load_file(owl)
    assert "imports " + url in str(err.value) and "leak.owl" in (err.value.hint or "")
    assert asked == []
    # Saved beside it, the import is read from there, still without a request.
    (tmp_path / "leak.owl").write_text(
        '<?xml version="1.0"?><rdf:RDF xmlns:rdf="http://www.w3.org/1999/02/22-rdf-syntax-ns#"'
        ' xmlns:owl="http://www.w3.org/2002/07/owl#" xmlns:rdfs="http://www.w3.org/2000/01/'
        'rdf-schema#"><owl:Class rdf:about="http://x.org/Local"><rdfs:label>local class'
        '</rdfs:label></owl:Class></rdf:RDF>', encoding="utf-8")
    names = sorted(c.name for c in load_file(owl).concepts)
    assert names == ["local class", "own class"] and asked == []


def _limits_app(root: Path) -> tuple[object, list[str]]:
    from medkg.server.limits import RequestLimits

    reached: list[str] = []

    async def inner(scope: dict, receive: object, send: object) -> None:  # type: ignore[type-arg]
        reached.append(scope["path"])
        while (await receive())["more_body"]:  # type: ignore[operator]
            pass
        await send({"type": "http.response.start", "status": 200, "headers": []})  # type: ignore[operator]
        await send({"type": "http.response.body", "body": b"{}"})  # type: ignore[operator]

    return RequestLimits(inner, WorkspaceLayout(root)), reached  # type: ignore[arg-type]


def _call(asgi: object, path: str, headers: dict[str, str], chunks: list[bytes]
          ) -> tuple[int, dict[str, object], int]:
    """Drive the middleware: (status, JSON body, body chunks it pulled)."""
    import asyncio

    pulled = 0
    sent: list[dict[str, object]] = []

    async def receive() -> dict[str, object]:
        nonlocal pulled
        pulled += 1
        body = chunks[pulled - 1] if pulled <= len(chunks) else b""
        return {"type": "http.request", "body": body, "more_body": pulled < len(chunks)}

    async def send(message: dict[str, object]) -> None:
        sent.append(message)

    scope = {"type": "http", "method": "POST", "path": path,
             "headers": [(k.lower().encode(), v.encode()) for k, v in headers.items()]}
    asyncio.run(asgi(scope, receive, send))  # type: ignore[operator]
    body = b"".join(m.get("body", b"") for m in sent)  # type: ignore[misc]
    return int(sent[0]["status"]), json.loads(body), pulled  # type: ignore[call-overload]


def test_defect_04_the_token_is_checked_before_the_body_and_every_body_is_capped(
        v: Path) -> None:
    from medkg.server.access import add_token
    from medkg.server.limits import MAX_BODY

    token = add_token(WorkspaceLayout(v), "Dr Ada")
    asgi, reached = _limits_app(v)
    big = [b"x" * (1 << 20)] * 300  # 300 MB, if it were read
    status, body, pulled = _call(asgi, "/api/ask", {"content-length": str(300 << 20)}, big)
    assert (status, pulled, reached) == (401, 0, []) and body["error"]
    auth = {"authorization": f"Bearer {token}"}
    status, body, pulled = _call(asgi, "/api/ask", {**auth, "content-length": str(300 << 20)},
                                 big)
    assert (status, pulled, reached) == (413, 0, []) and "bytes" in body["error"]
    # No length said (chunked): counted as it comes, refused past the cap.
    status, body, pulled = _call(asgi, "/api/ask", auth, big)
    assert status == 413 and pulled <= MAX_BODY // (1 << 20) + 1
    status, _, _ = _call(asgi, "/api/ask", auth, [b'{"question": "cough?"}'])
    assert status == 200 and reached == ["/api/ask", "/api/ask"]


def test_defect_11_worker_processes_end_with_their_build(tmp_path: Path) -> None:
    script = tmp_path / "parent.py"
    script.write_text(
        "import os, time\n"
        "from medkg.pipeline.executors import ProcessExecutor\n"
        "if __name__ == '__main__':\n"
        "    ex = ProcessExecutor(2)\n"
        "    futures = [ex._pool.submit(os.getpid) for _ in range(4)]\n"
        "    print(' '.join(sorted({str(f.result()) for f in futures})), flush=True)\n"
        "    time.sleep(600)\n", encoding="utf-8")
    parent = subprocess.Popen([sys.executable, str(script)], stdout=subprocess.PIPE, text=True)
    try:
        assert parent.stdout is not None
        workers = [int(p) for p in parent.stdout.readline().split()]
        assert workers and all(_alive(p) for p in workers)
    finally:
        parent.send_signal(signal.SIGKILL)
        parent.wait()
    deadline = time.monotonic() + 15
    while any(_alive(p) for p in workers) and time.monotonic() < deadline:
        time.sleep(0.2)
    assert not any(_alive(p) for p in workers)


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().split(") ", 1)[1][0]
    except (OSError, IndexError):
        return False
    return state != "Z"


@pytest.fixture(scope="module")
def built(built_workspace: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    return built_workspace


@pytest.fixture
def served(built: Path, tmp_path: Path) -> Iterator[tuple[TestClient, dict[str, str], Path]]:
    from medkg.server.access import add_token
    from medkg.server.app import create_app

    root = copy_workspace(built, tmp_path / "ws")
    token = add_token(WorkspaceLayout(root), "Dr Ada")
    with Workspace.open(root) as ws, TestClient(create_app(ws)) as client:
        yield client, {"Authorization": f"Bearer {token}"}, root


def test_defect_09_12_odd_upload_names_and_surrogates_are_4xx_with_a_hint(
        served: tuple[TestClient, dict[str, str], Path]) -> None:
    from medkg.errors import RequestError
    from medkg.server.app import upload_name

    client, auth, _ = served
    for name in ("a\x00b.txt", "..", "x" * 300 + ".txt", "a/b.txt", "a\x07.txt", "noext",
                 "\udcff.txt", ".hidden.txt"):
        with pytest.raises(RequestError) as err:
            upload_name(name)
        assert err.value.hint, name
    for name in ("..", "x" * 300 + ".txt", "noext"):  # as a client sends them
        got = client.post("/api/documents", headers=auth,
                          files={"file": (name, b"Metformin treats diabetes.", "text/plain")})
        assert 400 <= got.status_code < 500, (name, got.status_code, got.text)
        assert set(got.json()) == {"error", "hint"} and got.json()["hint"], name
    ok = client.post("/api/documents", headers=auth,
                     files={"file": ("note.txt", b"Metformin treats diabetes.", "text/plain")})
    assert ok.status_code == 200 and ok.json()["documents"] == 1
    # A lone surrogate is no text: a 422 in medkg's own words (it was a 500, the
    # handler failing to encode the input it echoed).
    for raw in (b'{"question": "\\ud800 cough?"}', b'{"question": "a", "mode": "\\udcff"}'):
        got = client.post("/api/ask", headers={**auth, "Content-Type": "application/json"},
                          content=raw)
        assert got.status_code == 422 and got.json()["error"].startswith(
            "the request is not valid"), got.text


# -- 5: a re-extraction gives the graph a clean build gives ------------------------

def _link_counts(root: Path) -> dict[str, int]:
    with Workspace.open(root) as ws:
        return {k.value: len(ws.store.links(kind=k)) for k in LinkKind}


def test_defect_05_reextract_keeps_every_cross_layer_link(built: Path, tmp_path: Path) -> None:
    root = copy_workspace(built, tmp_path / "ws")
    clean = _link_counts(root)
    assert clean["definition_of"] > 0 and clean["reference_of"] > 0
    with Workspace.open(root) as ws:
        ws.build(reextract=True)
    assert _link_counts(root) == clean
    with Workspace.open(root) as ws:  # and a delete and re-ingest of the same text
        doc_id = ws.store.document_ids(Layer.LITERATURE)[0]
        doc = ws.store.document(doc_id)
        ws.delete_document(doc_id)
        again = tmp_path / "again.md"
        again.write_text(doc.text, encoding="utf-8")
        ws.ingest([again], Layer.LITERATURE)
        ws.build()
    assert _link_counts(root) == clean


# -- 6, 13, 16: settings ------------------------------------------------------------

def _settings(tmp_path: Path, toml: str = "", **env: str) -> Settings:
    path = tmp_path / "medkg.toml"
    path.write_text(toml, encoding="utf-8")
    old = {k: os.environ.get(k) for k in env}
    os.environ.update(env)
    try:
        return Settings.load(path)
    finally:
        for k, value in old.items():
            if value is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = value


def test_defect_06_fusion_weights_refuse_a_typo_and_keep_the_defaults_not_named(
        tmp_path: Path) -> None:
    defaults = Settings().retrieval.fusion_weights.by_source()
    partial = _settings(tmp_path, "[retrieval.fusion_weights]\ndense = 3.0\n")
    assert partial.retrieval.fusion_weights.by_source() == {**defaults, "dense": 3.0}
    env = _settings(tmp_path, MEDKG_RETRIEVAL__FUSION_WEIGHTS__DENSE="3.0")
    assert env.retrieval.fusion_weights.by_source() == {**defaults, "dense": 3.0}
    as_json = _settings(tmp_path, MEDKG_RETRIEVAL__FUSION_WEIGHTS='{"tree": 0}')
    assert as_json.retrieval.fusion_weights.by_source() == {**defaults, "tree": 0.0}
    with pytest.raises(ConfigError) as err:
        _settings(tmp_path, "[retrieval.fusion_weights]\nlexcial = 1.5\n")
    assert "lexcial" in str(err.value) and "medkg.toml" in str(err.value)
    with pytest.raises(ConfigError) as err:
        _settings(tmp_path, MEDKG_RETRIEVAL__FUSION_WEIGHTS__LEXCIAL="1.5")
    assert "MEDKG_RETRIEVAL__FUSION_WEIGHTS__LEXCIAL" in str(err.value)
    with pytest.raises(ConfigError) as err:
        _settings(tmp_path, MEDKG_RETRIEVAL__FUSION_WEIGHTS='{"lexcial": 1.5}')
    assert "MEDKG_RETRIEVAL__FUSION_WEIGHTS" in str(err.value) and "lexcial" in str(err.value)


def _sections(model: type, path: tuple[str, ...] = ()) -> Iterator[tuple[str, ...]]:
    from medkg.config import Section

    for name, field in model.model_fields.items():
        kind = field.annotation
        if isinstance(kind, type) and issubclass(kind, Section):
            yield (*path, name)
            yield from _sections(kind, (*path, name))


def test_defect_06_a_typo_in_every_section_is_an_error_in_the_file_and_the_env(
        tmp_path: Path) -> None:
    sections = list(_sections(Settings))
    assert ("retrieval", "fusion_weights") in sections and len(sections) >= 9
    for section in sections:
        with pytest.raises(ConfigError, match="typo_key"):
            _settings(tmp_path, f"[{'.'.join(section)}]\ntypo_key = 1\n")
        name = "MEDKG_" + "__".join((*section, "typo_key")).upper()
        with pytest.raises(ConfigError, match=name):
            _settings(tmp_path, **{name: "1"})


def test_defect_13_a_bad_embedding_device_names_its_variable(tmp_path: Path) -> None:
    from medkg.config import EmbeddingConfig
    from medkg.errors import EmbeddingError
    from medkg.linking.embeddings import SentenceTransformerEmbedder

    with pytest.raises(ConfigError) as err:
        _settings(tmp_path, MEDKG_EMBEDDING__DEVICE="bogus")
    assert "MEDKG_EMBEDDING__DEVICE" in str(err.value)
    import torch

    if torch.cuda.is_available():
        pytest.skip("this machine's torch has CUDA: 'cuda' is a usable device here")
    os.environ["MEDKG_EMBEDDING__DEVICE"] = "cuda"
    try:
        with pytest.raises(EmbeddingError) as err2:
            _ = SentenceTransformerEmbedder(EmbeddingConfig(device="cuda")).dim
    finally:
        del os.environ["MEDKG_EMBEDDING__DEVICE"]
    assert "MEDKG_EMBEDDING__DEVICE" in str(err2.value) and "cpu" in str(err2.value)


def test_defect_16_a_workspace_refuses_another_base_iri_naming_the_variable(
        v: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MEDKG_STORE__BASE_IRI", "https://example.org/other/")
    with pytest.raises(ConfigError) as err, Workspace.open(v) as ws:
        ws.store.counts()
    assert "MEDKG_STORE__BASE_IRI" in str(err.value)
    assert "https://w3id.org/medkg/data/" in str(err.value)
    result = runner.invoke(app, ["stats", "-w", str(v)])
    assert result.exit_code == 1 and "MEDKG_STORE__BASE_IRI" in result.output
    monkeypatch.setenv("MEDKG_STORE__BASE_IRI", "not an iri")
    with pytest.raises(ConfigError) as err, Workspace.open(v) as ws:
        ws.store.counts()
    assert "MEDKG_STORE__BASE_IRI" in str(err.value)
    monkeypatch.delenv("MEDKG_STORE__BASE_IRI")
    with Workspace.open(v) as ws:
        assert ws.store.counts().concepts == 74


# -- 7, 9, 10: text at the boundaries ----------------------------------------------

HOSTILE = "Metformin\x08 treats\x0c type 2 diabetes \ud800 \udcff \x1b[31m \ufffe end."


def test_defect_09_10_hostile_json_and_names_are_errors_or_clean_documents(
        tmp_path: Path) -> None:
    jsonl = tmp_path / "h.jsonl"
    jsonl.write_text(json.dumps({"id": "\ud800", "title": "T\ud800\x07",
                                 "text": HOSTILE}) + "\n", encoding="utf-8",
                     errors="surrogatepass")
    [doc] = _read(jsonl)
    assert "\ud800" not in doc.text + doc.title + doc.source  # type: ignore[attr-defined]
    json.dumps(doc.model_dump()).encode("utf-8")  # type: ignore[attr-defined]
    deep = tmp_path / "deep.jsonl"
    deep.write_text('{"text":"a","x":' + "[" * 100_000 + "\n", encoding="utf-8")
    with pytest.raises(DocumentError, match=r"line 1.*nested too deeply"):
        _read(deep)


def test_defect_09_a_latin1_file_name_is_ingested_beside_its_neighbours(
        v: Path, tmp_path: Path) -> None:
    d = tmp_path / "names"
    d.mkdir()
    odd = os.fsdecode(bytes(d) + b"/caf\xe9.txt")
    Path(odd).write_text("Metformin treats type 2 diabetes.", encoding="utf-8")
    (d / "good.txt").write_text("Lisinopril causes dry cough.", encoding="utf-8")
    with Workspace.open(v) as ws:
        report = ws.ingest([d], Layer.USER)
        assert report.failed == {} and report.documents == 2
        sources = sorted(ws.store.document_sources(Layer.USER))
    assert sources == [str(d / "caf\\xe9.txt"), str(d / "good.txt")]


def test_defect_10_deep_kgx_nodes_are_a_row_error(v: Path, tmp_path: Path) -> None:
    kgx = tmp_path / "kgx"
    kgx.mkdir()
    (kgx / "nodes.jsonl").write_text('{"id":"X:1","name":' + "[" * 100_000 + "\n",
                                     encoding="utf-8")
    (kgx / "edges.jsonl").write_text("", encoding="utf-8")
    result = runner.invoke(app, ["import", "-w", str(v), str(kgx), "--layer", "literature"])
    assert "RecursionError" not in result.output and "Traceback" not in result.output
    assert "nested too deeply" in result.output


def test_defect_09_an_undecodable_question_is_answered(built: Path, tmp_path: Path) -> None:
    root = copy_workspace(built, tmp_path / "ws")
    with Workspace.open(root) as ws:
        answer = ws.ask("dry \udcff cough?")
    json.dumps(answer.model_dump(mode="json")).encode("utf-8")


@pytest.fixture(scope="module")
def hostile_built(built: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The built workspace with a document full of what XML cannot carry."""
    root = copy_workspace(built, tmp_path_factory.mktemp("hostile") / "ws")
    note = tmp_path_factory.mktemp("hnotes") / "pdf-text.txt"
    note.write_text("Report\x08 from\x0c a PDF.\nMetformin treats type 2 diabetes\x01 in "
                    "this patient \x1f.\nLisinopril causes a dry cough\x0b.\n",
                    encoding="utf-8")
    with Workspace.open(root) as ws:
        ws.ingest([note], Layer.USER)
        ws.build()
    return root


PARSERS = {
    "owl": lambda p: minidom.parse(str(p)),
    "graphml": lambda p: minidom.parse(str(p)),
    "ttl": lambda p: _rdflib(p, "turtle"),
    "trig": lambda p: _rdflib(p, "trig"),
    "nq": lambda p: _rdflib(p, "nquads"),
    "jsonld": lambda p: _rdflib(p, "json-ld"),
    "sssom": lambda p: p.read_text(encoding="utf-8").encode("utf-8"),
    "kgx-jsonl": lambda p: [json.loads(line) for f in sorted(p.glob("*.jsonl"))
                            for line in f.read_text(encoding="utf-8").splitlines() if line],
    "kgx-tsv": lambda p: _tsv(p),
    "kgx-tsv-normalised": lambda p: _tsv(p),
    "neo4j-csv": lambda p: [list(csv.reader(f.open(encoding="utf-8"))) for f in p.glob("*.csv")],
}


def _tsv(path: Path) -> object:
    files = sorted(path.glob("*.tsv"))
    assert files
    return [list(csv.reader(f.open(encoding="utf-8"), delimiter="\t")) for f in files]


def _rdflib(path: Path, fmt: str) -> object:
    import rdflib

    return rdflib.Dataset().parse(path, format=fmt)


def test_defect_07_every_format_parses_with_its_own_parser(hostile_built: Path,
                                                            tmp_path: Path) -> None:
    from medkg.export.formats import FORMATS

    assert set(FORMATS) <= set(PARSERS), "a new format needs its parser here"
    with Workspace.open(hostile_built) as ws:
        docs = [ws.store.document(d) for d in ws.store.document_ids(Layer.USER)]
        assert any("Report" in d.title for d in docs)
        assert not any(c in d.text for d in docs for c in "\x08\x01\x1f")
        for name in FORMATS:
            out = tmp_path / f"graph-{name}"
            ws.export(out, name, reviewed="all")
            PARSERS[name](out)


def test_defect_07_xml_writers_escape_text_written_before_normalisation(
        tmp_path: Path) -> None:
    """A literal holding raw controls (a graph made before ingest cleaned text)
    still gives well-formed RDF/XML and GraphML."""
    from rdflib import Literal, URIRef

    from medkg.export.owl import _xml_safe
    from medkg.export.propertygraph import _xml_text

    term = _xml_safe(Literal("a\x08b\x0cc\ud800"))
    minidom.parseString(f"<a>{_xml_text(str(term))}</a>")
    minidom.parseString(f"<a>{_xml_text(HOSTILE)}</a>")
    assert _xml_safe(URIRef("http://x.org/a")) == URIRef("http://x.org/a")


# -- 14, 15, 17: errors name what they are about ----------------------------------

def test_defect_14_pypdf_warnings_name_the_file(tmp_path: Path,
                                                caplog: pytest.LogCaptureFixture) -> None:
    pytest.importorskip("reportlab")
    from tests.reading.test_readers import make_pdf

    path = make_pdf(tmp_path / "broken.pdf", ["Metformin treats type 2 diabetes."])
    data = path.read_bytes()
    at = data.rindex(b"startxref") + len(b"startxref\n")
    end = data.index(b"\n", at)
    path.write_bytes(data[:at] + str(int(data[at:end]) + 7).encode() + data[end:])
    with caplog.at_level("WARNING"):
        _read(path)
    lines = [r.getMessage() for r in caplog.records if "startxref" in r.getMessage()
             or "xref" in r.getMessage().lower()]
    assert lines and all(str(path) in line for line in lines)


@pytest.mark.parametrize("exc", [
    OSError(errno.ENOSPC, "No space left on device", "/w/graph/000123.sst"),
    OSError("IO error: No space left on deviceWhile appending to file: /w/graph/1.log"),
    sqlite3.OperationalError("database or disk is full"),
])
def test_defect_15_a_full_disk_is_named_with_the_space_left(exc: Exception,
                                                            tmp_path: Path) -> None:
    from medkg.cli._common import as_medkg_error

    error = as_medkg_error(exc, tmp_path)  # type: ignore[arg-type]
    assert "the disk is full (" in (error.hint or "") and "MB free on /" in (error.hint or "")


def test_defect_15_a_store_that_cannot_open_for_a_full_disk_says_so(tmp_path: Path) -> None:
    from medkg.store.rdf import _open_hint

    hint = _open_hint(tmp_path, OSError("IO error: No space left on device"))
    assert hint.startswith("the disk is full (") and "another medkg process" not in hint


def test_defect_17_a_question_naming_a_variant_is_answered(built: Path, tmp_path: Path) -> None:
    root = copy_workspace(built, tmp_path / "ws")
    with Workspace.open(root) as ws:
        answer = ws.ask("Is rs34269950 associated with asthma?")
    assert answer.trace is not None


def test_defect_17_an_evaluation_records_a_failing_question_and_goes_on() -> None:
    from medkg.evaluation.qa import QAItem, run_questions
    from medkg.retrieval.answer import Answer

    def ask(question: str) -> Answer:
        raise MedKGError(f"cannot answer {question}")

    items = [QAItem(id=str(i), question=f"q{i}", type="factoid", gold=frozenset({"1"}))
             for i in range(3)]
    report = run_questions(items, ask, lambda c: None, "hybrid", 1, 1, lambda i, n: None)
    assert [f.question for f in report.failed] == ["q0", "q1", "q2"]
    assert report.failed[0].error == "cannot answer q0"


# -- 18, 19: a decision touches only its target; the page speaks names -------------

def test_defect_18_an_edit_landing_on_another_statement_leaves_its_state(
        built: Path, tmp_path: Path) -> None:
    from medkg.review.views import statement_view

    root = copy_workspace(built, tmp_path / "ws")
    with Workspace.open(root) as ws:
        target = next(t for t in ws.store.triples(Layer.LITERATURE)
                      if t.predicate is Predicate.TREATS and not t.qualifiers.negated)
        existing = Triple(
            id=Triple.key_for(target.layer, target.head, Predicate.PREVENTS, target.tail,
                              target.qualifiers),
            layer=target.layer, head=target.head, predicate=Predicate.PREVENTS,
            tail=target.tail, evidence=target.evidence, qualifiers=target.qualifiers,
            confidence=0.4, method="test")
        ws.store.add_triples([existing])
        ws.review(Request(ReviewAction.EDIT, target.id, "it prevents", StatementEdit(
            head=target.head, predicate=Predicate.PREVENTS, tail=target.tail,
            qualifiers=target.qualifiers)), "Dr Ada")
        assert ws.store.triple(existing.id).review is ReviewState.PROPOSED
        assert ws.store.triple(existing.id).confidence == 0.4
        assert ws.store.triple(target.id).review is ReviewState.EDITED
        [version] = ws.store.revisions_of(target.id)
        assert version != existing.id
        assert statement_view(ws.store, version).same_content == [existing.id]
        landed = statement_view(ws.store, existing.id)
        assert [d.action for d in landed.history] == [ReviewAction.EDIT]
        assert statement_view(ws.store, target.id).history[0].target == target.id


def test_defect_19_an_edit_names_its_ends(built: Path, tmp_path: Path) -> None:
    root = copy_workspace(built, tmp_path / "ws")
    with Workspace.open(root) as ws:
        t = next(t for t in ws.store.triples(Layer.LITERATURE) if not t.qualifiers.negated)
        briefs = {b.id: b for b in ws.store.entity_briefs([t.head, t.tail], mentions=False)}
        other = next(b for b in ws.store.iter_entities(Layer.LITERATURE)
                     if b.id not in (t.head, t.tail) and b.type == briefs[t.tail].type
                     and sum(1 for x in ws.store.iter_entities(Layer.LITERATURE)
                             if x.name.lower() == b.name.lower()) == 1)
        decision = ws.review(Request(ReviewAction.EDIT, t.id, "", StatementEdit(
            head=briefs[t.head].name.upper(), predicate=t.predicate, tail=other.name,
            qualifiers=t.qualifiers)), "Dr Ada")
        assert isinstance(decision.after, StatementEdit)
        assert (decision.after.head, decision.after.tail) == (t.head, other.id)
        with pytest.raises(ReviewError, match="no entity of the literature layer is named"):
            ws.review(Request(ReviewAction.EDIT, t.id, "", StatementEdit(
                head="Vitamin K antagonist of nowhere", predicate=t.predicate, tail=t.tail,
                qualifiers=Qualifiers())), "Dr Ada")


# -- file modes ---------------------------------------------------------------------

def test_files_a_command_writes_are_its_users_alone(tmp_path: Path) -> None:
    root = tmp_path / "ws"
    note = tmp_path / "n.txt"
    note.write_text("Metformin treats type 2 diabetes.", encoding="utf-8")
    for args in (["init", str(root)], ["ingest", "-w", str(root), "--layer", "vocabulary",
                                       str(SEED_OBO)], ["ingest", "-w", str(root), str(note)]):
        done = subprocess.run([str(Path(sys.executable).parent / "medkg"), *args],
                              capture_output=True,
                              text=True, check=False, timeout=600)
        assert done.returncode == 0, done.stderr
    for path in [root, *root.rglob("*")]:
        mode = path.stat().st_mode & 0o777
        assert mode & 0o077 == 0, f"{path} is {oct(mode)}"


WRITER_EXAMPLES = int(os.environ.get("FUZZ_EXAMPLES", "400"))


def test_defect_07_09_every_writer_carries_any_text_as_its_parser_reads_it() -> None:
    """Any text (lone surrogates and every control included) through each
    writer's rule: GraphML's escaping, RDF/XML (OWL) and Turtle/N-Quads through
    Oxigraph's serialisers, JSON; each output parsed by that format's parser."""
    import io

    import pyoxigraph as ox
    import rdflib
    from hypothesis import HealthCheck, given, settings
    from hypothesis import strategies as st
    from oxrdflib._converter import to_ox
    from rdflib import Literal, URIRef

    from medkg.export.owl import _xml_safe
    from medkg.export.propertygraph import _xml_text
    from medkg.text import clean_text

    any_text = st.text(st.characters(blacklist_categories=()), max_size=40)
    hostile = st.sampled_from(list("\x00\x08\x0b\x0c\x1b\x7f\ud800\udfff\ufffe\uffff\u202e"))

    @settings(max_examples=WRITER_EXAMPLES, deadline=None, database=None,
              suppress_health_check=list(HealthCheck))
    @given(st.lists(st.one_of(any_text, hostile), max_size=8).map("".join))
    def check(text: str) -> None:
        carried = clean_text(text)
        assert len(carried) == len(text) and clean_text(carried) == carried
        in_xml = carried.replace("\r\n", "\n").replace("\r", "\n")  # XML's line ends
        node = minidom.parseString(f"<d>{_xml_text(text)}</d>").documentElement.firstChild
        assert (node.data if node is not None else "") == in_xml
        term = _xml_safe(Literal(text))
        triple = ox.Triple(ox.NamedNode("http://x.org/s"), ox.NamedNode("http://x.org/p"),
                           to_ox(term))  # type: ignore[arg-type]
        for fmt, parse in ((ox.RdfFormat.RDF_XML, "xml"), (ox.RdfFormat.TURTLE, "turtle"),
                           (ox.RdfFormat.N_TRIPLES, "nt")):
            out = io.BytesIO()
            ox.serialize([triple], out, fmt)
            graph = rdflib.Graph().parse(data=out.getvalue(), format=parse)
            [value] = list(graph.objects(URIRef("http://x.org/s"), URIRef("http://x.org/p")))
            assert str(value) == (in_xml if parse == "xml" else carried)
        json.loads(json.dumps(carried).encode("utf-8"))

    check()
