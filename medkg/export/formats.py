"""Every export format, listed in one place: its name, whether it writes one file
or a directory, and the function that writes it from a :class:`GraphView`."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from medkg.errors import StoreError
from medkg.export.view import ExportReport, GraphView

Writer = Callable[[GraphView, Path, bool], ExportReport]


@dataclass(frozen=True)
class ExportFormat:
    name: str
    directory: bool  # writes a directory of files
    summary: str
    write: Writer
    negated_by_default: bool = False  # RDF keeps negated statements as statement nodes


def _rdf(fmt: str) -> Writer:
    def write(view: GraphView, path: Path, overwrite: bool) -> ExportReport:
        from medkg.export.rdf import export_rdf

        return export_rdf(view.store, path, fmt, overwrite=overwrite, base_iri=view.iris.base,
                          flt=view.filter)
    return write


def _kgx(fmt: str, normalised_only: bool = False) -> Writer:
    def write(view: GraphView, path: Path, overwrite: bool) -> ExportReport:
        from medkg.export.kgx import write_kgx

        return write_kgx(view, path, "tsv" if fmt == "tsv" else "jsonl", overwrite=overwrite,
                         normalised_only=normalised_only)
    return write


def _owl(view: GraphView, path: Path, overwrite: bool) -> ExportReport:
    from medkg.export.owl import write_owl_graph

    return write_owl_graph(view, path, overwrite=overwrite)


def _graphml(view: GraphView, path: Path, overwrite: bool) -> ExportReport:
    from medkg.export.propertygraph import write_graphml

    return write_graphml(view, path, overwrite=overwrite)


def _neo4j(view: GraphView, path: Path, overwrite: bool) -> ExportReport:
    from medkg.export.propertygraph import write_neo4j_csv

    return write_neo4j_csv(view, path, overwrite=overwrite)


def _sssom(view: GraphView, path: Path, overwrite: bool) -> ExportReport:
    from medkg.export.sssom import write_sssom

    return write_sssom(view, path, overwrite=overwrite)


FORMATS: dict[str, ExportFormat] = {f.name: f for f in (
    ExportFormat("ttl", False, "RDF, all graphs merged (Turtle)", _rdf("ttl"), True),
    ExportFormat("trig", False, "RDF with the named graphs (TriG)", _rdf("trig"), True),
    ExportFormat("nq", False, "RDF with the named graphs (N-Quads)", _rdf("nq"), True),
    ExportFormat("jsonld", False, "RDF as compact JSON-LD with medkg's context",
                 _rdf("jsonld"), True),
    ExportFormat("kgx-tsv", True, "KGX nodes and edges, TSV (Biolink)", _kgx("tsv")),
    ExportFormat("kgx-jsonl", True, "KGX nodes and edges, JSON Lines (Biolink)", _kgx("jsonl")),
    ExportFormat("kgx-tsv-normalised", True,
                 "KGX TSV without entities that have no concept (every id a Biolink prefix)",
                 _kgx("tsv", normalised_only=True)),
    ExportFormat("owl", False, "the whole graph as an OWL 2 ontology (RDF/XML)", _owl),
    ExportFormat("graphml", False, "property graph as GraphML", _graphml),
    ExportFormat("neo4j-csv", True, "CSV files and README for neo4j-admin import", _neo4j),
    ExportFormat("sssom", False, "entity -> concept mappings and merges (SSSOM TSV)", _sssom),
)}


def export_format(name: str) -> ExportFormat:
    if name not in FORMATS:
        raise StoreError(f"unknown export format {name!r}",
                         hint=f"use one of {', '.join(FORMATS)}")
    return FORMATS[name]
