"""Builtin or LLM, chosen once per stage from the settings.

Five stages have an engine, each with its own setting: extraction
(``extraction.engine``), the SAC-KG generator (``construction.generator``),
tag summaries (``retrieval.summary_engine``), answers
(``retrieval.answer_engine``) and the traverse mode's guide
(``retrieval.traverse_guide``). Each has a typed interface with a builtin and
an LLM implementation; the functions at the bottom are the only place that
reads those settings, so a stage never asks which engine it has.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Protocol

from medkg.config import Settings
from medkg.model import Chunk, Entity, Triple

if TYPE_CHECKING:
    from spacy.language import Language

    from medkg.components import Components
    from medkg.extraction.extract import ChunkExtraction, Relate
    from medkg.extraction.nlp import Normaliser
    from medkg.growth.corpus import SentenceCorpus
    from medkg.growth.generator import Generator
    from medkg.llm.client import LLM
    from medkg.llm.ledger import Ledger
    from medkg.ontology.index import ConceptIndex
    from medkg.retrieval.answer import Answer
    from medkg.retrieval.traverse import Guide
    from medkg.rulehub.rules import RuleSet
    from medkg.tagtree.tags import TagSummary


class Extractor(Protocol):
    """Chunks -> mentions and relations, the same :class:`ChunkExtraction` for
    every engine, so assembly, linking and storage do not know which ran."""

    name: str

    def extract(self, chunks: list[Chunk]) -> Iterable[ChunkExtraction]: ...


@dataclass
class ChunkGraph:
    """The meta-graph of some chunks: the entities mentioned in each (with only
    those mentions) and the triples each is evidence for."""

    entities: dict[str, list[Entity]] = field(default_factory=dict)
    triples: dict[str, list[Triple]] = field(default_factory=dict)


class Summariser(Protocol):
    """Chunks -> one tag summary each (symptoms, diagnoses, medications, ...)."""

    name: str

    def summarise(self, chunks: Sequence[Chunk], graph: ChunkGraph) -> list[TagSummary]: ...


class Answerer(Protocol):
    """The extractive, cited draft -> the answer the user gets."""

    name: str

    def answer(self, draft: Answer) -> Answer: ...


# -- implementations ------------------------------------------------------------------


class BuiltinExtractor:
    name = "builtin"

    def __init__(self, nlp: Language, relate: Relate | None) -> None:
        self.nlp = nlp
        self.relate = relate

    def extract(self, chunks: list[Chunk]) -> Iterable[ChunkExtraction]:
        from medkg.extraction.extract import extract

        return extract(chunks, self.nlp, relate=self.relate)


class LLMExtractor:
    name = "llm"

    def __init__(self, llm: LLM, normaliser: Normaliser, pack_tokens: int = 0,
                 profile: str = "single") -> None:
        self.llm = llm
        self.normaliser = normaliser
        self.pack_tokens = pack_tokens
        self.profile = profile

    def extract(self, chunks: list[Chunk]) -> Iterable[ChunkExtraction]:
        from medkg.extraction.llm import llm_extract

        return llm_extract(chunks, self.llm, self.normaliser, self.pack_tokens, self.profile)


class LangChainExtractor:
    """LangChain's LLMGraphTransformer over the user's chat model
    (:mod:`medkg.extraction.langchain`)."""

    name = "langchain"

    def __init__(self, chat_model: object, normaliser: Normaliser, ledger: Ledger,
                 tool_calling: bool = True) -> None:
        from medkg.extraction.langchain import transformer

        self.graph = transformer(chat_model, tool_calling)
        self.normaliser = normaliser
        self.ledger = ledger

    def extract(self, chunks: list[Chunk]) -> Iterable[ChunkExtraction]:
        from medkg.extraction.langchain import langchain_extract

        return langchain_extract(chunks, self.graph, self.normaliser, self.ledger)


class BuiltinSummariser:
    """Each chunk's tags from its meta-graph: the entities it mentions, by semantic
    group and ConText, and the triples it supports."""

    name = "builtin"

    def summarise(self, chunks: Sequence[Chunk], graph: ChunkGraph) -> list[TagSummary]:
        from medkg.tagtree.tags import summarise_chunk

        return [summarise_chunk(c.text, c.start, graph.entities.get(c.id, []),
                                graph.triples.get(c.id, [])) for c in chunks]


class LLMSummariser:
    """Each chunk's tags written by the chat model (the ``tag_summary`` prompt, over
    numbered passages: consecutive chunks share a call up to ``pack_tokens``); an
    answer that stays unusable is recorded and the builtin summaries kept."""

    name = "llm"

    def __init__(self, llm: LLM, pack_tokens: int = 0) -> None:
        self.llm = llm
        self.pack_tokens = pack_tokens

    def summarise(self, chunks: Sequence[Chunk], graph: ChunkGraph) -> list[TagSummary]:
        from medkg.errors import LLMOutputError
        from medkg.llm.packing import MAX_CHUNKS, numbered, pack
        from medkg.llm.prompts import load_prompt
        from medkg.llm.schemas import tag_summaries
        from medkg.tagtree.tags import TagSummary

        out = BuiltinSummariser().summarise(chunks, graph)
        position = {c.id: i for i, c in enumerate(chunks)}
        prompt = load_prompt("tag_summary")
        for group in pack(chunks, self.llm.backend.count_tokens, self.pack_tokens,
                          MAX_CHUNKS):
            try:
                answer = self.llm.structured("tag_summary", prompt.render(text=numbered(group)),
                                             tag_summaries(len(group)))
            except LLMOutputError as exc:
                for c in group:
                    self.llm.ledger.fail("tag_summary", c.id, str(exc))
                continue
            for c, summary in zip(group, answer.summaries, strict=True):
                written = TagSummary(tags={k: v for k, v in summary.model_dump().items() if v})
                if written:
                    out[position[c.id]] = written
        return out


class ExtractiveAnswerer:
    """The draft as it is: sentences quoted from the sources, each cited."""

    name = "builtin"

    def answer(self, draft: Answer) -> Answer:
        return draft


class LLMAnswerer:
    """The draft rewritten by the chat model from the same cited sources (the
    extractive one is kept, with the reason, when the rewrite fails its checks)."""

    name = "llm"

    def __init__(self, llm: LLM) -> None:
        self.llm = llm

    def answer(self, draft: Answer) -> Answer:
        from medkg.retrieval.generate import generate_answer

        return generate_answer(draft, self.llm)


# -- the one place engines are chosen ---------------------------------------------------


def use_llm(settings: Settings) -> None:
    """Every stage with an engine uses the chat model (``--llm BACKEND:MODEL``)."""
    settings.extraction.engine = "llm"
    settings.construction.generator = "llm"
    settings.retrieval.summary_engine = "llm"
    settings.retrieval.answer_engine = "llm"
    settings.retrieval.traverse_guide = "llm"


def build_uses_llm(settings: Settings) -> bool:
    """Whether ``build`` would call the chat model (extraction, summaries or, with
    ``--levels``, the generator)."""
    return (settings.extraction.engine == "llm" or settings.retrieval.summary_engine == "llm"
            or (settings.construction.levels > 0 and settings.construction.generator == "llm"))


def extractor(parts: Components, concepts: ConceptIndex) -> Extractor:
    if parts.settings.extraction.engine == "langchain":
        from medkg.errors import ConfigError
        from medkg.extraction.lexicon import resolve_lexicon
        from medkg.extraction.nlp import Normaliser

        if parts.chat_model is None:
            raise ConfigError(
                "extraction.engine = 'langchain' needs a LangChain chat model",
                hint="in Python: medkg.integrations.langchain.use_chat_model(workspace, model)")
        normaliser = Normaliser(concepts, resolve_lexicon(parts.settings.extraction.lexicon))
        return LangChainExtractor(parts.chat_model, normaliser, parts.ledger,
                                  parts.chat_model_tool_calling)
    if parts.settings.extraction.engine == "llm":
        from medkg.extraction.lexicon import resolve_lexicon
        from medkg.extraction.nlp import Normaliser

        normaliser = Normaliser(concepts, resolve_lexicon(parts.settings.extraction.lexicon))
        return LLMExtractor(parts.llm(), normaliser, parts.settings.llm.pack_tokens,
                            parts.settings.extraction.llm_profile)
    return BuiltinExtractor(parts.nlp(concepts), parts.relation_model(concepts))


def summariser(parts: Components) -> Summariser:
    if parts.settings.retrieval.summary_engine == "llm":
        return LLMSummariser(parts.llm(), parts.settings.llm.pack_tokens)
    return BuiltinSummariser()


def answerer(parts: Components) -> Answerer:
    if parts.settings.retrieval.answer_engine == "llm":
        return LLMAnswerer(parts.llm())
    return ExtractiveAnswerer()


def traversal_guide(parts: Components) -> Guide:
    """Who prunes the traverse mode's triples and picks its clue entities."""
    from medkg.retrieval.guide import BuiltinGuide

    builtin = BuiltinGuide(parts.embedder)
    if parts.settings.retrieval.traverse_guide == "llm":
        from medkg.retrieval.traverse_llm import LLMGuide

        return LLMGuide(parts.llm(), builtin)
    return builtin


def generator(parts: Components, corpus: SentenceCorpus, entities: Mapping[str, Entity],
              rules: RuleSet) -> Generator:
    from medkg.growth.generator import BuiltinGenerator, LLMGenerator

    if parts.settings.construction.generator == "llm":
        return LLMGenerator(parts.llm(), corpus, entities)
    return BuiltinGenerator(corpus, entities, rules)
