"""Vocabulary export: SKOS parses back; OWL passes HermiT; an unsatisfiable class fails."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
import rdflib
from rdflib.namespace import SKOS
from typer.testing import CliRunner

from medkg.cli import app
from medkg.errors import MedKGError
from medkg.export.vocabulary import check_owl
from tests.conftest import SEED_OBO

runner = CliRunner()
needs_java = pytest.mark.skipif(shutil.which("java") is None,
                                reason="HermiT needs Java (java not on PATH)")


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    path = tmp_path / "ws"
    assert runner.invoke(app, ["init", str(path)]).exit_code == 0
    assert runner.invoke(app, ["vocab", "load", str(SEED_OBO), "-w", str(path)]).exit_code == 0
    return path


def test_skos_export(ws: Path, tmp_path: Path) -> None:
    out = tmp_path / "v.ttl"
    result = runner.invoke(app, ["vocab", "export", str(out), "-w", str(ws)])
    assert result.exit_code == 0, result.output
    g = rdflib.Graph().parse(out, format="turtle")
    assert len(list(g.subjects(rdflib.RDF.type, SKOS.Concept))) == 74
    assert len(list(g.objects(None, SKOS.definition))) == 74
    assert len(list(g.objects(None, SKOS.broader))) == 6


@needs_java
def test_owl_export_is_consistent(ws: Path, tmp_path: Path) -> None:
    out = tmp_path / "v.owl"
    result = runner.invoke(app, ["vocab", "export", str(out), "-f", "owl", "--check",
                                 "-w", str(ws)])
    assert result.exit_code == 0, result.output
    assert "HermiT: consistent" in result.output
    g = rdflib.Graph().parse(out, format="xml")
    assert len(list(g.subjects(rdflib.RDF.type, rdflib.OWL.Class))) >= 74


@needs_java
def test_hermit_reports_unsatisfiable_classes(tmp_path: Path) -> None:
    out = tmp_path / "bad.owl"
    out.write_text("""<?xml version="1.0"?>
<rdf:RDF xmlns:rdf="http://www.w3.org/1999/02/22-rdf-syntax-ns#"
         xmlns:rdfs="http://www.w3.org/2000/01/rdf-schema#"
         xmlns:owl="http://www.w3.org/2002/07/owl#" xml:base="http://example.org/bad">
  <owl:Ontology rdf:about="http://example.org/bad"/>
  <owl:Class rdf:about="http://example.org/bad#A">
    <owl:disjointWith rdf:resource="http://example.org/bad#B"/>
  </owl:Class>
  <owl:Class rdf:about="http://example.org/bad#B"/>
  <owl:Class rdf:about="http://example.org/bad#C">
    <rdfs:subClassOf rdf:resource="http://example.org/bad#A"/>
    <rdfs:subClassOf rdf:resource="http://example.org/bad#B"/>
  </owl:Class>
</rdf:RDF>
""")
    with pytest.raises(MedKGError, match="unsatisfiable"):
        check_owl(out)


def test_owl_round_trip(ws: Path, tmp_path: Path) -> None:
    from medkg.ontology.loaders import load_file
    from medkg.ontology.obo import read_obo

    out = tmp_path / "v.owl"
    assert runner.invoke(app, ["vocab", "export", str(out), "-f", "owl", "-w", str(ws)]
                         ).exit_code == 0
    back = {c.name: c for c in load_file(out).concepts}
    original = {c.name: c for c in read_obo(SEED_OBO)[1]}
    assert set(back) == set(original)
    t2dm = back["type 2 diabetes mellitus"]
    assert t2dm.definition == original["type 2 diabetes mellitus"].definition
    assert set(t2dm.synonyms) == set(original["type 2 diabetes mellitus"].synonyms)
    assert [back_parent for back_parent in t2dm.parents] == [back["diabetes mellitus"].id]


def test_unreadable_owl_is_a_clear_error(tmp_path: Path) -> None:
    from medkg.errors import VocabularyError
    from medkg.ontology.loaders import load_file

    bad = tmp_path / "bad.owl"
    bad.write_text("<rdf:RDF this is not xml")
    with pytest.raises(VocabularyError, match=r"bad\.owl"):
        load_file(bad)
