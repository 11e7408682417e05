"""Builtin extraction stage: vocabulary mentions with ConText qualifiers, and
pattern relations, assembled into layer entities and triples with evidence.

The stage is a pure function of (chunks, pipeline, vocabulary): the same input
gives the same entities, triples and ids.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field

from spacy.language import Language

from medkg import timing
from medkg.extraction.nlp import qualifiers_of
from medkg.extraction.population import population_of
from medkg.extraction.relations import match_pairs
from medkg.model import Chunk, Entity, Evidence, Layer, Mention, Predicate, Qualifiers, Triple
from medkg.ontology.index import ConceptIndex


@dataclass(frozen=True)
class MentionHit:
    concept_id: str
    group: str
    start: int  # document offsets
    end: int
    text: str
    qualifiers: Qualifiers
    sentence: tuple[int, int]  # document offsets of the sentence


@dataclass(frozen=True)
class RelationHit:
    head: MentionHit
    predicate: Predicate
    tail: MentionHit
    confidence: float
    pattern: str  # how it was found ("pattern:NAME", "llm", ...); "llm:inferred" is kept as
    # the triple's method as it is: implied by the model, never stated by the text
    condition: str = ""  # when it holds, as the text states it (the LLM engine's multi profile)


@dataclass
class ChunkExtraction:
    chunk: Chunk
    mentions: list[MentionHit] = field(default_factory=list)
    relations: list[RelationHit] = field(default_factory=list)
    failed: str = ""  # why the engine could not extract this chunk ("" when it could)


Relate = Callable[["ChunkExtraction"], list["RelationHit"]]


def extract(
    chunks: Iterable[Chunk], nlp: Language, batch_size: int = 32, relate: Relate | None = None
) -> Iterator[ChunkExtraction]:
    """Run the pipeline over chunks; offsets in the result are document offsets.

    ``relate`` (e.g. a trained RelationModel's ``relations``) adds relations the
    patterns did not state, for pairs the patterns left unrelated.
    """
    chunk_list = list(chunks)
    docs = nlp.pipe((c.text for c in chunk_list), batch_size=batch_size)
    for chunk, doc in zip(chunk_list, docs, strict=True):
        result = ChunkExtraction(chunk)
        base = chunk.start
        for sent in doc.sents:
            ents = [e for e in doc.ents if e.start >= sent.start and e.end <= sent.end]
            # spaCy hands leading/trailing whitespace to sentences; quotes exclude it.
            s_start = base + sent.start_char + (len(sent.text) - len(sent.text.lstrip()))
            s_end = base + sent.end_char - (len(sent.text) - len(sent.text.rstrip()))
            hits = [
                MentionHit(
                    concept_id=e.kb_id_, group=e.label_, start=base + e.start_char,
                    end=base + e.end_char, text=e.text, qualifiers=qualifiers_of(e),
                    sentence=(s_start, s_end),
                )
                for e in ents
            ]
            result.mentions.extend(hits)
            local = [(e.start_char - sent.start_char, e.end_char - sent.start_char, e.label_)
                     for e in ents]
            for m in match_pairs(sent.text, local):
                head, tail = hits[m.head_index], hits[m.tail_index]
                if head.concept_id != tail.concept_id:
                    result.relations.append(
                        RelationHit(head, m.predicate, tail, m.confidence, f"pattern:{m.pattern}")
                    )
        if relate is not None:
            known = {(r.head.concept_id, r.tail.concept_id) for r in result.relations}
            with timing.stage("relations"):
                found = relate(result)
            result.relations.extend(r for r in found
                                    if (r.head.concept_id, r.tail.concept_id) not in known)
        yield result


def _merge_qualifiers(a: Qualifiers, b: Qualifiers) -> Qualifiers:
    return Qualifiers(
        negated=a.negated or b.negated,
        uncertain=a.uncertain or b.uncertain,
        hypothetical=a.hypothetical or b.hypothetical,
        historical=a.historical or b.historical,
        experiencer=a.experiencer if a.experiencer != "patient" else b.experiencer,
    )


def assemble(
    layer: Layer,
    extractions: Iterable[ChunkExtraction],
    index: ConceptIndex,
    context_chars: int,
) -> tuple[list[Entity], list[Triple]]:
    """Group mentions into one entity per concept and relation hits into triples."""
    entities: dict[str, Entity] = {}
    triples: dict[str, Triple] = {}

    def quote(chunk: Chunk, span: tuple[int, int]) -> str:
        return chunk.text[span[0] - chunk.start : span[1] - chunk.start]

    def entity_for(hit: MentionHit, chunk: Chunk) -> Entity:
        concept = index.get(hit.concept_id)
        name = concept.name if concept else hit.text
        eid = Entity.key_for(layer, name, hit.group, hit.concept_id)
        if eid not in entities:
            entities[eid] = Entity(
                id=eid, layer=layer, name=name, type=hit.group,
                context=quote(chunk, hit.sentence)[:context_chars],
                concept_ids=[hit.concept_id] if concept else [],
            )
        return entities[eid]

    for ex in extractions:
        for hit in ex.mentions:
            entity = entity_for(hit, ex.chunk)
            entity.mentions.append(
                Mention(chunk_id=ex.chunk.id, document_id=ex.chunk.document_id,
                        start=hit.start, end=hit.end, text=hit.text,
                        qualifiers=hit.qualifiers)
            )
        for rel in ex.relations:
            head, tail = entity_for(rel.head, ex.chunk), entity_for(rel.tail, ex.chunk)
            # The evidence runs from the first to the last sentence of the two mentions.
            s = min(rel.head.sentence[0], rel.tail.sentence[0])
            e = max(rel.head.sentence[1], rel.tail.sentence[1])
            qualifiers = _merge_qualifiers(rel.head.qualifiers, rel.tail.qualifiers).model_copy(
                update={"population": rel.condition or population_of(quote(ex.chunk, (s, e)))})
            tid = Triple.key_for(layer, head.id, rel.predicate, tail.id, qualifiers)
            evidence = Evidence(chunk_id=ex.chunk.id, document_id=ex.chunk.document_id,
                                start=s, end=e, quote=quote(ex.chunk, (s, e)))
            if tid in triples:
                known = triples[tid]
                if evidence not in known.evidence:
                    known.evidence.append(evidence)
                known.confidence = max(known.confidence, rel.confidence)
            else:
                triples[tid] = Triple(
                    id=tid, layer=layer, head=head.id, predicate=rel.predicate, tail=tail.id,
                    evidence=[evidence], qualifiers=qualifiers, confidence=rel.confidence,
                    method=(rel.pattern if rel.pattern.startswith("llm:")
                            else f"builtin:{rel.pattern}"),
                )
    return list(entities.values()), list(triples.values())
