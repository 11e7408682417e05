"""A persistent vector index: exact cosine search while small, HNSW above a size.

Vectors must be unit length (the embedder guarantees it). The vectors
themselves (``.npz``) are the source of truth; once the index holds
``ann_threshold`` vectors, searches go through a usearch HNSW graph kept beside
them (``.usearch``), updated on every upsert and delete and rebuilt from the
vectors whenever it is missing or stale. Searches restricted to a small set of
ids stay exact. The index is a derived artefact: it can always be rebuilt from
the graph store, so it is written atomically (temp file + rename) and a
missing file means "empty".
"""

from __future__ import annotations

import os
import zipfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from medkg import files
from medkg.errors import StoreError
from medkg.linking.embeddings import Matrix

DEFAULT_ANN_THRESHOLD = 20_000
EXACT_SUBSET = 5_000  # a search restricted to at most this many ids stays exact
_OVERSAMPLE = 4


class VectorIndex:
    """Ids and their vectors; upsert, delete, top-k by cosine similarity."""

    def __init__(self, dim: int, path: Path | None = None,
                 ann_threshold: int = DEFAULT_ANN_THRESHOLD) -> None:
        self.dim = dim
        self.path = path
        self.ann_threshold = ann_threshold
        self._ids: list[str] = []
        self._pos: dict[str, int] = {}
        self._labels: list[int] = []  # the HNSW key of each row; never reused
        self._next_label = 0
        # the vectors: the first ``_rows`` rows of ``_buffer``, which grows by doubling,
        # so adding a document's vectors does not copy every vector before them
        self._buffer: Matrix = np.zeros((0, dim), dtype=np.float32)
        self._rows = 0
        self._ann: Any = None  # usearch Index, built when the index grows past the threshold
        self._label_rows: dict[int, int] | None = None  # HNSW key -> row, rebuilt when stale
        if path is not None and path.exists():
            self._read(path)

    @property
    def uses_ann(self) -> bool:
        return len(self._ids) >= self.ann_threshold

    def _ann_path(self) -> Path | None:
        return self.path.with_suffix(".usearch") if self.path is not None else None

    def _build_ann(self) -> Any:
        from usearch.index import Index

        ann = Index(ndim=self.dim, metric="ip", dtype="f32", connectivity=16,
                    expansion_add=128, expansion_search=64)
        if self._ids:
            ann.add(np.asarray(self._labels, dtype=np.uint64), self._matrix)
        return ann

    def _ensure_ann(self) -> Any:
        if self._ann is None:
            ann_path = self._ann_path()
            if ann_path is not None and ann_path.exists():
                from usearch.index import Index

                restored = Index.restore(str(ann_path))
                if restored is not None and len(restored) == len(self._ids):
                    self._ann = restored
            if self._ann is None:
                self._ann = self._build_ann()
        return self._ann

    def __len__(self) -> int:
        return len(self._ids)

    def __contains__(self, key: object) -> bool:
        return key in self._pos

    def ids(self) -> list[str]:
        return list(self._ids)

    def _read(self, path: Path) -> None:
        try:
            with np.load(path, allow_pickle=False) as data:
                ids = [str(x) for x in data["ids"]]
                matrix = np.asarray(data["vectors"], dtype=np.float32)
                labels = ([int(x) for x in data["labels"]] if "labels" in data
                          else list(range(len(ids))))
        except (OSError, ValueError, KeyError, zipfile.BadZipFile, EOFError) as exc:
            raise StoreError(
                f"{path}: the vector index is unreadable ({exc})",
                hint="delete the file; `medkg build` rebuilds it from the graph",
            ) from exc
        if matrix.shape != (len(ids), self.dim):
            raise StoreError(
                f"{path}: index holds {matrix.shape} vectors, expected dimension {self.dim}",
                hint="the embedding model changed: delete the file and run `medkg build`",
            )
        self._ids, self._matrix, self._labels = ids, matrix, labels
        self._next_label = max(labels, default=-1) + 1
        self._pos = {k: i for i, k in enumerate(ids)}

    @property
    def _matrix(self) -> Matrix:
        return self._buffer[: self._rows]

    @_matrix.setter
    def _matrix(self, value: Matrix) -> None:
        self._buffer = np.ascontiguousarray(value, dtype=np.float32)
        self._rows = len(value)

    def _append(self, vectors: Matrix) -> None:
        need = self._rows + len(vectors)
        if need > len(self._buffer):
            grown = np.zeros((max(need, 2 * len(self._buffer), 64), self.dim), dtype=np.float32)
            grown[: self._rows] = self._buffer[: self._rows]
            self._buffer = grown
        self._buffer[self._rows: need] = vectors
        self._rows = need

    def vector(self, key: str) -> Matrix | None:
        pos = self._pos.get(key)
        return None if pos is None else self._matrix[pos]

    def upsert(self, ids: Sequence[str], vectors: Matrix) -> None:
        if len(ids) != len(vectors):
            raise ValueError("ids and vectors differ in length")
        new_rows: list[int] = []
        changed: list[int] = []
        for i, key in enumerate(ids):
            pos = self._pos.get(key)
            if pos is None:
                self._pos[key] = len(self._ids)
                self._ids.append(key)
                self._labels.append(self._next_label)
                self._next_label += 1
                new_rows.append(i)
            elif not np.array_equal(self._matrix[pos], vectors[i]):
                self._matrix[pos] = vectors[i]
                changed.append(pos)
        if new_rows:
            self._append(vectors[new_rows])
        if self._ann is not None:
            for pos in changed:  # usearch keeps one vector per key: replace it
                self._ann.remove(self._labels[pos])
            rows = changed + list(range(len(self._ids) - len(new_rows), len(self._ids)))
            if rows:
                self._ann.add(np.asarray([self._labels[r] for r in rows], dtype=np.uint64),
                              self._matrix[rows])

    def delete(self, ids: Sequence[str]) -> None:
        drop = {self._pos[k] for k in ids if k in self._pos}
        if not drop:
            return
        if self._ann is not None:
            for pos in drop:
                self._ann.remove(self._labels[pos])
        keep = [i for i in range(len(self._ids)) if i not in drop]
        self._label_rows = None
        self._ids = [self._ids[i] for i in keep]
        self._labels = [self._labels[i] for i in keep]
        self._matrix = self._matrix[keep]
        self._pos = {k: i for i, k in enumerate(self._ids)}

    def search(
        self, query: Matrix, k: int, allowed: set[str] | None = None
    ) -> list[tuple[str, float]]:
        """The ``k`` most similar ids to one query vector, best first."""
        if not self._ids:
            return []
        query = query.reshape(-1).astype(np.float32)
        if allowed is not None and len(allowed) <= EXACT_SUBSET:
            rows = [self._pos[key] for key in allowed if key in self._pos]
            return self._exact(query, k, rows)
        if self.uses_ann:
            hits = self._approximate(query, k, allowed)
            if len(hits) == min(k, len(self._ids) if allowed is None else len(allowed)):
                return hits
        return self._exact(query, k, None, allowed)

    def _exact(self, query: Matrix, k: int, rows: list[int] | None,
               allowed: set[str] | None = None) -> list[tuple[str, float]]:
        matrix = self._matrix if rows is None else self._matrix[rows]
        scores = matrix @ query
        order = np.argsort(-scores)
        hits: list[tuple[str, float]] = []
        for i in order:
            key = self._ids[int(i) if rows is None else rows[int(i)]]
            if allowed is None or key in allowed:
                hits.append((key, float(scores[int(i)])))
                if len(hits) == k:
                    break
        return hits

    def _rows_by_label(self) -> dict[int, int]:
        if self._label_rows is None or len(self._label_rows) != len(self._labels):
            self._label_rows = {label: pos for pos, label in enumerate(self._labels)}
        return self._label_rows

    def _approximate(self, query: Matrix, k: int, allowed: set[str] | None
                     ) -> list[tuple[str, float]]:
        ann = self._ensure_ann()
        wanted = k if allowed is None else k * _OVERSAMPLE
        found = ann.search(query, min(wanted, len(self._ids)))
        by_label = self._rows_by_label()
        hits = []
        for label, distance in zip(found.keys, found.distances, strict=True):
            pos = by_label.get(int(label))
            if pos is None:
                continue
            key = self._ids[pos]
            if allowed is None or key in allowed:
                hits.append((key, float(1.0 - distance)))  # inner-product distance = 1 - dot
                if len(hits) == k:
                    break
        return hits

    def save(self) -> None:
        if self.path is None:
            return
        self.path.parent.mkdir(parents=True, exist_ok=True)
        with files.atomic_binary(self.path) as f:
            np.savez(f, ids=np.array(self._ids, dtype=str), vectors=self._matrix,
                     labels=np.asarray(self._labels, dtype=np.int64))
        ann_path = self._ann_path()
        if ann_path is None:
            return
        if self.uses_ann:
            ann_tmp = ann_path.with_suffix(".tmp.usearch")
            self._ensure_ann().save(str(ann_tmp))
            os.chmod(ann_tmp, files.FILE_MODE)
            os.replace(ann_tmp, ann_path)
        elif ann_path.exists():
            ann_path.unlink()  # shrank below the threshold: exact search again
