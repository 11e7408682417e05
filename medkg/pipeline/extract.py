"""Extract: entities and triples from every ingested document not yet
extracted, by the extraction engine; the RuleHub keeps out triples that break
a hard rule; the SAC-KG corpus gets each document's sentences and candidates."""

from __future__ import annotations

from collections.abc import Iterator
from itertools import islice
from typing import TYPE_CHECKING

from medkg import memory, timing
from medkg.engines import extractor
from medkg.model import Chunk, Entity, Layer, Triple
from medkg.pipeline.context import BuildContext
from medkg.pipeline.marks import (
    STAGE_EXTRACTED,
    STAGE_INGESTED,
    documents_done,
    documents_to_extract,
    extraction_marks,
)

if TYPE_CHECKING:
    from medkg.components import Components
    from medkg.extraction.extract import ChunkExtraction
    from medkg.rulehub.verify import Violation


BATCH_DOCUMENTS = 8  # documents per task sent to a worker, or per LLM extraction group
RELEASE_EVERY = 25  # documents between giving freed memory back (medkg.memory)


def run(ctx: BuildContext) -> None:
    from medkg.extraction.extract import assemble
    from medkg.pipeline.reextract import clear_extraction, current_mark

    parts, report = ctx.parts, ctx.report
    mark = current_mark(parts)
    # New documents, and those extracted with other inputs (settings, models, a
    # vocabulary load that touched them) or, with --reextract, every document.
    todo = (list(documents_done(parts.store, STAGE_INGESTED)) if ctx.reextract
            else documents_to_extract(parts.store, mark))
    cfg = parts.settings
    results = _extracted(ctx, todo)
    for i in range(len(todo) + 1):
        ctx.progress("extract", i, len(todo))
        with timing.stage("extract"):
            item = next(results, None)
        if item is None:
            break
        layer, doc_id, extraction = item
        if i % RELEASE_EVERY == RELEASE_EVERY - 1:
            memory.release()  # what the documents before freed, back to the system
        if extraction_marks(parts.store.stages(doc_id)):  # an earlier extraction's output
            with timing.stage("store"):
                clear_extraction(parts, doc_id)
            report.reextracted += 1
        with timing.stage("assemble"):
            entities, triples = assemble(layer, extraction, ctx.concepts,
                                         cfg.extraction.context_chars)
        with timing.stage("corpus"):
            record_sentences(parts, doc_id, layer, extraction, entities, triples)
        if cfg.construction.levels:
            triples = []  # the SAC-KG loop decides which of them enter the graph
        elif cfg.extraction.verify:
            with timing.stage("verify"):
                triples, rejected = verify(parts, entities, triples)
            report.rejected += rejected
        with timing.stage("store"):
            parts.store.add_entities(entities)
            parts.store.add_triples(triples)
        if any(ex.failed for ex in extraction):
            report.unfinished += 1  # what it gave is stored; the failed chunks are asked again
            continue
        with timing.stage("store"):
            parts.store.mark_stage(doc_id, STAGE_EXTRACTED)
            parts.store.mark_stage(doc_id, str(mark))
        report.documents += 1


def _extracted(ctx: BuildContext, todo: list[tuple[Layer, str]]
               ) -> Iterator[tuple[Layer, str, list[ChunkExtraction]]]:
    """Each document's extraction, in order: in this process, or (the builtin
    engine, ``extraction.executor``) by worker processes or a Dask cluster."""
    from medkg.pipeline.executors import open_executor, parse_executor

    parts, cfg = ctx.parts, ctx.parts.settings.extraction
    spec = parse_executor(cfg.executor, len(todo), cfg.parallel_min_documents)
    if spec.kind == "local" or cfg.engine != "builtin" or len(ctx.concepts) == 0:
        engine = extractor(parts, ctx.concepts)
        for group in document_groups(todo, cfg.engine):
            with timing.stage("store"):
                chunks = {doc_id: parts.store.chunks(doc_id) for _layer, doc_id in group}
            extracted = iter(engine.extract([c for doc in chunks.values() for c in doc]))
            for layer, doc_id in group:  # each document as soon as its chunks are done
                yield layer, doc_id, list(islice(extracted, len(chunks[doc_id])))
        return
    from medkg.extraction.workers import EngineRecipe, extract_documents
    from medkg.fingerprints import VOCABULARY

    version = parts.fingerprints.version(VOCABULARY) or ""
    parts.concept_index()  # saved under this version, for the workers to read
    recipe = EngineRecipe(str(parts.layout.concept_terms), version, cfg)
    executor = open_executor(spec)
    if spec.kind == "dask":
        recipe = recipe.shipped()  # its workers may not share this disk
    layer_of = dict((doc_id, layer) for layer, doc_id in todo)

    def batches() -> Iterator[list[tuple[str, list[Chunk]]]]:
        for start in range(0, len(todo), BATCH_DOCUMENTS):
            with timing.stage("store"):
                batch = [(doc_id, parts.store.chunks(doc_id))
                         for _layer, doc_id in todo[start : start + BATCH_DOCUMENTS]]
            yield batch

    try:
        for batch in executor.map(extract_documents, recipe, batches()):
            for doc_id, extraction in batch:
                yield layer_of[doc_id], doc_id, extraction
    finally:
        executor.close()


def document_groups(todo: list[tuple[Layer, str]], engine: str
                    ) -> Iterator[list[tuple[Layer, str]]]:
    """The documents extracted together: one by one for the builtin engine, up to
    ``BATCH_DOCUMENTS`` for the LLM engine, whose calls take several chunks, so that
    short documents share calls (``build --dry-run`` counts the same groups)."""
    size = BATCH_DOCUMENTS if engine == "llm" else 1
    for start in range(0, len(todo), size):
        yield todo[start : start + size]


def record_sentences(parts: Components, doc_id: str, layer: Layer,
                     extraction: list[ChunkExtraction], entities: list[Entity],
                     triples: list[Triple]) -> None:
    """The SAC-KG corpus gets the document's sentences that mention an entity,
    its entities and its candidate triples."""
    sentences = sorted({(ex.chunk.id, *m.sentence) for ex in extraction
                        for m in ex.mentions})
    by_chunk = {ex.chunk.id: ex.chunk for ex in extraction}
    parts.corpus.replace_document(
        doc_id, layer, [(c, s, e, by_chunk[c].text[s - by_chunk[c].start:
                                                  e - by_chunk[c].start])
                        for c, s, e in sentences], entities, triples)


def verify(parts: Components, entities: list[Entity], triples: list[Triple]
           ) -> tuple[list[Triple], int]:
    """Keep the triples no hard rule of the RuleHub rejects; restate those whose
    only fault is evidence that states another predicate (E001: "used to manage
    oliguria" read as an adverse effect), the treated population's condition (E003:
    restated as associated_with) or a negation (E004: "without apnea");
    record each rejected or restated one with the rules and their reasons in the
    RuleHub's log (``medkg rules log``)."""
    from medkg.rulehub.evidence import corrected
    from medkg.rulehub.verify import Verifier

    by_id = {e.id: e for e in entities}
    violations = Verifier(min_triples=0).check(triples, by_id)
    hard: dict[str, list[Violation]] = {}
    for v in violations:
        if v.hard and v.triple_id is not None:
            hard.setdefault(v.triple_id, []).append(v)
    kept = {t.id: t for t in triples if t.id not in hard}
    rejected = 0
    for t in triples:
        found = hard.get(t.id)
        if not found:
            continue
        reasons = "; ".join(f"{v.rule} {v.message}" + (f" ({v.detail})" if v.detail else "")
                            for v in found)
        fixed = corrected(t, {v.rule: v.detail for v in found})
        if fixed is not None and not any(
                v.hard for v in Verifier(min_triples=0).check([fixed], by_id)):
            parts.rule_log.record(t.id, "restated",
                                  f"as {fixed.method.rsplit('+', 1)[-1]}: {reasons}")
            if fixed.id in kept:
                known = kept[fixed.id]
                known.evidence += [e for e in fixed.evidence if e not in known.evidence]
            else:
                kept[fixed.id] = fixed
            continue
        parts.rule_log.record(t.id, "rejected", reasons)
        rejected += 1
    return list(kept.values()), rejected
