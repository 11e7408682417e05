"""The LLM engine's extraction stage: the same output as the builtin one
(:class:`ChunkExtraction` per chunk), so assembly, linking and storage do not
know which engine ran.

Per chunk, the ``extract_entities`` prompt asks for entities (name, type,
context, assertion) and the relations the text states. Every entity must be
found in the chunk as written: its character spans are where its name occurs,
never invented; a name that does not occur is dropped and recorded. Mentions
are normalised to vocabulary concepts like the builtin engine's. An answer that
stays unusable after repair, or that has no entities for a chunk with text, is
recorded in the ledger's failures; the chunk then contributes nothing and the
build goes on.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator

from medkg.construction.extraction import ChunkExtraction, MentionHit, RelationHit
from medkg.construction.nlp import UNKNOWN_GROUP, Normaliser
from medkg.errors import LLMOutputError
from medkg.llm.client import LLM
from medkg.llm.prompts import load_prompt
from medkg.llm.schemas import TYPE_GROUPS, ExtractedEntity, ExtractionAnswer
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


def _relations(answer: ExtractionAnswer, mentions: list[MentionHit]) -> list[RelationHit]:
    """Relations between entities that were found, anchored on the closest pair
    of their mentions (the same sentence when there is one)."""
    by_name: dict[str, list[MentionHit]] = {}
    for m in mentions:
        by_name.setdefault(m.text.lower(), []).append(m)
    out = []
    for r in answer.relations:
        heads, tails = by_name.get(r.head.strip().lower()), by_name.get(r.tail.strip().lower())
        if not heads or not tails:
            continue
        head, tail = min(((h, t) for h in heads for t in tails if h != t),
                         key=lambda ht: (ht[0].sentence != ht[1].sentence,
                                         abs(ht[0].start - ht[1].start)),
                         default=(None, None))
        if head is not None and tail is not None:
            out.append(RelationHit(head, r.predicate, tail, r.confidence, "llm"))
    return out


def expected_output_tokens(chunk_tokens: int, example_ratio: float, max_tokens: int) -> int:
    """Output tokens an extraction answer takes for a chunk of ``chunk_tokens``: as
    many per text token as the prompt's few-shot example shows (its answer's
    tokens over its text's), plus the JSON frame, at most ``max_tokens``."""
    return min(max_tokens, 20 + round(example_ratio * chunk_tokens))


def llm_extract(chunks: Iterable[Chunk], llm: LLM, normaliser: Normaliser
                ) -> Iterator[ChunkExtraction]:
    prompt = load_prompt("extract_entities")
    for chunk in chunks:
        result = ChunkExtraction(chunk)
        try:
            answer = llm.structured(STAGE, prompt.render(text=chunk.text), ExtractionAnswer)
        except LLMOutputError as exc:
            llm.ledger.fail(STAGE, chunk.id, str(exc))
            result.failed = str(exc)  # the document is left unfinished: a rerun asks again
            yield result
            continue
        if not answer.entities and _LETTER.search(chunk.text):
            llm.ledger.fail(STAGE, chunk.id, "no entities for a chunk with text")
        sentences = sentence_spans(chunk.text)
        seen: set[str] = set()
        for entity in answer.entities:
            if entity.name.strip().lower() in seen:  # small models repeat themselves
                continue
            seen.add(entity.name.strip().lower())
            hits = _mentions(chunk, entity, normaliser, sentences)
            if not hits:
                llm.ledger.fail(STAGE, chunk.id, f"entity not in the text: {entity.name!r}")
            result.mentions.extend(hits)
        result.mentions.sort(key=lambda m: m.start)
        result.relations = _relations(answer, result.mentions)
        yield result
