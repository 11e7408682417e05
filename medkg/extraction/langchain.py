"""LangChain's ``LLMGraphTransformer`` (``langchain-experimental``, the extractor
behind Neo4j's LLM Graph Builder) as an extraction engine
(``extraction.engine = "langchain"``), with any LangChain chat model the user
passes in Python (:func:`medkg.integrations.langchain.use_chat_model`).

Each chunk is one LangChain ``Document``; the transformer is told medkg's entity
types and predicates (strict mode drops anything else). Its ``GraphDocument`` is
mapped into the same :class:`ChunkExtraction` as the other engines: a node
becomes mentions only where its name occurs in the chunk as written (never an
invented span), normalised to the vocabulary like the LLM engine's; a
relationship is kept only between two entities found in the chunk, anchored on
their closest mentions. Everything refused (a node not in the text, a
relationship of an unknown type or between entities not in the text, a failed
call) is recorded in the ledger's failures; a failed call leaves the document
unfinished for the next build to try again.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import TYPE_CHECKING, Any

from medkg.extraction.extract import ChunkExtraction
from medkg.extraction.llm import anchored_relations, entity_mentions
from medkg.extraction.nlp import Normaliser
from medkg.llm.ledger import Ledger
from medkg.llm.schemas import NAME, ExtractedEntity, ExtractedRelation
from medkg.model import Chunk, Predicate
from medkg.text import sentence_spans

if TYPE_CHECKING:
    from langchain_experimental.graph_transformers.llm import LLMGraphTransformer

STAGE = "extract"
# The node labels the transformer is asked for -> medkg's entity types (LLM schema).
NODE_TYPES: dict[str, str] = {
    "Drug": "drug", "Chemical": "chemical", "Disease": "disease", "Symptom": "symptom",
    "Finding": "finding", "Gene": "gene", "Procedure": "procedure", "LabTest": "lab_test",
    "Anatomy": "anatomy", "Organism": "organism", "Device": "device",
}
RELATIONSHIP_TYPES: dict[str, Predicate] = {p.value.upper(): p for p in Predicate}
INSTRUCTIONS = (
    "Extract only entities written in the text, each with its name exactly as written "
    "(no paraphrase, no expansion of abbreviations), and only relations the text states.")
TRANSFORMER_VERSION = "1"  # this mapping and its instructions (the extraction mark)


def transformer(chat_model: Any, tool_calling: bool = True) -> LLMGraphTransformer:
    """The transformer over ``chat_model``, told medkg's types and predicates."""
    from langchain_experimental.graph_transformers.llm import LLMGraphTransformer

    return LLMGraphTransformer(
        llm=chat_model, allowed_nodes=list(NODE_TYPES),
        allowed_relationships=list(RELATIONSHIP_TYPES), strict_mode=True,
        ignore_tool_usage=not tool_calling, additional_instructions=INSTRUCTIONS)


def langchain_extract(chunks: Sequence[Chunk], graph: LLMGraphTransformer,
                      normaliser: Normaliser, ledger: Ledger) -> Iterator[ChunkExtraction]:
    """Each chunk's extraction, in order (one transformer call per chunk)."""
    from langchain_core.documents import Document as LCDocument

    for chunk in chunks:
        result = ChunkExtraction(chunk)
        if not chunk.text.strip():
            yield result
            continue
        try:
            [found] = graph.convert_to_graph_documents([LCDocument(page_content=chunk.text)])
        except Exception as exc:  # any chat model's failure: recorded, retried next build
            reason = f"the LangChain graph transformer failed: {type(exc).__name__}: {exc}"
            ledger.fail(STAGE, chunk.id, reason[:500])
            result.failed = reason[:500]
            yield result
            continue
        _fill(result, found.nodes, found.relationships, normaliser, ledger)
        yield result


def _fill(result: ChunkExtraction, nodes: Sequence[Any], relationships: Sequence[Any],
          normaliser: Normaliser, ledger: Ledger) -> None:
    chunk = result.chunk
    sentences = sentence_spans(chunk.text)
    seen: set[str] = set()
    for node in nodes:
        name = str(node.id).strip()
        if not name or name.lower() in seen:
            continue
        seen.add(name.lower())
        kind = NODE_TYPES.get(str(node.type), "other")
        if len(name) > NAME:
            ledger.fail(STAGE, chunk.id, f"entity name over {NAME} characters: {name[:80]!r}")
            continue
        entity = ExtractedEntity.model_validate({"name": name, "type": kind})
        hits = entity_mentions(chunk, entity, normaliser, sentences)
        if not hits:
            ledger.fail(STAGE, chunk.id, f"entity not in the text: {name!r}")
        result.mentions.extend(hits)
    result.mentions.sort(key=lambda m: m.start)
    found = {m.text.lower() for m in result.mentions}
    stated = []
    for rel in relationships:
        head, tail = str(rel.source.id).strip(), str(rel.target.id).strip()
        predicate = RELATIONSHIP_TYPES.get(str(rel.type).upper())
        if predicate is None:
            ledger.fail(STAGE, chunk.id, f"relation of unknown type refused: {rel.type!r}")
        elif head.lower() not in found or tail.lower() not in found:
            ledger.fail(STAGE, chunk.id, "relation refused, an entity is not in the text: "
                        f"{head!r} {predicate.value} {tail!r}")
        elif head and tail and len(head) <= NAME and len(tail) <= NAME:
            stated.append(ExtractedRelation(head=head, predicate=predicate, tail=tail))
    [result.relations] = anchored_relations(stated, [result.mentions], pattern="langchain")
