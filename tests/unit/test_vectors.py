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
