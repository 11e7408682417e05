"""Import a curated KGX graph into a layer (``medkg import --format kgx``).

The whole graph is read and checked first (:func:`medkg.export.kgx_reader.read_kgx`):
one bad row and nothing is written. Then:

- into the **vocabulary** layer, nodes become concepts (name, synonyms,
  description as definition, semantic group from the Biolink category) and
  ``subclass_of`` edges their parents; any other edge is refused;
- into the **user** or **literature** layer, the graph becomes documents like
  any other, so that every fact can be cited: one document per publication
  the edges name (titled with it, so exports give the publication back) and one
  for edges that name none. Its text is each edge's supporting text (the quote
  it came with), or, for an edge without one, the fact in words ("metformin
  treats type 2 diabetes mellitus."), one line each, followed by one line per
  node ("myalgia (HP:0003326, biolink:PhenotypicFeature): Muscle pain."), where
  each entity is mentioned. Nodes become entities normalised to the
  vocabulary's concept for their CURIE or name (so an imported
  ``DRUGBANK:DB00331`` and the metformin found in text are one entity),
  edges become statements whose evidence is their line, with their qualifiers
  and confidence. The
  documents are marked as extracted, so ``medkg build`` does not run NER over
  them, and links them like any other layer's.

Ids come from content, so importing the same graph again changes nothing, and
an import cut short is finished by running it again.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from medkg.export.kgx_reader import KgxEdge, KgxGraph, KgxImportError, KgxNode, read_kgx
from medkg.model import (
    Chunk,
    Concept,
    Document,
    Entity,
    Evidence,
    Layer,
    Mention,
    Predicate,
    Triple,
)
from medkg.pipeline.marks import STAGE_EXTRACTED, STAGE_INGESTED
from medkg.pipeline.progress import Progress, no_progress

if TYPE_CHECKING:
    from medkg.components import Components
    from medkg.ontology.index import ConceptIndex

MEDIA_TYPE = "text/x-kgx-import"
LOCAL_ENTITY = "MEDKG:ent-"  # a medkg export's node for an entity without a concept
NODES_PER_CHUNK = 20


@dataclass
class ImportReport:
    nodes: int = 0
    edges: int = 0
    documents: int = 0
    concepts: int = 0


def import_kgx(parts: Components, paths: Sequence[Path], layer: Layer,
               progress: Progress = no_progress) -> ImportReport:
    graph = read_kgx(paths)
    if layer is Layer.VOCABULARY:
        return _into_vocabulary(parts, graph)
    return _into_layer(parts, graph, layer, progress)


def _into_vocabulary(parts: Components, graph: KgxGraph) -> ImportReport:
    from medkg.ontology.loaders import VocabularyLoad
    from medkg.pipeline.ingest import store_vocabulary

    refused = [f"{e.where}: {e.predicate.biolink} is not a vocabulary relation (only "
               "subclass_of is; import a graph of facts into the literature or user layer)"
               for e in graph.edges if e.predicate is not Predicate.IS_A]
    if refused:
        raise KgxImportError(refused)
    parents: dict[str, list[str]] = defaultdict(list)
    for e in graph.edges:
        parents[e.subject].append(e.object)
    source = "KGX " + ", ".join(Path(f).name for f in graph.files)
    concepts = [Concept(id=n.id, name=n.name, synonyms=list(n.synonyms),
                        definition=n.description, semantic_group=n.group,
                        parents=sorted(set(parents[n.id])), source=source)
                for n in graph.nodes.values()]
    store_vocabulary(parts, VocabularyLoad(concepts, source))
    return ImportReport(nodes=len(concepts), edges=len(graph.edges), concepts=len(concepts))


def _sentence(edge: KgxEdge, nodes: dict[str, KgxNode]) -> str:
    words = edge.predicate.value.replace("_", " ")
    negation = "does not " if edge.qualifiers.negated else ""
    if negation and words.endswith("s") and " " not in words:
        words = words[:-1]  # "treats" -> "does not treat"
    return f"{nodes[edge.subject].name} {negation}{words} {nodes[edge.object].name}."


def _node_line(node: KgxNode) -> str:
    """Where a node's entity is mentioned: its name first, then what it is."""
    line = f"{node.name} ({node.id}, {node.category})"
    return f"{line}: {node.description}" if node.description else line


class _DocumentText:
    """A document's text, a line at a time, with the span of each line."""

    def __init__(self) -> None:
        self.lines: list[str] = []
        self.spans: dict[str, tuple[int, int]] = {}
        self.size = 0

    def line(self, text: str) -> tuple[int, int]:
        text = " ".join(text.split())
        if text not in self.spans:
            start = self.size + (1 if self.lines else 0)
            self.lines.append(text)
            self.size = start + len(text)
            self.spans[text] = (start, self.size)
        return self.spans[text]

    @property
    def text(self) -> str:
        return "\n".join(self.lines)


def _into_layer(parts: Components, graph: KgxGraph, layer: Layer,
                progress: Progress) -> ImportReport:
    from medkg.pipeline.curate import finish_deletes

    finish_deletes(parts)
    report = ImportReport(nodes=len(graph.nodes), edges=len(graph.edges))
    groups: dict[str | None, list[KgxEdge]] = defaultdict(list)
    for e in graph.edges:
        groups[e.publications[0] if e.publications else None].append(e)
    connected = {n for e in graph.edges for n in (e.subject, e.object)}
    isolated = [n for n in graph.nodes if n not in connected]
    if isolated or not groups:
        groups.setdefault(None, [])
    names = ", ".join(Path(f).name for f in graph.files)
    concepts_of = _normalise(parts.concept_index(), graph)
    index = parts.index("chunks")
    for i, (publication, edges) in enumerate(sorted(groups.items(), key=lambda kv: kv[0] or "")):
        progress("import", i, len(groups))
        node_ids = sorted({n for e in edges for n in (e.subject, e.object)}
                          | (set(isolated) if publication is None else set()))
        title = (f"{publication} (imported from KGX {names})" if publication
                 else f"KGX import: {names}")
        doc, chunks, entities, triples = _document(graph, edges, node_ids, layer, title,
                                                   " ".join(graph.files), concepts_of)
        store = parts.store
        if store.has_document(doc.id) and STAGE_EXTRACTED in store.stages(doc.id):
            continue  # imported before
        store.add_document(doc, chunks)
        index.upsert([c.id for c in chunks], parts.embedder.embed([c.text for c in chunks]))
        parts.lexical.upsert((c.id, c.text) for c in chunks)
        store.add_entities(entities)
        store.add_triples(triples)
        index.save()
        store.mark_stage(doc.id, STAGE_INGESTED)
        store.mark_stage(doc.id, STAGE_EXTRACTED)
        report.documents += 1
    progress("import", len(groups), len(groups))
    return report


def _normalise(index: ConceptIndex, graph: KgxGraph) -> dict[str, list[str]]:
    """Each node's concepts: the vocabulary's concept for its CURIE (its own id, the
    id that replaced it, or the concept it was merged into as a cross-reference),
    else one whose name or synonym is the node's name, in the same semantic group;
    the node's own CURIE is kept beside it. A medkg export's entity without a
    concept stays without one."""
    out: dict[str, list[str]] = {}
    for node in graph.nodes.values():
        if node.id.startswith(LOCAL_ENTITY):
            out[node.id] = []
            continue
        found = index.resolve(node.id) or next(
            (c for c in index.lookup(node.name) if c.semantic_group in (node.group, None)), None)
        out[node.id] = list(dict.fromkeys([found.id, node.id] if found else [node.id]))
    return out


def _document(graph: KgxGraph, edges: list[KgxEdge], node_ids: list[str], layer: Layer,
              title: str, source: str, concepts_of: dict[str, list[str]]
              ) -> tuple[Document, list[Chunk], list[Entity], list[Triple]]:
    text = _DocumentText()
    quotes: list[list[tuple[int, int]]] = []
    for e in edges:
        lines = e.supporting_text or (_sentence(e, graph.nodes),)
        quotes.append([text.line(q) for q in lines])
    node_lines = [text.line(_node_line(graph.nodes[n])) for n in node_ids]
    doc = Document.create(layer=layer, title=title, source=source, media_type=MEDIA_TYPE,
                          text=text.text)
    # One chunk per evidence line; the node lines in chunks of NODES_PER_CHUNK.
    spans = sorted({s for q in quotes for s in q})
    node_spans = [node_lines[i:i + NODES_PER_CHUNK]
                  for i in range(0, len(node_lines), NODES_PER_CHUNK)]
    bounds = [*spans, *((group[0][0], group[-1][1]) for group in node_spans)]
    chunks = [Chunk.create(doc, i, start, end) for i, (start, end) in enumerate(bounds)]

    chunk_at = {c.start: c for c in chunks[:len(spans)]}
    entity_of: dict[str, Entity] = {}
    for i, (n, (start, _end)) in enumerate(zip(node_ids, node_lines, strict=True)):
        node = graph.nodes[n]
        concepts = concepts_of[n]
        chunk = chunks[len(spans) + i // NODES_PER_CHUNK]
        mention = Mention(chunk_id=chunk.id, document_id=doc.id, start=start,
                          end=start + len(node.name), text=doc.text[start:start + len(node.name)])
        entity_of[n] = Entity(
            id=Entity.key_for(layer, node.name, node.group, concepts[0] if concepts else None),
            layer=layer, name=node.name, type=node.group, context=node.description or "",
            concept_ids=concepts, mentions=[mention])
    triples = []
    for e, spans_of_edge in zip(edges, quotes, strict=True):
        head, tail = entity_of[e.subject].id, entity_of[e.object].id
        evidence = [Evidence(chunk_id=chunk_at[s].id, document_id=doc.id, start=s, end=end,
                             quote=doc.text[s:end]) for s, end in spans_of_edge]
        triples.append(Triple(
            id=Triple.key_for(layer, head, e.predicate, tail, e.qualifiers), layer=layer,
            head=head, predicate=e.predicate, tail=tail, evidence=evidence,
            qualifiers=e.qualifiers, confidence=e.confidence, level=e.level,
            method=e.method or "import:kgx"))
    return doc, chunks, list(entity_of.values()), triples
