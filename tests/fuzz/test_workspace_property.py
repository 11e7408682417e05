"""Bad and hostile input against a real workspace: a file that is refused, a
vocabulary or KGX graph that is refused, and a hostile question leave every quad
of the workspace as it was; hostile document text round-trips unchanged but for
what no output format can carry (every quote a slice of it) and adds only its own document."""

from __future__ import annotations

import hashlib
import os
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from medkg.errors import MedKGError
from medkg.model import Layer
from medkg.text import clean_text
from medkg.workspace import Workspace
from tests.conftest import copy_workspace
from tests.fuzz.targets import TARGETS
from tests.fuzz.test_readers_property import HOSTILE, inputs

pytestmark = pytest.mark.slow
EXAMPLES = int(os.environ.get("FUZZ_EXAMPLES", "400")) // 10  # each one is a workspace call
SETTINGS = settings(max_examples=max(EXAMPLES, 10), deadline=None, database=None,
                    suppress_health_check=list(HealthCheck))


def _digest(ws: Workspace) -> str:
    lines = sorted(f"{s.n3()} {p.n3()} {o.n3()} {g.n3()}" for s, p, o, g in ws.store.quads())
    return hashlib.sha256("\n".join(lines).encode()).hexdigest()


@pytest.fixture(scope="module")
def ws(built_workspace: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Workspace]:
    root = copy_workspace(built_workspace, tmp_path_factory.mktemp("fuzzws") / "ws")
    with Workspace.open(root) as opened:
        yield opened


def test_refused_files_change_nothing(ws: Workspace, tmp_path_factory: pytest.TempPathFactory
                                      ) -> None:
    kinds = ["text", "markdown", "jsonl", "pdf", "obo", "tsv", "kgx-nodes"]

    @SETTINGS
    @given(st.sampled_from(kinds).flatmap(lambda k: st.tuples(st.just(k), inputs(TARGETS[k]))))
    def check(case: tuple[str, bytes]) -> None:
        kind, data = case
        target = TARGETS[kind]
        folder = tmp_path_factory.mktemp("input")
        path = folder / target.file
        path.write_bytes(data)
        before = _digest(ws)
        if kind in ("obo", "tsv"):
            try:
                ws.load_vocabulary(path)  # parsed completely before anything is stored
            except MedKGError:
                assert _digest(ws) == before
            return
        if kind == "kgx-nodes":
            (folder / "graph_edges.tsv").write_text("subject\tpredicate\tobject\n",
                                                    encoding="utf-8")
            try:
                ws.import_graph([folder], Layer.LITERATURE)
            except MedKGError:
                assert _digest(ws) == before
            return
        report = ws.ingest([path], Layer.USER)
        if report.failed:
            assert str(path) in next(iter(report.failed))
            assert _digest(ws) == before
        else:
            for doc_id in report.replaced:  # a file of the same name ingested before
                assert not ws.store.has_document(doc_id)

    check()


def test_hostile_document_text_round_trips(ws: Workspace,
                                           tmp_path_factory: pytest.TempPathFactory) -> None:
    @SETTINGS
    @given(st.lists(st.one_of(HOSTILE, st.text(min_size=1, max_size=20)), min_size=1,
                    max_size=30).map("".join))
    def check(text: str) -> None:
        text = "Metformin treats type 2 diabetes. " + text.replace("\x00", "")
        path = tmp_path_factory.mktemp("doc") / "hostile.txt"
        path.write_text(text, encoding="utf-8", newline="")
        others = {d: ws.store.document(d).text for d in ws.store.document_ids(Layer.USER)}
        report = ws.ingest([path], Layer.USER)
        assert not report.failed, report.failed
        new = [d for d in ws.store.document_ids(Layer.USER) if d not in others]
        expected = clean_text(  # what no output format can carry is replaced, same length
            text.removeprefix("\ufeff").replace("\r\n", "\n").replace("\r", "\n"))
        if new:
            [doc_id] = new
            stored = ws.store.document(doc_id)
            assert stored.text == expected
            assert all(c.text == stored.text[c.start : c.end] for c in ws.store.chunks(doc_id))
            ws.delete_document(doc_id)
        assert {d: ws.store.document(d).text for d in ws.store.document_ids(Layer.USER)} \
            == others

    check()


def test_hostile_questions_change_nothing(ws: Workspace) -> None:
    before = _digest(ws)

    @SETTINGS
    @given(st.one_of(
        st.lists(st.one_of(HOSTILE, st.text(max_size=20)), max_size=30).map("".join),
        st.sampled_from([
            'metformin" } ; DROP ALL ; INSERT DATA { <x> <y> "z" } #',
            "?s ?p ?o } UNION { ?s ?p ?o", "'''\n@prefix x: <y> .",
            "\u202emetformin\u202c \u0627\u0644\u0633\u0643\u0631\u064a",
            "e\u0301\u0301\u0301 diabetes \U0001f600",
            "x" * 100_000,
        ])))
    def check(question: str) -> None:
        try:
            answer = ws.ask(question, mode="hybrid")
        except MedKGError:
            return  # empty or over-long: refused with a message
        assert answer.question == clean_text(question).strip()

    check()
    assert _digest(ws) == before
