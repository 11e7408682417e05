from medkg.config import IngestConfig
from medkg.model import Document, Layer
from medkg.reading.chunking import chunk_document
from medkg.text import sentence_spans
from tests.conftest import EXAMPLES


def doc_of(text: str) -> Document:
    return Document.create(layer=Layer.LITERATURE, title="t", source="s",
                           media_type="text/plain", text=text)


def assert_well_formed(doc: Document, chunks: list, max_chars: int) -> None:
    assert chunks, "a non-empty document gives at least one chunk"
    for i, c in enumerate(chunks):
        assert c.index == i
        assert c.text == doc.text[c.start : c.end]
        assert c.text == c.text.strip()
        assert len(c.text) <= max_chars
    starts = [c.start for c in chunks]
    assert starts == sorted(starts)
    # Every sentence lies inside a chunk: nothing is lost.
    covered = [(c.start, c.end) for c in chunks]
    for s, e in sentence_spans(doc.text):
        assert any(cs <= s and e <= ce for cs, ce in covered) or any(
            cs < e and s < ce for cs, ce in covered
        )


def test_short_documents_use_sentence_windows(embedder: object) -> None:
    doc = doc_of("Fever. Cough.")
    chunks = chunk_document(doc, embedder, IngestConfig())  # type: ignore[arg-type]
    assert [c.text for c in chunks] == ["Fever. Cough."]


def test_semantic_chunks_keep_offsets(embedder: object) -> None:
    text = (EXAMPLES / "literature" / "01-type2-diabetes.md").read_text()
    text += "\n\n" + (EXAMPLES / "literature" / "05-asthma.md").read_text()
    doc = doc_of(text)
    config = IngestConfig()
    chunks = chunk_document(doc, embedder, config)  # type: ignore[arg-type]
    assert len(chunks) >= 2
    assert_well_formed(doc, chunks, config.chunk_max_chars)


def test_run_on_text_is_cut_to_the_maximum(embedder: object) -> None:
    doc = doc_of("word " * 2000)
    config = IngestConfig(chunker="sentences", chunk_max_chars=300)
    chunks = chunk_document(doc, embedder, config)  # type: ignore[arg-type]
    assert len(chunks) > 10
    assert_well_formed(doc, chunks, 300)


def test_sentence_chunker_groups_sentences(embedder: object) -> None:
    doc = doc_of(" ".join(f"Sentence number {i}." for i in range(10)))
    config = IngestConfig(chunker="sentences", window_sentences=3)
    chunks = chunk_document(doc, embedder, config)  # type: ignore[arg-type]
    assert len(chunks) == 4
    assert_well_formed(doc, chunks, config.chunk_max_chars)


class CountingEmbedder:
    """The real model, counting the texts it is asked to encode."""

    def __init__(self, inner: object) -> None:
        self.inner = inner
        self.texts: list[str] = []
        self.calls = 0

    @property
    def name(self) -> str:
        return self.inner.name  # type: ignore[attr-defined,no-any-return]

    @property
    def dim(self) -> int:
        return self.inner.dim  # type: ignore[attr-defined,no-any-return]

    def embed(self, texts: list[str]) -> object:
        self.texts.extend(texts)
        self.calls += 1
        return self.inner.embed(texts)  # type: ignore[attr-defined]


def test_semantic_breaks_fall_where_the_topic_changes() -> None:
    import numpy as np

    from medkg.reading.chunking import semantic_breaks

    a, b = np.eye(4, dtype=np.float32)[0], np.eye(4, dtype=np.float32)[1]
    vectors = np.stack([a, a, a, a, b, b, b, b])
    assert semantic_breaks(vectors, 80.0) == [3]
    assert semantic_breaks(vectors[:1], 80.0) == []


def test_each_sentence_is_encoded_once_and_derived_chunk_vectors_are_their_mean(
        embedder: object) -> None:
    import numpy as np

    from medkg.reading.chunking import chunk_and_embed

    text = (EXAMPLES / "literature" / "01-type2-diabetes.md").read_text()
    doc = doc_of(text)
    counting = CountingEmbedder(embedder)
    config = IngestConfig(chunk_vectors="derived")
    chunks, vectors = chunk_and_embed(doc, counting, config)  # type: ignore[arg-type]
    sentences = [text[s:e] for s, e in sentence_spans(text)]
    assert counting.texts == sentences  # the sentences, once each, and nothing else
    assert vectors.shape == (len(chunks), counting.dim)
    assert np.allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)
    first = [s for s in sentences if s in chunks[0].text]
    mean = counting.inner.embed(first).sum(axis=0)  # type: ignore[attr-defined]
    assert np.allclose(vectors[0], mean / np.linalg.norm(mean), atol=1e-5)
    counting.texts.clear()
    encoded, _ = chunk_and_embed(doc, counting, IngestConfig())  # type: ignore[arg-type]
    assert [c.text for c in encoded] == [c.text for c in chunks]
    assert counting.texts == sentences + [c.text for c in chunks]


def test_documents_chunked_together_are_chunked_as_one_at_a_time(embedder: object) -> None:
    import numpy as np

    from medkg.reading.chunking import chunk_and_embed, chunk_and_embed_many

    docs = [doc_of((EXAMPLES / "literature" / name).read_text())
            for name in ("01-type2-diabetes.md", "02-hypertension.md")]
    docs += [doc_of("Fever. Rest."), doc_of("Aspirin thins the blood.")]
    for config in (IngestConfig(), IngestConfig(chunk_vectors="derived")):
        counting = CountingEmbedder(embedder)
        together = chunk_and_embed_many(docs, counting, config)  # type: ignore[arg-type]
        # one call for every document's sentences, one for their chunks (encoded)
        assert counting.calls == (2 if config.chunk_vectors == "encoded" else 1)
        for doc, (chunks, vectors) in zip(docs, together, strict=True):
            alone, alone_vectors = chunk_and_embed(doc, embedder, config)  # type: ignore[arg-type]
            assert [(c.id, c.start, c.end) for c in chunks] == [
                (c.id, c.start, c.end) for c in alone]
            assert vectors.shape == alone_vectors.shape
            assert np.allclose(vectors, alone_vectors, atol=1e-4)
    assert chunk_and_embed_many([], embedder, IngestConfig()) == []  # type: ignore[arg-type]
