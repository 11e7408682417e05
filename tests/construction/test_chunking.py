from medkg.config import IngestConfig
from medkg.construction.chunking import chunk_document
from medkg.model import Document, Layer
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
