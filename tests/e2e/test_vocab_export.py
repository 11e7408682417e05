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
from medkg.ontology.export import check_owl
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
