"""Chunking: semantic chunks (a break where the meaning of neighbouring
sentences moves most) with sentence windows for short documents and
over-long chunks.

Every chunk is a contiguous span of the document: ``chunk.text ==
document.text[chunk.start:chunk.end]``.

The semantic rule is LangChain's ``SemanticChunker`` with a percentile
threshold (Kamradt's method): each sentence together with its neighbours is
compared with the next such window, and the distances above the given
percentile are the breaks. LangChain encodes every three-sentence window as a
new text (three times the floor of encoding each sentence once); here each
sentence is encoded once and a window's vector is the normalised sum of its
sentences' vectors. The same sentence vectors give the chunk vectors when
``ingest.chunk_vectors`` is ``derived`` (the normalised mean of the chunk's
sentences); ``encoded`` encodes each chunk's text as well.
"""

from __future__ import annotations

from collections.abc import Sequence
from itertools import pairwise

import numpy as np

from medkg.config import IngestConfig
from medkg.linking.embeddings import Embedder, Matrix
from medkg.model import Chunk, Document
from medkg.text import sentence_spans


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


def _unit_rows(matrix: Matrix) -> Matrix:
    norms = np.linalg.norm(matrix, axis=1, keepdims=True)
    return np.asarray(matrix / np.where(norms == 0, 1, norms), dtype=np.float32)


def semantic_breaks(vectors: Matrix, percentile: float) -> list[int]:
    """Indices ``i`` after which a chunk ends: where the window of sentences
    ``i-1..i+1`` is farther than the ``percentile``-th distance from the window
    ``i..i+2`` (each window the normalised sum of its sentences' vectors)."""
    if len(vectors) < 2:
        return []
    windows = vectors.astype(np.float32).copy()
    windows[1:] += vectors[:-1]
    windows[:-1] += vectors[1:]
    windows = _unit_rows(windows)
    distances = 1.0 - np.sum(windows[:-1] * windows[1:], axis=1)
    threshold = float(np.percentile(distances, percentile))
    return [i for i, d in enumerate(distances) if d > threshold]


def _groups(sentences: list[tuple[int, int]], breaks: list[int]) -> list[tuple[int, int]]:
    out: list[tuple[int, int]] = []
    first = 0
    for i in [*breaks, len(sentences) - 1]:
        out.append((sentences[first][0], sentences[i][1]))
        first = i + 1
    return out


def chunk_and_embed(document: Document, embedder: Embedder, config: IngestConfig
                    ) -> tuple[list[Chunk], Matrix]:
    """Split a document into chunks that cover all its sentences, in order, and
    give each its vector; each sentence is encoded once at most."""
    return chunk_and_embed_many([document], embedder, config)[0]


def chunk_and_embed_many(documents: Sequence[Document], embedder: Embedder,
                         config: IngestConfig) -> list[tuple[list[Chunk], Matrix]]:
    """:func:`chunk_and_embed` for each document, the sentences of all of them
    encoded in one call and then their chunks in another (the same chunks, and
    vectors within 1e-4, as one at a time). Ingest and the workers chunk this way,
    32 documents a call; it did not make ingest measurably faster (987 mixed
    documents: 1,509 encoder calls became 71, chunk encoding 106 s against
    113 s): what costs is encoding each chunk's text after its sentences."""
    split = [_cap(d.text, sentence_spans(d.text), config.chunk_max_chars) for d in documents]
    semantic = [config.chunker == "semantic" and len(s) >= config.semantic_min_sentences
                for s in split]
    derived = config.chunk_vectors == "derived"
    encoded = _encode_parts(embedder, [
        [d.text[a:b] for a, b in sentences] if wanted or derived else []
        for d, sentences, wanted in zip(documents, split, semantic, strict=True)])
    spans = [_spans(d.text, sentences, config, vectors if wanted else None)
             for d, sentences, vectors, wanted in zip(documents, split, encoded, semantic,
                                                      strict=True)]
    chunked = [[Chunk.create(d, i, a, b) for i, (a, b) in enumerate(s)]
               for d, s in zip(documents, spans, strict=True)]
    if config.chunk_vectors == "encoded":
        vectors = _encode_parts(embedder, [[c.text for c in chunks] for chunks in chunked])
    else:
        vectors = [chunk_vectors(d.text, chunks, embedder, config, sentences, sv)
                   for d, chunks, sentences, sv in zip(documents, chunked, split, encoded,
                                                       strict=True)]
    return list(zip(chunked, vectors, strict=True))


def _encode_parts(embedder: Embedder, parts: list[list[str]]) -> list[Matrix]:
    """Every part's texts encoded in one call, handed back part by part."""
    flat = [t for part in parts for t in part]
    matrix = embedder.embed(flat)
    bounds = np.cumsum([0, *(len(p) for p in parts)])
    return [matrix[a:b] for a, b in pairwise(bounds)]


def _spans(text: str, sentences: list[tuple[int, int]], config: IngestConfig,
           vectors: Matrix | None) -> list[tuple[int, int]]:
    """A document's chunk spans: semantic groups of ``sentences`` when their
    ``vectors`` are given, else sentence windows; over-long ones split."""
    if vectors is not None:
        coarse = _groups(sentences, semantic_breaks(vectors, config.breakpoint_percentile))
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
    return spans


def chunk_vectors(text: str, chunks: list[Chunk], embedder: Embedder, config: IngestConfig,
                  sentences: list[tuple[int, int]] | None = None,
                  sentence_vectors: Matrix | None = None) -> Matrix:
    """The vectors of a document's chunks, as ``ingest.chunk_vectors`` says:
    each chunk's text encoded, or the normalised mean of its sentences' vectors
    (``sentences``/``sentence_vectors`` when the caller has them already)."""
    if config.chunk_vectors == "encoded" or not chunks:
        return embedder.embed([c.text for c in chunks])
    if sentences is None or sentence_vectors is None:
        sentences = _cap(text, sentence_spans(text), config.chunk_max_chars)
        sentence_vectors = embedder.embed([text[s:e] for s, e in sentences])
    rows = []
    for chunk in chunks:
        members = [i for i, (s, e) in enumerate(sentences) if s < chunk.end and e > chunk.start]
        rows.append(sentence_vectors[members].sum(axis=0) if members
                    else embedder.embed([chunk.text])[0])
    return _unit_rows(np.stack(rows))


def chunk_document(document: Document, embedder: Embedder, config: IngestConfig) -> list[Chunk]:
    """Split a document into chunks that cover all its sentences, in order."""
    return chunk_and_embed(document, embedder, config)[0]
