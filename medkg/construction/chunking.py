"""Chunking: semantic chunks (langchain-experimental SemanticChunker over our
embedder) with sentence windows for short documents and over-long chunks.

Every chunk is a contiguous span of the document: ``chunk.text ==
document.text[chunk.start:chunk.end]``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from medkg.config import IngestConfig
from medkg.linking.embeddings import Embedder
from medkg.model import Chunk, Document
from medkg.text import SENTENCE_BREAK, sentence_spans, split_pieces

if TYPE_CHECKING:
    from langchain_core.embeddings import Embeddings


def _langchain_embeddings(embedder: Embedder) -> Embeddings:
    from langchain_core.embeddings import Embeddings

    class _Adapter(Embeddings):
        def embed_documents(self, texts: list[str]) -> list[list[float]]:
            return [list(map(float, v)) for v in embedder.embed(texts)]

        def embed_query(self, text: str) -> list[float]:
            return list(map(float, embedder.embed([text])[0]))

    return _Adapter()


def _windows(
    spans: list[tuple[int, int]], size: int, max_chars: int
) -> list[tuple[int, int]]:
    """Group consecutive sentence spans, ``size`` at a time, never over ``max_chars``."""
    out: list[tuple[int, int]] = []
    group: list[tuple[int, int]] = []
    for span in spans:
        if group and (len(group) == size or span[1] - group[0][0] > max_chars):
            out.append((group[0][0], group[-1][1]))
            group = []
        group.append(span)
    if group:
        out.append((group[0][0], group[-1][1]))
    return out


def _cap(text: str, spans: list[tuple[int, int]], max_chars: int) -> list[tuple[int, int]]:
    """Cut any span longer than ``max_chars`` at whitespace (a run-on "sentence")."""
    out: list[tuple[int, int]] = []
    for start, end in spans:
        while end - start > max_chars:
            cut = text.rfind(" ", start + 1, start + max_chars)
            cut = cut if cut > start else start + max_chars
            out.append((start, cut))
            start = cut
            while start < end and text[start].isspace():
                start += 1
        if end > start:
            out.append((start, end))
    return out


def _semantic_spans(
    text: str, embedder: Embedder, config: IngestConfig
) -> list[tuple[int, int]]:
    from langchain_experimental.text_splitter import SemanticChunker

    splitter = SemanticChunker(
        _langchain_embeddings(embedder),
        breakpoint_threshold_type="percentile",
        breakpoint_threshold_amount=config.breakpoint_percentile,
        sentence_split_regex=SENTENCE_BREAK,
    )
    pieces = split_pieces(text)
    spans: list[tuple[int, int]] = []
    cursor = 0
    for chunk_text in splitter.split_text(text):
        # The chunker joins our pieces with single spaces: consume pieces until equal.
        first = cursor
        joined = text[pieces[cursor][0] : pieces[cursor][1]]
        cursor += 1
        while joined != chunk_text and cursor < len(pieces):
            joined += " " + text[pieces[cursor][0] : pieces[cursor][1]]
            cursor += 1
        if joined != chunk_text:
            raise RuntimeError("semantic chunk does not align with the document's sentences")
        spans.append((pieces[first][0], pieces[cursor - 1][1]))
    return spans


def chunk_document(document: Document, embedder: Embedder, config: IngestConfig) -> list[Chunk]:
    """Split a document into chunks that cover all its sentences, in order."""
    text = document.text
    sentences = _cap(text, sentence_spans(text), config.chunk_max_chars)
    if config.chunker == "semantic" and len(sentences) >= config.semantic_min_sentences:
        coarse = _semantic_spans(text, embedder, config)
    else:
        coarse = _windows(sentences, config.window_sentences, config.chunk_max_chars)
    spans: list[tuple[int, int]] = []
    for start, end in coarse:
        inner = _cap(text, sentence_spans(text, start, end), config.chunk_max_chars)
        if not inner:
            continue
        if inner[-1][1] - inner[0][0] > config.chunk_max_chars:
            spans.extend(_windows(inner, len(inner), config.chunk_max_chars))
        else:
            spans.append((inner[0][0], inner[-1][1]))
    return [Chunk.create(document, i, s, e) for i, (s, e) in enumerate(spans)]
