"""The SAC-KG pruner: should a verified tail entity become a head at the next level?

A logistic regression over the entity's name embedding (the workspace's
sentence-transformers model) and its semantic group, trained without manual
labels by ``training/train_pruner.py`` from open vocabulary graphs: concepts
that head a relation there (a disease with symptoms, a drug with a class, a
gene with phenotypes) are "grow", concepts that only ever appear as tails
(a symptom, a body part, an organism) are "prune".

The model file is JSON: the embedding model it was trained with, the groups,
weights, bias, threshold and its provenance.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from medkg.errors import ConfigError
from medkg.linking.embeddings import Embedder, Matrix
from medkg.modelref import ModelRef

BUNDLED_PRUNER = Path(__file__).resolve().parents[1] / "models" / "pruner" / "pruner.json"


def features(vectors: Matrix, groups: Sequence[str], known: Sequence[str]) -> Matrix:
    """Name embeddings followed by a one-hot of the semantic group."""
    onehot = np.zeros((len(groups), len(known)), dtype=np.float32)
    for i, g in enumerate(groups):
        if g in known:
            onehot[i, known.index(g)] = 1.0
    return np.hstack([vectors.astype(np.float32), onehot])


@dataclass(frozen=True)
class Pruner:
    groups: list[str]
    weights: Matrix
    bias: float
    threshold: float
    embedding: str

    @classmethod
    def load(cls, path: Path) -> Pruner:
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
            return cls(groups=list(data["groups"]),
                       weights=np.asarray(data["weights"], dtype=np.float32),
                       bias=float(data["bias"]), threshold=float(data["threshold"]),
                       embedding=str(data["embedding"]))
        except (OSError, ValueError, KeyError) as exc:
            raise ConfigError(f"cannot read the pruner model {path}: {exc}",
                              hint="set construction.pruner = 'bundled'") from exc

    def scores(self, embedder: Embedder, names: Sequence[str], groups: Sequence[str]
               ) -> Matrix:
        """P(grow) for each (name, group)."""
        if not names:
            return np.zeros(0, dtype=np.float32)
        x = features(embedder.embed(list(names)), groups, self.groups)
        if x.shape[1] != self.weights.shape[0]:
            raise ConfigError(
                f"the pruner expects {self.weights.shape[0] - len(self.groups)}-dimensional "
                f"embeddings ({self.embedding}); this workspace's model gives "
                f"{x.shape[1] - len(self.groups)}",
                hint="use the bundled embedding model, or turn the pruner off "
                "(construction.prune = false)")
        z = x @ self.weights + self.bias
        return np.asarray(1.0 / (1.0 + np.exp(-z)), dtype=np.float32)

    def grow(self, embedder: Embedder, names: Sequence[str], groups: Sequence[str]
             ) -> list[bool]:
        return [bool(s >= self.threshold) for s in self.scores(embedder, names, groups)]


def resolve_pruner(setting: str) -> Pruner:
    path = ModelRef(setting, "construction.pruner").path(BUNDLED_PRUNER)
    if path is None:
        raise ConfigError("construction.pruner = 'none' names no pruner",
                          hint="turn pruning off with construction.prune = false")
    return Pruner.load(path)
