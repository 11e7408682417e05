"""Every export format, checked by the format's own tool: KGX's validator, networkx,
sssom-py, owlready2 with HermiT, rdflib; Neo4j's import files read back."""

from __future__ import annotations

import csv
import json
import shutil
from pathlib import Path

import pytest
import rdflib

from medkg.export.view import ExportFilter, ExportReport
from medkg.model import Layer
from medkg.workspace import Workspace
from tests.export.conftest import REPO, interop

pytestmark = pytest.mark.slow


def export(ws_path: Path, target: Path, fmt: str, flt: ExportFilter | None = None
           ) -> ExportReport:
    with Workspace.open(ws_path) as ws:
        return ws.export(target, fmt, flt=flt)


def test_kgx_normalised_passes_kgx_validate(registry_workspace: Path, tmp_path: Path) -> None:
    report = export(registry_workspace, tmp_path / "kg", "kgx-tsv-normalised")
    assert report.nodes > 10 and report.edges > 5
    result = interop("kgx-validate", *map(str, sorted((tmp_path / "kg").iterdir())))
    assert result["summary"] == {}, result["report"]


@pytest.mark.parametrize("fmt", ["kgx-tsv", "kgx-jsonl"])
def test_kgx_validate_flags_only_the_local_prefix(registry_workspace: Path, tmp_path: Path,
                                                  fmt: str) -> None:
    report = export(registry_workspace, tmp_path / "kg", fmt)
    result = interop("kgx-validate", *map(str, sorted((tmp_path / "kg").iterdir())))
    messages = [m for kinds in result["report"].values() for msgs in kinds.values() for m in msgs]
    assert all("'MEDKG'" in m for m in messages), messages[:5]
    nodes = (tmp_path / "kg" / f"kg_nodes.{fmt.split('-')[1]}").read_text(encoding="utf-8")
    assert "MONDO:0005148" in nodes and "biolink:Disease" in nodes
    assert report.nodes == len(nodes.strip().splitlines()) - (1 if fmt == "kgx-tsv" else 0)


def test_kgx_edges_carry_biolink_edge_properties(registry_workspace: Path,
                                                 tmp_path: Path) -> None:
    export(registry_workspace, tmp_path / "kg", "kgx-jsonl")
    edges = [json.loads(line) for line in
             (tmp_path / "kg" / "kg_edges.jsonl").read_text(encoding="utf-8").splitlines()]
    statements = [e for e in edges if e.get("medkg_statement")]
    assert statements
    for e in statements:
        assert e["primary_knowledge_source"] == "infores:medkg"
        assert e["knowledge_level"] in ("knowledge_assertion", "not_provided", "prediction")
        assert e["agent_type"] == "text_mining_agent"
        assert e["supporting_text"] and e["medkg_layer"] in ("user", "literature")
        assert e["negated"] is False  # negated statements are left out by default


def test_graphml_reads_back_with_networkx(registry_workspace: Path, tmp_path: Path) -> None:
    report = export(registry_workspace, tmp_path / "kg.graphml", "graphml")
    result = interop("graphml", str(tmp_path / "kg.graphml"))
    assert (result["nodes"], result["edges"]) == (report.nodes, report.edges)
    with Workspace.open(registry_workspace) as ws:
        counts = ws.store.counts()
    assert result["node_layers"]["user"] == counts.user.entities
    assert result["node_layers"]["literature"] == counts.literature.entities
    assert {"layer", "confidence", "evidence", "negated"} <= set(result["edge_attrs"])


def test_sssom_parses_with_sssom_py(registry_workspace: Path, tmp_path: Path) -> None:
    report = export(registry_workspace, tmp_path / "kg.sssom.tsv", "sssom")
    result = interop("sssom", str(tmp_path / "kg.sssom.tsv"))
    assert result["mappings"] == report.mappings > 0
    assert {"MONDO", "DRUGBANK", "MEDKGENT"} <= set(result["prefixes"])


def test_biolink_mapping_is_in_the_biolink_model() -> None:
    from medkg.export.biolink import biolink_map
    from medkg.model import Predicate

    result = interop("biolink", str(REPO / "medkg" / "export" / "data" / "biolink.toml"),
                     *[f"biolink:{p.biolink}" for p in Predicate])
    assert result["bad"] == []
    assert all(result["predicates_known"].values()), result["predicates_known"]
    assert result["model"] == biolink_map().biolink_model


@pytest.mark.skipif(shutil.which("java") is None, reason="HermiT needs Java (not on PATH)")
def test_owl_is_consistent_under_hermit(registry_workspace: Path, tmp_path: Path) -> None:
    import owlready2 as ow

    from medkg.export.vocabulary import check_owl

    report = export(registry_workspace, tmp_path / "kg.owl", "owl")
    check_owl(tmp_path / "kg.owl")  # raises when HermiT finds it inconsistent
    world = ow.World()
    onto = world.get_ontology((tmp_path / "kg.owl").resolve().as_uri()).load()
    assert len(list(onto.individuals())) > 10
    assert report.edges > 5


@pytest.mark.parametrize("fmt", ["ttl", "trig", "nq", "jsonld"])
def test_rdf_formats_parse_and_agree(registry_workspace: Path, tmp_path: Path,
                                     fmt: str) -> None:
    export(registry_workspace, tmp_path / f"kg.{fmt}", fmt)
    if fmt != "nq":
        export(registry_workspace, tmp_path / "kg.nq", "nq")
    parse_as = {"ttl": "turtle", "trig": "trig", "nq": "nquads", "jsonld": "json-ld"}[fmt]
    got = rdflib.Dataset()
    got.parse(tmp_path / f"kg.{fmt}", format=parse_as)
    reference = rdflib.Dataset()
    reference.parse(tmp_path / "kg.nq", format="nquads")
    assert len(set(got.quads((None, None, None, None)))) > 100
    union = {(s, p, o) for s, p, o, _g in reference.quads((None, None, None, None))}
    assert {(s, p, o) for s, p, o, _g in got.quads((None, None, None, None))} == union
    if fmt == "jsonld":
        text = (tmp_path / "kg.jsonld").read_text(encoding="utf-8")
        assert '"skos:prefLabel": ["metformin"]' in text  # compact: the context's prefixes
        assert json.loads(text)["@context"]["mkg"] == "https://w3id.org/medkg/vocab#"


def test_no_plain_edge_for_what_is_not_a_fact(registry_workspace: Path,
                                              tmp_path: Path) -> None:
    """A negated, hedged or family-history statement keeps its statement node but
    is never a plain Biolink edge."""
    from medkg.export.biolink import is_factual
    from medkg.store.vocab import IRIs, predicate_iri

    export(registry_workspace, tmp_path / "kg.nq", "nq")
    graph = rdflib.Dataset()
    graph.parse(tmp_path / "kg.nq", format="nquads")
    plain = {(s, p, o) for s, p, o, _g in graph.quads((None, None, None, None))}
    with Workspace.open(registry_workspace) as ws:
        iris = IRIs(ws.settings.store.base_iri)
        triples = ws.store.triples()
    not_facts = [t for t in triples if not is_factual(t.qualifiers)]
    assert not_facts, "the sample notes hold a negated or family-history statement"
    factual = {(t.head, t.predicate, t.tail) for t in triples if is_factual(t.qualifiers)}
    for t in not_facts:
        edge = (iris.node("entity", t.head), predicate_iri(t.predicate),
                iris.node("entity", t.tail))
        assert (edge in plain) == ((t.head, t.predicate, t.tail) in factual)


def test_filters(registry_workspace: Path, tmp_path: Path) -> None:
    with Workspace.open(registry_workspace) as ws:
        scores = sorted(t.confidence for t in ws.store.triples())
    median = scores[len(scores) // 2]
    everything = export(registry_workspace, tmp_path / "all", "neo4j-csv",
                        ExportFilter(include_negated=True))
    confident = export(registry_workspace, tmp_path / "conf", "neo4j-csv",
                       ExportFilter(min_confidence=median, include_negated=True))
    literature = export(registry_workspace, tmp_path / "lit", "neo4j-csv",
                        ExportFilter(layers=frozenset({Layer.LITERATURE})))
    assert confident.statements_left_out > everything.statements_left_out
    rows = list(csv.DictReader((tmp_path / "conf" / "statements.csv").open(encoding="utf-8")))
    assert rows and all(float(r["confidence:float"]) >= median for r in rows)
    lit_rows = list(csv.DictReader((tmp_path / "lit" / "entities.csv").open(encoding="utf-8")))
    assert lit_rows and all(r[":LABEL"] == "Entity|Literature" for r in lit_rows)
    assert literature.nodes < everything.nodes


def test_neo4j_csv_headers_and_references(registry_workspace: Path, tmp_path: Path) -> None:
    """What neo4j-admin import reads: typed headers, one :ID space, every
    relationship's ends among the nodes, the exact command in the README."""
    from medkg.export.propertygraph import import_command

    report = export(registry_workspace, tmp_path / "neo", "neo4j-csv")
    ids: set[str] = set()
    for name in ("entities.csv", "concepts.csv"):
        with (tmp_path / "neo" / name).open(encoding="utf-8", newline="") as f:
            reader = csv.reader(f)
            header = next(reader)
            assert header[0] == "id:ID" and header[-1] == ":LABEL"
            for row in reader:
                assert len(row) == len(header) and row[0] not in ids
                ids.add(row[0])
    relationships = 0
    for name in ("statements.csv", "links.csv"):
        with (tmp_path / "neo" / name).open(encoding="utf-8", newline="") as f:
            reader = csv.reader(f)
            header = next(reader)
            assert header[:3] == [":START_ID", ":END_ID", ":TYPE"]
            for row in reader:
                assert row[0] in ids and row[1] in ids and row[2].isupper()
                relationships += 1
    assert (len(ids), relationships) == (report.nodes, report.edges)
    assert import_command() in (tmp_path / "neo" / "README.md").read_text(encoding="utf-8")


def test_a_directory_format_never_replaces_the_workspace(registry_workspace: Path) -> None:
    from medkg.errors import WorkspaceError

    with Workspace.open(registry_workspace) as ws, pytest.raises(WorkspaceError,
                                                                 match="own files"):
        ws.export(registry_workspace.parent, "neo4j-csv", overwrite=True)
    assert (registry_workspace / "medkg.toml").exists()
