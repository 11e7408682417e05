"""The LLM engine's extraction stage: the same output as the builtin one
(:class:`ChunkExtraction` per chunk), so assembly, linking and storage do not
know which engine ran.

Per call, the ``extract_entities`` prompt asks for entities (name, type,
context, assertion) and the relations the text states, for one chunk or for
several consecutive ones joined (``llm.pack_tokens``: the instructions and
example are then paid once per pack, not once per chunk). Every entity must be
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

from medkg.construction.extraction import ChunkExtraction, MentionHit, RelationHit
from medkg.construction.nlp import UNKNOWN_GROUP, Normaliser
from medkg.errors import LLMOutputError
from medkg.llm.client import LLM
from medkg.llm.packing import MAX_CHUNKS, joined, pack
from medkg.llm.prompts import load_prompt
from medkg.llm.schemas import TYPE_GROUPS, ExtractedEntity, ExtractionAnswer, extraction_answer
from medkg.model import Chunk
from medkg.text import sentence_spans

STAGE = "extract"
_LETTER = re.compile(r"[^\W\d_]")


def _occurrences(text: str, name: str) -> list[tuple[int, int]]:
    pattern = re.compile(rf"(?<!\w){re.escape(name.strip())}(?!\w)", re.IGNORECASE)
    return [(m.start(), m.end()) for m in pattern.finditer(text)]


def _mentions(chunk: Chunk, entity: ExtractedEntity, normaliser: Normaliser,
              sentences: list[tuple[int, int]]) -> list[MentionHit]:
    group = TYPE_GROUPS[entity.type]
    concept_id, _ = normaliser.normalise(entity.name, group)
    qualifiers = entity.qualifiers()
    hits = []
    for start, end in _occurrences(chunk.text, entity.name):
        sentence = next(((a, b) for a, b in sentences if a <= start < b), (0, len(chunk.text)))
        hits.append(MentionHit(
            concept_id=concept_id, group=group or UNKNOWN_GROUP, start=chunk.start + start,
            end=chunk.start + end, text=chunk.text[start:end], qualifiers=qualifiers,
            sentence=(chunk.start + sentence[0], chunk.start + sentence[1])))
    return hits


def _relations(answer: ExtractionAnswer, mentions: list[list[MentionHit]]
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
    for r in answer.relations:
        head_name, tail_name = r.head.strip().lower(), r.tail.strip().lower()
        pairs = [(i, h, t) for i, names in enumerate(by_name)
                 for h in names.get(head_name, []) for t in names.get(tail_name, []) if h != t]
        if pairs:
            i, head, tail = min(pairs, key=lambda p: (p[1].sentence != p[2].sentence,
                                                      abs(p[1].start - p[2].start)))
            out[i].append(RelationHit(head, r.predicate, tail, r.confidence, "llm"))
    return out


def expected_output_tokens(chunk_tokens: int, example_ratio: float, max_tokens: int) -> int:
    """Output tokens an extraction answer takes for a chunk of ``chunk_tokens``: as
    many per text token as the prompt's few-shot example shows (its answer's
    tokens over its text's), plus the JSON frame, at most ``max_tokens``."""
    return min(max_tokens, 20 + round(example_ratio * chunk_tokens))


def llm_extract(chunks: Sequence[Chunk], llm: LLM, normaliser: Normaliser,
                pack_tokens: int = 0) -> Iterator[ChunkExtraction]:
    """Each chunk's extraction, in order; consecutive chunks share a call up to
    ``pack_tokens`` text tokens (see :mod:`medkg.llm.packing`)."""
    prompt = load_prompt("extract_entities")
    for group in pack(chunks, llm.backend.count_tokens, pack_tokens, MAX_CHUNKS):
        results = [ChunkExtraction(c) for c in group]
        text = joined(group)
        try:
            answer = llm.structured(STAGE, prompt.render(text=text),
                                    extraction_answer(len(group)))
        except LLMOutputError as exc:
            for result in results:
                llm.ledger.fail(STAGE, result.chunk.id, str(exc))
                result.failed = str(exc)  # the document is left unfinished: a rerun asks again
            yield from results
            continue
        if not answer.entities and _LETTER.search(text):
            for result in results:
                llm.ledger.fail(STAGE, result.chunk.id, "no entities for a chunk with text")
        sentences = [sentence_spans(c.text) for c in group]
        seen: set[str] = set()
        for entity in answer.entities:
            if entity.name.strip().lower() in seen:  # small models repeat themselves
                continue
            seen.add(entity.name.strip().lower())
            found = False
            for result, spans in zip(results, sentences, strict=True):
                hits = _mentions(result.chunk, entity, normaliser, spans)
                result.mentions.extend(hits)
                found = found or bool(hits)
            if not found:
                llm.ledger.fail(STAGE, group[0].id, f"entity not in the text: {entity.name!r}")
        for result in results:
            result.mentions.sort(key=lambda m: m.start)
        for result, relations in zip(results, _relations(answer, [r.mentions for r in results]),
                                     strict=True):
            result.relations = relations
        yield from results
