"""Ask: the question's retrieval by mode (U-Retrieval, local graph search or
plain chunk vectors), then the answer engine."""

from __future__ import annotations

from typing import TYPE_CHECKING

from medkg.config import RETRIEVAL_MODES, RetrievalMode
from medkg.engines import answerer, traversal_guide
from medkg.errors import WorkspaceError

if TYPE_CHECKING:
    from medkg.components import Components
    from medkg.model import Chunk
    from medkg.retrieval.answer import Answer
    from medkg.retrieval.evidence import Retrieval
    from medkg.retrieval.local import LocalRetriever


def retriever(parts: Components) -> LocalRetriever:
    """The workspace's retriever: one per open workspace, with its caches, for as
    long as neither the graph nor a derived file changes (their stamp); a store
    that keeps no revision gets a new one each time."""
    from medkg.pipeline.reconcile import reconcile, stamp
    from medkg.retrieval.candidates import Indexes
    from medkg.retrieval.local import LocalRetriever

    reconcile(parts)
    key = stamp(parts)
    if key is not None and parts.retriever_cache is not None \
            and parts.retriever_cache[0] == key:
        return parts.retriever_cache[1]
    made = LocalRetriever(
        parts.store, parts.embedder,
        Indexes(chunks=parts.index("chunks"), entities=parts.index("entities"),
                lexical=parts.lexical),
        parts.nlp(), parts.settings.retrieval, traversal_guide(parts),
        parts.concept_index(), parts.settings.facts,
    )
    parts.retriever_cache = (key, made) if key is not None else None
    return made


def check_mode(mode: str) -> RetrievalMode:
    for known in RETRIEVAL_MODES:
        if mode == known:
            return known
    raise WorkspaceError(f"unknown retrieval mode {mode!r}",
                         hint=f"use {', '.join(RETRIEVAL_MODES)}")


def ask(parts: Components, question: str, mode: str | None = None,
        using: LocalRetriever | None = None, show_proposed: bool | None = None) -> Answer:
    """Answer with numbered citations and definitions, by ``mode`` (default: the
    ``retrieval.mode`` setting; U-Retrieval falls back to local search in a
    workspace whose tag tree has not been built). The statements below
    ``facts.min_precision`` are listed (as proposed, never as facts) only with
    ``show_proposed`` (default: the ``facts.show_proposed`` setting)."""
    return answerer(parts).answer(compose(parts, question, mode, using, show_proposed))


def retrieve(parts: Components, question: str, mode: str | None = None, top: int = 8,
             using: LocalRetriever | None = None, show_proposed: bool | None = None
             ) -> Retrieval:
    """The evidence behind :func:`ask`'s answer without the answer engine: the
    ``top`` best passages of the ranking (and every other passage the answer
    would cite), the facts with their review state, the conditions, the
    definitions and a context block citing them (:mod:`medkg.retrieval.evidence`)."""
    from medkg.errors import RetrievalError
    from medkg.retrieval.evidence import assemble

    if not 1 <= top <= 100:
        raise RetrievalError(f"top must be between 1 and 100, not {top}")
    local = using or retriever(parts)
    answer = compose(parts, question, mode, local, show_proposed)
    ranked = answer.trace.candidates or []
    ids = list(dict.fromkeys([*(c.chunk_id for c in ranked[:top]),
                              *(answer.trace.ranking or answer.trace.retrieved_chunks)[:top],
                              *(c.chunk_id for c in answer.citations)]))
    chunks = _chunks(parts, ids)
    documents = {d: parts.store.document(d) for d in {c.document_id for c in chunks.values()}}
    asked = set(answer.trace.question_concepts)
    return assemble(answer, top, chunks, documents,
                    lambda chunk_id, start, end: local.flags(chunk_id, start, end, asked))


def _chunks(parts: Components, ids: list[str]) -> dict[str, Chunk]:
    """These chunks in one batched read where the store has one (the tables)."""
    from medkg.errors import NotFoundError

    batch = getattr(parts.store, "chunks_by_id", None)
    if batch is not None:
        found: dict[str, Chunk] = batch(ids)
        return found
    out = {}
    for chunk_id in ids:
        try:
            out[chunk_id] = parts.store.chunk(chunk_id)
        except NotFoundError:  # deleted since it was ranked
            continue
    return out


def compose(parts: Components, question: str, mode: str | None = None,
            using: LocalRetriever | None = None, show_proposed: bool | None = None) -> Answer:
    """:func:`ask` up to the answer engine: the retrieval by mode and the answer
    composed from it (extractive sentences, facts, conditions, definitions)."""
    from medkg.retrieval.intent import check_question

    # Checked (and normalised: medkg.text.clean_text) before the retriever loads
    # its models; every step below sees the checked question.
    question = check_question(question, parts.settings.retrieval.max_question_chars)
    chosen = check_mode(mode or parts.settings.retrieval.mode)
    choice = None
    if chosen == "auto":
        from medkg.retrieval.globalsearch import choose_mode

        choice = choose_mode(question, parts.nlp())
        chosen = check_mode(choice.mode)
    if chosen == "global":
        from medkg.retrieval.globalsearch import global_answer

        tree = parts.tree()
        if tree is None:
            raise WorkspaceError("a global question needs the tag tree",
                                 hint="run `medkg build` first")
        answer = global_answer(question.strip(), parts.store, tree, parts.embedder,
                               parts.settings.retrieval)
    else:
        answer = _retrieve(parts, question, chosen, using)
    if choice is not None:
        note = answer.trace.note
        answer.trace.note = f"auto chose {choice.reason}" + (f"; {note}" if note else "")
        answer.trace.keywords = choice.keywords.as_dict()
    if not (parts.settings.facts.show_proposed if show_proposed is None else show_proposed):
        answer.proposed = []
    return answer


def _retrieve(parts: Components, question: str, chosen: RetrievalMode,
              using: LocalRetriever | None) -> Answer:
    from medkg.retrieval.uretrieval import u_retrieve

    local = using or retriever(parts)
    tree = parts.tree() if chosen == "u-retrieval" else None
    if tree is not None:
        return u_retrieve(question, local, tree, parts.embedder, parts.settings.retrieval)
    answer = local.ask(question, mode="hybrid" if chosen == "u-retrieval" else chosen)
    if chosen == "u-retrieval":
        answer.trace.note = "no tag tree yet (run `medkg build`): hybrid search"
    return answer
