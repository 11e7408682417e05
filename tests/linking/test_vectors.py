from pathlib import Path

import numpy as np
import pytest

from medkg.errors import StoreError
from medkg.linking.vectors import VectorIndex


def unit(*xs: float) -> np.ndarray:
    v = np.array(xs, dtype=np.float32)
    return v / np.linalg.norm(v)


def test_search_upsert_delete_and_persist(tmp_path: Path) -> None:
    path = tmp_path / "v.npz"
    index = VectorIndex(2, path)
    index.upsert(["a", "b", "c"], np.stack([unit(1, 0), unit(0, 1), unit(1, 1)]))
    assert [k for k, _ in index.search(unit(1, 0.1), 2)] == ["a", "c"]
    index.upsert(["a"], np.stack([unit(0, 1)]))  # replace, not duplicate
    assert len(index) == 3
    index.delete(["b", "missing"])
    assert len(index) == 2 and "b" not in index
    assert [k for k, _ in index.search(unit(1, 0), 5, allowed={"a"})] == ["a"]
    index.save()
    again = VectorIndex(2, path)
    assert len(again) == 2
    np.testing.assert_allclose(again.vector("a"), unit(0, 1))


def test_empty_index_returns_nothing() -> None:
    assert VectorIndex(3).search(unit(1, 0, 0), 5) == []


def test_dimension_change_is_a_clear_error(tmp_path: Path) -> None:
    path = tmp_path / "v.npz"
    index = VectorIndex(2, path)
    index.upsert(["a"], np.stack([unit(1, 0)]))
    index.save()
    with pytest.raises(StoreError, match="embedding model changed"):
        VectorIndex(3, path)


def test_corrupt_file_is_a_clear_error(tmp_path: Path) -> None:
    path = tmp_path / "v.npz"
    path.write_bytes(b"garbage")
    with pytest.raises(StoreError, match="unreadable"):
        VectorIndex(2, path)


def _unit_rows(n: int, dim: int, seed: int) -> np.ndarray:
    rows = np.random.default_rng(seed).normal(size=(n, dim)).astype(np.float32)
    return rows / np.linalg.norm(rows, axis=1, keepdims=True)


def test_hnsw_above_the_threshold_agrees_with_exact_search(tmp_path: Path) -> None:
    vectors = _unit_rows(600, 32, 1)
    ids = [f"e{i}" for i in range(600)]
    ann = VectorIndex(32, tmp_path / "v.npz", ann_threshold=100)
    exact = VectorIndex(32, ann_threshold=10_000)
    ann.upsert(ids, vectors)
    exact.upsert(ids, vectors)
    assert ann.uses_ann and not exact.uses_ann
    queries = _unit_rows(50, 32, 2)
    overlap = [len({k for k, _ in ann.search(q, 10)} & {k for k, _ in exact.search(q, 10)})
               for q in queries]
    assert sum(overlap) / (10 * len(queries)) > 0.9  # recall@10 of HNSW vs exact
    assert ann.search(vectors[7], 1)[0][0] == "e7"
    # Incremental: a replaced vector and a deleted id are seen at once.
    ann.upsert(["e7"], vectors[8:9])
    assert {k for k, _ in ann.search(vectors[8], 2)} == {"e7", "e8"}
    ann.delete(["e8"])
    assert "e8" not in {k for k, _ in ann.search(vectors[8], 5)}
    # Restricted searches over a few ids stay exact.
    assert ann.search(queries[0], 3, {"e1", "e2", "e3"}) == exact.search(queries[0], 3,
                                                                        {"e1", "e2", "e3"})
    ann.save()
    assert (tmp_path / "v.usearch").exists()
    again = VectorIndex(32, tmp_path / "v.npz", ann_threshold=100)
    assert again.search(vectors[7], 1) == ann.search(vectors[7], 1)
    again.delete(ids[:560])
    again.save()  # below the threshold: exact search, no graph file
    assert not again.uses_ann and not (tmp_path / "v.usearch").exists()
