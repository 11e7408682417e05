"""`medkg import --format kgx`: a curated graph into a layer, checked whole first,
linked like any other layer, cited in answers; and the KGX round trip."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from medkg.cli import app
from medkg.export.kgx_reader import KgxImportError
from medkg.export.view import ExportFilter
from medkg.model import Layer
from medkg.workspace import Workspace
from tests.conftest import copy_workspace

pytestmark = pytest.mark.slow
runner = CliRunner()

NODES = ("id\tcategory\tname\tdescription\n"
         "DRUGBANK:DB00331\tbiolink:Drug\tmetformin\t\n"
         "HP:0003128\tbiolink:PhenotypicFeature\tlactic acidosis\t\n"
         "DRUGBANK:DB01076\tbiolink:Drug\tatorvastatin\tA statin.\n"
         "HP:0003326\tbiolink:PhenotypicFeature\tmyalgia\tMuscle pain.\n")
EDGES = ("subject\tpredicate\tobject\tpublications\tsupporting_text\thas_confidence_score\n"
         "DRUGBANK:DB01076\tbiolink:has_adverse_event\tHP:0003326\tPMID:12345678\t"
         "Muscle pain is the most commonly reported adverse effect of atorvastatin.\t0.9\n"
         "DRUGBANK:DB00331\tbiolink:causes\tHP:0003128\t\t\t\n")


def curated(tmp_path: Path, nodes: str = NODES, edges: str = EDGES) -> Path:
    folder = tmp_path / "curated"
    folder.mkdir()
    (folder / "drugs_nodes.tsv").write_text(nodes, encoding="utf-8")
    (folder / "drugs_edges.tsv").write_text(edges, encoding="utf-8")
    return folder


def test_imported_fact_is_linked_and_cited(registry_workspace: Path, tmp_path: Path) -> None:
    ws_path = copy_workspace(registry_workspace, tmp_path / "ws")
    graph = curated(tmp_path)
    result = runner.invoke(app, ["import", "-w", str(ws_path), "--layer", "literature",
                                 str(graph)])
    assert result.exit_code == 0, result.output
    assert runner.invoke(app, ["build", "-w", str(ws_path)]).exit_code == 0
    again = runner.invoke(app, ["import", "-w", str(ws_path), str(graph)])
    assert again.exit_code == 0 and "0 document" in again.output  # idempotent
    with Workspace.open(ws_path) as ws:
        metformin = [e for e in ws.store.entities(Layer.LITERATURE)
                     if "DRUGBANK:DB00331" in e.concept_ids]
        assert len(metformin) == 1  # the imported node joined the entity found in text
        answer = ws.ask("What are the adverse effects of atorvastatin?", show_proposed=True)
    cited = [c for c in answer.citations if c.quote.startswith("Muscle pain is the most")]
    assert cited, [c.quote for c in answer.citations]
    assert any(f.predicate.value == "has_adverse_effect"
               for f in [*answer.facts, *answer.proposed])


def test_bad_rows_are_named_and_nothing_is_imported(registry_workspace: Path,
                                                    tmp_path: Path) -> None:
    ws_path = copy_workspace(registry_workspace, tmp_path / "ws")
    nodes = NODES + "MONDO:1\tbiolink:Nonsense\tsomething\t\nHP:2\tbiolink:Disease\t\t\n"
    edges = (EDGES + "DRUGBANK:DB00331\tbiolink:frobnicates\tHP:0003128\t\t\t\n"
             "DRUGBANK:DB00331\tbiolink:treats\tMONDO:404\t\t\t\n"
             "DRUGBANK:DB00331\tbiolink:treats\tHP:0003128\t\t\t1.5\n")
    graph = curated(tmp_path, nodes, edges)
    with Workspace.open(ws_path) as ws:
        before = ws.store.counts()
        with pytest.raises(KgxImportError) as caught:
            ws.import_graph([graph], Layer.LITERATURE)
        assert ws.store.counts() == before
    problems = caught.value.problems
    where = [p.split(": ", 1)[0].rsplit("/", 1)[-1] for p in problems]
    assert where == ["drugs_nodes.tsv:6", "drugs_nodes.tsv:7", "drugs_edges.tsv:4",
                     "drugs_edges.tsv:5", "drugs_edges.tsv:6"], problems
    result = runner.invoke(app, ["import", "-w", str(ws_path), str(graph)])
    assert result.exit_code == 1 and "drugs_edges.tsv:4" in result.output
    assert "Traceback" not in result.output


def test_vocabulary_import_takes_concepts_and_subclass_only(tmp_path: Path) -> None:
    ws_path = tmp_path / "ws"
    Workspace.create(ws_path).close()
    nodes = ("id\tcategory\tname\tdescription\nMONDO:0005148\tbiolink:Disease\t"
             "type 2 diabetes mellitus\tA diabetes.\nMONDO:0005015\tbiolink:Disease\t"
             "diabetes mellitus\t\n")
    edges = "subject\tpredicate\tobject\nMONDO:0005148\tbiolink:subclass_of\tMONDO:0005015\n"
    graph = curated(tmp_path, nodes, edges)
    with Workspace.open(ws_path) as ws:
        ws.import_graph([graph], Layer.VOCABULARY)
        concept = ws.store.concept("MONDO:0005148")
    assert concept.parents == ["MONDO:0005015"] and concept.definition == "A diabetes."
    assert concept.semantic_group == "DISO"


def test_kgx_round_trip(registry_workspace: Path, registry_vocabulary: Path,
                        tmp_path: Path) -> None:
    """Literature exported as KGX, imported into a new workspace with the same
    vocabulary, exported again: the same nodes and edges (evidence offsets point
    into the new workspace's documents, so they are left out of the comparison)."""
    literature = ExportFilter(layers=frozenset({Layer.LITERATURE}))
    with Workspace.open(registry_workspace) as ws:
        ws.export(tmp_path / "first", "kgx-jsonl", flt=literature)
    second = tmp_path / "second-ws"
    with Workspace.create(second) as ws:
        ws.load_vocabulary(registry_vocabulary)
        ws.import_graph([tmp_path / "first"], Layer.LITERATURE)
        ws.export(tmp_path / "second", "kgx-jsonl", flt=literature)

    def rows(folder: Path, kind: str) -> list[str]:
        out = []
        for line in (folder / f"{folder.name}_{kind}.jsonl").read_text("utf-8").splitlines():
            row = json.loads(line)
            row.pop("medkg_evidence", None)
            if kind == "edges" and row.get("predicate") == "biolink:same_as":
                continue  # entity resolution is redone by each workspace's build
            row = {k: sorted(v) if isinstance(v, list) else v for k, v in row.items()}
            out.append(json.dumps(row, sort_keys=True))
        return sorted(out)

    for kind in ("nodes", "edges"):
        assert rows(tmp_path / "first", kind) == rows(tmp_path / "second", kind)
    assert len(rows(tmp_path / "first", "edges")) > 5
