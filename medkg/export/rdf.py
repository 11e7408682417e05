"""The whole graph as an RDF file, from any store's quads.

``ttl`` is the union of all graphs (Turtle has no named graphs); ``trig``,
``nq`` and ``jsonld`` keep the named graphs (one per layer, plus links). The
file is written beside the target and renamed, so a failed export leaves no
half-written file.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from rdflib import Dataset, Graph, URIRef
from rdflib.namespace import DCTERMS, OWL, PROV, SKOS

from medkg.config import StoreConfig
from medkg.errors import StoreError
from medkg.model import ReviewState, Triple
from medkg.review.decisions import in_force
from medkg.store.base import GraphStore
from medkg.store.vocab import BIOLINK, MKG, IRIs, predicate_iri

DEFAULT_BASE = StoreConfig().base_iri

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


Reviewed = Literal["accepted", "not-rejected", "all"]
REVIEWED: tuple[str, ...] = ("accepted", "not-rejected", "all")


def _keeps(t: Triple, reviewed: Reviewed) -> bool:
    if reviewed == "all":
        return True
    if reviewed == "accepted":
        return t.review is ReviewState.ACCEPTED
    return t.in_force  # neither rejected nor replaced by a curator's version


@dataclass(frozen=True)
class ReviewFilter:
    """What an export leaves out for a ``reviewed`` choice: the statement nodes
    of the triples it drops, their plain facts (where no kept statement asserts
    them) and evidence nodes only they used; and, as statement metadata, which
    decision holds for each statement a curator decided."""

    drop_nodes: frozenset[URIRef]
    drop_facts: frozenset[tuple[URIRef, URIRef, URIRef]]
    decided_by: tuple[tuple[URIRef, URIRef], ...]

    @classmethod
    def of(cls, store: GraphStore, iris: IRIs, reviewed: Reviewed) -> ReviewFilter:
        triples = store.triples()
        dropped = [t for t in triples if not _keeps(t, reviewed)]
        kept = [t for t in triples if _keeps(t, reviewed)]
        asserted = {(t.head, t.predicate, t.tail) for t in kept if not t.qualifiers.negated}
        used = {e.id for t in kept for e in t.evidence}
        nodes = {iris.node("statement", t.id) for t in dropped}
        nodes |= {iris.node("evidence", e.id) for t in dropped for e in t.evidence
                  if e.id not in used}
        facts = {(iris.node("entity", t.head), predicate_iri(t.predicate),
                  iris.node("entity", t.tail)) for t in dropped
                 if (t.head, t.predicate, t.tail) not in asserted}
        present = {t.id for t in kept}
        force = in_force(store.decisions())
        decided = tuple((iris.node("statement", target), iris.node("review", d.id))
                        for target, d in sorted(force.statements.items()) if target in present)
        return cls(frozenset(nodes), frozenset(facts), decided)


def export_rdf(store: GraphStore, path: Path, fmt: str, *, overwrite: bool = False,
               reviewed: Reviewed = "all", base_iri: str = DEFAULT_BASE) -> Path:
    """Write every quad of ``store`` to ``path`` in ``fmt`` (a key of EXPORT_FORMATS);
    an existing file is replaced only with ``overwrite``. ``reviewed`` keeps every
    statement (``all``), those no curator rejected or replaced (``not-rejected``),
    or only those a curator accepted (``accepted``); the ``review`` graph (every
    decision, as PROV-O) is always written, and each decided statement names the
    decision in force (``mkg:reviewDecision``)."""
    if fmt not in EXPORT_FORMATS:
        raise StoreError(
            f"unknown export format {fmt!r}", hint=f"use one of {', '.join(EXPORT_FORMATS)}"
        )
    if reviewed not in REVIEWED:
        raise StoreError(f"unknown review filter {reviewed!r}",
                         hint=f"use one of {', '.join(REVIEWED)}")
    check_target(path, overwrite=overwrite)
    iris = IRIs(base_iri)
    keep = ReviewFilter.of(store, iris, reviewed)
    # Copy into an in-memory dataset: serialisers need rdflib's own store API.
    out = Dataset()
    for prefix, ns in (("mkg", MKG), ("biolink", BIOLINK), ("skos", SKOS), ("prov", PROV),
                       ("dcterms", DCTERMS), ("owl", OWL)):
        out.bind(prefix, ns)
    merged = Graph(namespace_manager=out.namespace_manager)
    graphs: dict[URIRef, Graph] = {}
    review_graph = iris.graph("review")
    extra = [(s, MKG.reviewDecision, d, review_graph) for s, d in keep.decided_by]
    for s, p, o, gid in itertools.chain(store.quads(), extra):
        if s in keep.drop_nodes or (s, p, o) in keep.drop_facts:
            continue
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
