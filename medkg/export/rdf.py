"""The whole graph as an RDF file, from any store's quads.

``ttl`` is the union of all graphs (Turtle has no named graphs); ``trig``,
``nq`` and ``jsonld`` keep the named graphs (one per layer, plus links). The
file is written beside the target and renamed, so a failed export leaves no
half-written file.
"""

from __future__ import annotations

from pathlib import Path

from rdflib import Dataset, Graph, URIRef
from rdflib.namespace import DCTERMS, OWL, PROV, SKOS

from medkg.errors import StoreError
from medkg.store.base import GraphStore
from medkg.store.vocab import BIOLINK, MKG

EXPORT_FORMATS = {"ttl": "turtle", "trig": "trig", "nq": "nquads", "jsonld": "json-ld"}


def check_target(path: Path, *, overwrite: bool) -> None:
    """A file may be written at ``path``: its directory exists, it is not a
    directory, and it is not there already unless ``overwrite``."""
    if path.is_dir():
        raise StoreError(f"{path} is a directory", hint="name the file to write")
    if not path.parent.is_dir():
        raise StoreError(f"cannot write {path}: no directory {path.parent}",
                         hint="create the directory first")
    if path.exists() and not overwrite:
        raise StoreError(f"{path} exists", hint="pass --force to replace it")


def export_rdf(store: GraphStore, path: Path, fmt: str, *, overwrite: bool = False) -> Path:
    """Write every quad of ``store`` to ``path`` in ``fmt`` (a key of EXPORT_FORMATS);
    an existing file is replaced only with ``overwrite``."""
    if fmt not in EXPORT_FORMATS:
        raise StoreError(
            f"unknown export format {fmt!r}", hint=f"use one of {', '.join(EXPORT_FORMATS)}"
        )
    check_target(path, overwrite=overwrite)
    # Copy into an in-memory dataset: serialisers need rdflib's own store API.
    out = Dataset()
    for prefix, ns in (("mkg", MKG), ("biolink", BIOLINK), ("skos", SKOS), ("prov", PROV),
                       ("dcterms", DCTERMS), ("owl", OWL)):
        out.bind(prefix, ns)
    merged = Graph(namespace_manager=out.namespace_manager)
    graphs: dict[URIRef, Graph] = {}
    for s, p, o, gid in store.quads():
        if fmt == "ttl":
            merged.add((s, p, o))
            continue
        if gid not in graphs:
            graphs[gid] = out.graph(gid)
        graphs[gid].add((s, p, o))
    tmp = path.with_name(path.name + ".tmp")
    target: Graph = merged if fmt == "ttl" else out
    try:
        target.serialize(destination=str(tmp), format=EXPORT_FORMATS[fmt])
        tmp.replace(path)
    except OSError as exc:
        tmp.unlink(missing_ok=True)
        raise StoreError(f"cannot write {path}: {exc.strerror or exc}",
                         hint="is the disk full, or the directory read-only?") from exc
    return path
