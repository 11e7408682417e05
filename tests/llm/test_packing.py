"""Several chunks per LLM call: how chunks are packed, and how one answer for a
pack is split back into each chunk's extraction and tag summary. The answers
are scripted (plumbing only); the real model answers packs in test_engines.py
and in the build of test_llm_build.py."""

from __future__ import annotations

import json
from pathlib import Path

from medkg.engines import ChunkGraph, LLMSummariser
from medkg.extraction.lexicon import resolve_lexicon
from medkg.extraction.llm import llm_extract
from medkg.extraction.nlp import Normaliser
from medkg.llm.client import LLM
from medkg.llm.ledger import Ledger
from medkg.llm.packing import joined, numbered, pack
from medkg.llm.port import GenerationParams
from medkg.model import Chunk, Document, Layer
from medkg.ontology.index import ConceptIndex
from tests.llm.test_client import Scripted

SENTENCES = ["Lisinopril treats hypertension.", "Cough is an adverse effect of lisinopril.",
             "Metformin lowers glucose."]


def _chunks() -> list[Chunk]:
    text = " ".join(SENTENCES)
    doc = Document.create(layer=Layer.USER, title="t", source="s", media_type="text/plain",
                          text=text)
    chunks, start = [], 0
    for i, sentence in enumerate(SENTENCES):
        chunks.append(Chunk.create(doc, i, start, start + len(sentence)))
        start += len(sentence) + 1
    return chunks


def _words(text: str) -> int:
    return len(text.split())


def test_pack_fills_calls_up_to_the_budget_in_order() -> None:
    chunks = _chunks()  # 3, 7 and 3 words
    assert pack(chunks, _words, 10, 8) == [chunks[:2], chunks[2:]]
    assert pack(chunks, _words, 100, 2) == [chunks[:2], chunks[2:]]  # at most 2 per call
    assert pack(chunks, _words, 100, 8) == [chunks]
    assert pack(chunks, _words, 0, 8) == [[c] for c in chunks]  # 0: one call per chunk
    assert pack(chunks, _words, 2, 8) == [[c] for c in chunks]  # too long: alone
    assert pack([], _words, 10, 8) == []
    assert joined(chunks[:2]) == f"{SENTENCES[0]}\n\n{SENTENCES[1]}"
    assert numbered(chunks[:2]) == f"[1] {SENTENCES[0]}\n\n[2] {SENTENCES[1]}"


def test_one_answer_for_a_pack_is_split_into_each_chunk(tmp_path: Path) -> None:
    answer = {"entities": [
        {"name": "lisinopril", "type": "drug"}, {"name": "hypertension", "type": "disease"},
        {"name": "cough", "type": "symptom"}, {"name": "metformin", "type": "drug"},
        {"name": "aspirin", "type": "drug"}],  # not in the text: dropped and recorded
        "relations": [
            {"head": "lisinopril", "predicate": "treats", "tail": "hypertension"},
            {"head": "lisinopril", "predicate": "has_adverse_effect", "tail": "cough"},
            {"head": "metformin", "predicate": "treats", "tail": "hypertension"}]}
    backend = Scripted([json.dumps(answer)])
    llm = LLM(backend, Ledger(tmp_path / "llm.sqlite"), GenerationParams())
    chunks = _chunks()
    out = list(llm_extract(chunks, llm, Normaliser(ConceptIndex([]), resolve_lexicon("none")),
                           pack_tokens=100))
    assert backend.calls == 1  # three chunks, one call
    assert [ex.chunk for ex in out] == chunks
    names = [[m.text.lower() for m in ex.mentions] for ex in out]
    assert names == [["lisinopril", "hypertension"], ["cough", "lisinopril"], ["metformin"]]
    for ex in out:  # offsets in the document, inside the chunk that holds them
        for m in ex.mentions:
            assert ex.chunk.start <= m.start < m.end <= ex.chunk.end
    relations = [[(r.head.text.lower(), r.predicate, r.tail.text.lower()) for r in ex.relations]
                 for ex in out]
    # each relation in the chunk that holds both its entities; metformin and
    # hypertension never share a chunk, so that relation is not kept
    assert relations == [[("lisinopril", "treats", "hypertension")],
                         [("lisinopril", "has_adverse_effect", "cough")], []]
    assert any("aspirin" in reason for _stage, _item, reason in llm.ledger.failures())


def test_a_failed_pack_fails_each_of_its_chunks(tmp_path: Path) -> None:
    backend = Scripted(["no json", "still none"])
    llm = LLM(backend, Ledger(tmp_path / "llm.sqlite"), GenerationParams())
    out = list(llm_extract(_chunks(), llm, Normaliser(ConceptIndex([]), resolve_lexicon("none")),
                           pack_tokens=100))
    assert [bool(ex.failed) for ex in out] == [True, True, True]
    assert {item for _s, item, _r in llm.ledger.failures()} == {c.id for c in _chunks()}


def test_tag_summaries_of_a_pack_go_to_their_chunks(tmp_path: Path) -> None:
    answer = {"summaries": [{"medications_and_doses": ["lisinopril"]},
                            {"adverse_events": ["cough"]}, {}]}
    backend = Scripted([json.dumps(answer)])
    llm = LLM(backend, Ledger(tmp_path / "llm.sqlite"), GenerationParams())
    summaries = LLMSummariser(llm, pack_tokens=100).summarise(_chunks(), ChunkGraph())
    assert backend.calls == 1
    assert summaries[0].tags == {"medications_and_doses": ["lisinopril"]}
    assert summaries[1].tags == {"adverse_events": ["cough"]}
    assert summaries[2].tags == {}  # nothing written: the builtin summary stays


def test_a_summary_count_that_does_not_match_keeps_the_builtin_ones(tmp_path: Path) -> None:
    wrong = json.dumps({"summaries": [{"adverse_events": ["cough"]}]})  # 1 for 3 passages
    llm = LLM(Scripted([wrong, wrong]), Ledger(tmp_path / "llm.sqlite"), GenerationParams())
    summaries = LLMSummariser(llm, pack_tokens=100).summarise(_chunks(), ChunkGraph())
    assert all(not s.tags for s in summaries)  # builtin: no graph, so no tags
    assert len(llm.ledger.failures()) == 3
