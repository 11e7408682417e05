from collections.abc import Sequence
from pathlib import Path

import numpy as np

from medkg.linking.embeddings import RELEASE_EVERY, CachedEmbedder, Embedder


class CountingEmbedder:
    """Plumbing double for the cache test: deterministic vectors, counts calls."""

    name = "counting"
    dim = 4

    def __init__(self) -> None:
        self.calls: list[list[str]] = []

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        self.calls.append(list(texts))
        out = np.array([[len(t), t.count("a"), 1.0, 0.0] for t in texts], dtype=np.float32)
        return out / np.linalg.norm(out, axis=1, keepdims=True)


def test_cache_embeds_each_text_once(tmp_path: Path) -> None:
    inner = CountingEmbedder()
    cached = CachedEmbedder(inner, tmp_path / "cache.sqlite")
    first = cached.embed(["alpha", "beta", "alpha"])
    second = cached.embed(["beta", "gamma"])
    assert inner.calls == [["alpha", "beta"], ["gamma"]]
    np.testing.assert_allclose(first[1], second[0])
    assert (cached.hits, cached.misses) == (2, 3)
    cached.close()
    reopened = CachedEmbedder(inner, tmp_path / "cache.sqlite")
    reopened.embed(["alpha"])
    assert len(inner.calls) == 2  # served from disk


def test_many_texts_are_encoded_in_parts_and_come_back_in_order(tmp_path: Path) -> None:
    inner = CountingEmbedder()
    cached = CachedEmbedder(inner, tmp_path / "cache.sqlite")
    texts = ["a" * (i % 7) + f"text {i}" for i in range(2 * RELEASE_EVERY + 5)]
    vectors = cached.embed(texts)
    assert [len(c) for c in inner.calls] == [RELEASE_EVERY, RELEASE_EVERY, 5]
    np.testing.assert_allclose(vectors, inner.embed(texts))


def test_real_model_gives_unit_vectors_that_rank_meaning(embedder: Embedder) -> None:
    vectors = embedder.embed(["high blood pressure", "hypertension", "broken wrist"])
    assert vectors.shape == (3, embedder.dim)
    np.testing.assert_allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)
    assert vectors[0] @ vectors[1] > vectors[0] @ vectors[2]
