"""The LLM engine's extraction stage: the same output as the builtin one
(:class:`ChunkExtraction` per chunk), so assembly, linking and storage do not
know which engine ran.

Two profiles (``extraction.llm_profile``). ``single``: per call, the
``extract_entities`` prompt asks for entities (name, type, context, assertion)
and the relations the text states, for one chunk or for several consecutive
ones joined (``llm.pack_tokens``: the instructions and example are then paid
once per pack, not once per chunk). ``multi`` (KGCaRe) asks four prompts per
pack: (1) ``understand_context``: the entities and the text's temporal, causal,
procedural and conditional structure; (2) ``expand_conditions``: the relations
with the condition each holds under (if, unless, population, dose), kept as
the triple's population qualifier; (3) ``refine_triples``: relations the stated
ones imply, stored with method ``llm:inferred`` and a confidence of at most
``INFERRED_CONFIDENCE`` (never as stated facts; the RuleHub verifies them like
any other); (4) ``normalise_entities``: each entity's standard name, tried by
the normaliser when the name as written finds no concept. Every entity must be
found in a chunk as written: its character spans are where its name occurs in
each chunk of the pack, never invented; a name that occurs nowhere is dropped
and recorded. A relation is kept in the chunk where its two entities are
closest. Mentions are normalised to vocabulary concepts like the builtin
engine's. An answer that stays unusable after repair, or that has no entities
for a pack with text, is recorded in the ledger's failures for each of its
chunks; they then contribute nothing and the build goes on.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field

from medkg.errors import LLMOutputError
from medkg.extraction.extract import ChunkExtraction, MentionHit, RelationHit
from medkg.extraction.nlp import UNKNOWN_GROUP, Normaliser
from medkg.llm.client import LLM
from medkg.llm.packing import MAX_CHUNKS, joined, pack
from medkg.llm.prompts import load_prompt
from medkg.llm.schemas import (
    TYPE_GROUPS,
    ConditionalRelation,
    ExtractedEntity,
    ExtractedRelation,
    InferredRelations,
    StandardNames,
    conditional_relations,
    context_answer,
    extraction_answer,
)
from medkg.model import Chunk
from medkg.text import sentence_spans

STAGE = "extract"
PROFILES: dict[str, tuple[str, ...]] = {
    "single": ("extract_entities",),
    "multi": ("understand_context", "expand_conditions", "refine_triples",
              "normalise_entities"),
}
INFERRED_CONFIDENCE = 0.5
_LETTER = re.compile(r"[^\W\d_]")


def _occurrences(text: str, name: str) -> list[tuple[int, int]]:
    pattern = re.compile(rf"(?<!\w){re.escape(name.strip())}(?!\w)", re.IGNORECASE)
    return [(m.start(), m.end()) for m in pattern.finditer(text)]


def entity_mentions(chunk: Chunk, entity: ExtractedEntity, normaliser: Normaliser,
                    sentences: list[tuple[int, int]], standard: str = "") -> list[MentionHit]:
    group = TYPE_GROUPS[entity.type]
    concept_id, _ = normaliser.normalise(entity.name, group)
    if not concept_id and standard and standard.lower() != entity.name.lower():
        concept_id, _ = normaliser.normalise(standard, group)
    qualifiers = entity.qualifiers()
    hits = []
    for start, end in _occurrences(chunk.text, entity.name):
        sentence = next(((a, b) for a, b in sentences if a <= start < b), (0, len(chunk.text)))
        hits.append(MentionHit(
            concept_id=concept_id, group=group or UNKNOWN_GROUP, start=chunk.start + start,
            end=chunk.start + end, text=chunk.text[start:end], qualifiers=qualifiers,
            sentence=(chunk.start + sentence[0], chunk.start + sentence[1])))
    return hits


def anchored_relations(relations: Sequence[ExtractedRelation],
                       mentions: list[list[MentionHit]], pattern: str = "llm"
                       ) -> list[list[RelationHit]]:
    """Relations between entities that were found, each anchored on the closest
    pair of their mentions in one chunk of the pack (the same sentence when there
    is one); a relation whose two entities never share a chunk is not kept."""
    by_name: list[dict[str, list[MentionHit]]] = []
    for chunk_mentions in mentions:
        names: dict[str, list[MentionHit]] = {}
        for m in chunk_mentions:
            names.setdefault(m.text.lower(), []).append(m)
        by_name.append(names)
    out: list[list[RelationHit]] = [[] for _ in mentions]
    for r in relations:
        head_name, tail_name = r.head.strip().lower(), r.tail.strip().lower()
        pairs = [(i, h, t) for i, names in enumerate(by_name)
                 for h in names.get(head_name, []) for t in names.get(tail_name, []) if h != t]
        if pairs:
            i, head, tail = min(pairs, key=lambda p: (p[1].sentence != p[2].sentence,
                                                      abs(p[1].start - p[2].start)))
            condition = r.condition if isinstance(r, ConditionalRelation) else ""
            confidence = (min(r.confidence, INFERRED_CONFIDENCE) if pattern == "llm:inferred"
                          else r.confidence)
            out[i].append(RelationHit(head, r.predicate, tail, confidence, pattern, condition))
    return out


def expected_output_tokens(chunk_tokens: int, example_ratio: float, max_tokens: int) -> int:
    """Output tokens an extraction answer takes for a chunk of ``chunk_tokens``: as
    many per text token as the prompt's few-shot example shows (its answer's
    tokens over its text's), plus the JSON frame, at most ``max_tokens``."""
    return min(max_tokens, 20 + round(example_ratio * chunk_tokens))


def llm_extract(chunks: Sequence[Chunk], llm: LLM, normaliser: Normaliser,
                pack_tokens: int = 0, profile: str = "single") -> Iterator[ChunkExtraction]:
    """Each chunk's extraction, in order; consecutive chunks share a call (or, with
    the ``multi`` profile, four calls) up to ``pack_tokens`` text tokens (see
    :mod:`medkg.llm.packing`)."""
    for group in pack(chunks, llm.backend.count_tokens, pack_tokens, MAX_CHUNKS):
        results = [ChunkExtraction(c) for c in group]
        text = joined(group)
        try:
            found = (_ask_multi(llm, text, len(group)) if profile == "multi"
                     else _ask_single(llm, text, len(group)))
        except LLMOutputError as exc:
            for result in results:
                llm.ledger.fail(STAGE, result.chunk.id, str(exc))
                result.failed = str(exc)  # the document is left unfinished: a rerun asks again
            yield from results
            continue
        _fill(results, found, text, llm, normaliser)
        yield from results


@dataclass
class _Found:
    """What the prompts of one profile found in a pack."""

    entities: list[ExtractedEntity]
    relations: list[ExtractedRelation]
    inferred: list[ExtractedRelation] = field(default_factory=list)
    standard: dict[str, str] = field(default_factory=dict)  # name (lower) -> standard name


def _ask_single(llm: LLM, text: str, chunks: int) -> _Found:
    answer = llm.structured(STAGE, load_prompt("extract_entities").render(text=text),
                            extraction_answer(chunks))
    return _Found(list(answer.entities), list(answer.relations))


def _ask_multi(llm: LLM, text: str, chunks: int) -> _Found:
    """KGCaRe's four prompts over one pack; each sees what the ones before found."""
    context = llm.structured(STAGE, load_prompt("understand_context").render(text=text),
                             context_answer(chunks))
    names = "; ".join(dict.fromkeys(e.name for e in context.entities)) or "none"
    structure = "; ".join(f"{s.kind}: {s.note}" for s in context.structure) or "none"
    stated = llm.structured(STAGE, load_prompt("expand_conditions").render(
        text=text, entities=names, structure=structure), conditional_relations(chunks))
    listing = "\n".join(
        f"{r.head} {r.predicate.value} {r.tail}"
        + (f" ({r.condition_kind} {r.condition})" if r.condition else "")
        for r in stated.relations) or "none"
    inferred = llm.structured(STAGE, load_prompt("refine_triples").render(
        text=text, relations=listing), InferredRelations)
    standard: dict[str, str] = {}
    if context.entities:
        answer = llm.structured(STAGE, load_prompt("normalise_entities").render(
            entities=names), StandardNames)
        standard = {n.name.strip().lower(): n.standard.strip() for n in answer.names}
    said = {(r.head.lower(), r.predicate, r.tail.lower()) for r in stated.relations}
    return _Found(list(context.entities), list(stated.relations),
                  [r for r in inferred.inferred
                   if (r.head.lower(), r.predicate, r.tail.lower()) not in said], standard)


def _fill(results: list[ChunkExtraction], found: _Found, text: str, llm: LLM,
          normaliser: Normaliser) -> None:
    """Mentions where the entities occur in each chunk of the pack, and the relations
    anchored on them."""
    if not found.entities and _LETTER.search(text):
        for result in results:
            llm.ledger.fail(STAGE, result.chunk.id, "no entities for a chunk with text")
    sentences = [sentence_spans(r.chunk.text) for r in results]
    seen: set[str] = set()
    for entity in found.entities:
        if entity.name.strip().lower() in seen:  # small models repeat themselves
            continue
        seen.add(entity.name.strip().lower())
        standard = found.standard.get(entity.name.strip().lower(), "")
        hits_found = False
        for result, spans in zip(results, sentences, strict=True):
            hits = entity_mentions(result.chunk, entity, normaliser, spans, standard)
            result.mentions.extend(hits)
            hits_found = hits_found or bool(hits)
        if not hits_found:
            llm.ledger.fail(STAGE, results[0].chunk.id,
                            f"entity not in the text: {entity.name!r}")
    for result in results:
        result.mentions.sort(key=lambda m: m.start)
    mentions = [r.mentions for r in results]
    stated = anchored_relations(found.relations, mentions)
    inferred = anchored_relations(found.inferred, mentions, "llm:inferred")
    for result, a, b in zip(results, stated, inferred, strict=True):
        result.relations = a + b
