"""A persistent vector index with exact cosine search.

Vectors must be unit length (the embedder guarantees it). The index is a
derived artefact: it can always be rebuilt from the graph store, so it is
written atomically (temp file + rename) and a missing file means "empty".
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from medkg.errors import StoreError
from medkg.linking.embeddings import Matrix


class VectorIndex:
    """Ids and their vectors; upsert, delete, top-k by cosine similarity."""

    def __init__(self, dim: int, path: Path | None = None) -> None:
        self.dim = dim
        self.path = path
        self._ids: list[str] = []
        self._pos: dict[str, int] = {}
        self._matrix: Matrix = np.zeros((0, dim), dtype=np.float32)
        if path is not None and path.exists():
            self._read(path)

    def __len__(self) -> int:
        return len(self._ids)

    def __contains__(self, key: object) -> bool:
        return key in self._pos

    def _read(self, path: Path) -> None:
        try:
            with np.load(path, allow_pickle=False) as data:
                ids = [str(x) for x in data["ids"]]
                matrix = np.asarray(data["vectors"], dtype=np.float32)
        except (OSError, ValueError, KeyError) as exc:
            raise StoreError(
                f"{path}: the vector index is unreadable ({exc})",
                hint="delete the file; `medkg build` rebuilds it from the graph",
            ) from exc
        if matrix.shape != (len(ids), self.dim):
            raise StoreError(
                f"{path}: index holds {matrix.shape} vectors, expected dimension {self.dim}",
                hint="the embedding model changed: delete the file and run `medkg build`",
            )
        self._ids, self._matrix = ids, matrix
        self._pos = {k: i for i, k in enumerate(ids)}

    def vector(self, key: str) -> Matrix | None:
        pos = self._pos.get(key)
        return None if pos is None else self._matrix[pos]

    def upsert(self, ids: Sequence[str], vectors: Matrix) -> None:
        if len(ids) != len(vectors):
            raise ValueError("ids and vectors differ in length")
        new_rows: list[int] = []
        for i, key in enumerate(ids):
            pos = self._pos.get(key)
            if pos is None:
                self._pos[key] = len(self._ids)
                self._ids.append(key)
                new_rows.append(i)
            else:
                self._matrix[pos] = vectors[i]
        if new_rows:
            self._matrix = np.vstack([self._matrix, vectors[new_rows]])

    def delete(self, ids: Sequence[str]) -> None:
        drop = {self._pos[k] for k in ids if k in self._pos}
        if not drop:
            return
        keep = [i for i in range(len(self._ids)) if i not in drop]
        self._ids = [self._ids[i] for i in keep]
        self._matrix = self._matrix[keep]
        self._pos = {k: i for i, k in enumerate(self._ids)}

    def search(
        self, query: Matrix, k: int, allowed: set[str] | None = None
    ) -> list[tuple[str, float]]:
        """The ``k`` most similar ids to one query vector, best first."""
        if not self._ids:
            return []
        scores = self._matrix @ query.reshape(-1)
        order = np.argsort(-scores)
        hits: list[tuple[str, float]] = []
        for i in order:
            key = self._ids[int(i)]
            if allowed is None or key in allowed:
                hits.append((key, float(scores[int(i)])))
                if len(hits) == k:
                    break
        return hits

    def save(self) -> None:
        if self.path is None:
            return
        self.path.parent.mkdir(parents=True, exist_ok=True)
        tmp = self.path.with_suffix(".tmp.npz")
        np.savez(tmp, ids=np.array(self._ids, dtype=str), vectors=self._matrix)
        os.replace(tmp, self.path)
