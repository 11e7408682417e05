"""The traverse mode's builtin guide: two logistic models over features of a
candidate triple that do not depend on one question template (see
:mod:`medkg.retrieval.traverse`), fitted by ``training/train_traverse.py`` into
``medkg/models/traverse/guide.json``."""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache
from pathlib import Path

import numpy as np

from medkg.errors import ConfigError
from medkg.linking.embeddings import Embedder, Matrix
from medkg.model import EntityBrief
from medkg.retrieval.intent import answer_groups, question_predicates
from medkg.retrieval.traverse import Candidate, TraversalGraph, triple_text

GUIDE_MODEL = Path(__file__).resolve().parents[1] / "models" / "traverse" / "guide.json"

FEATURES = ("similarity", "asked", "answer_type", "deeper", "documents", "confidence",
            "mentions", "to_topic", "negated")


def features(question: str, qvec: Matrix, candidates: Sequence[Candidate],
             entities: dict[str, EntityBrief], embedder: Embedder) -> Matrix:
    """One row of :data:`FEATURES` per candidate: the cosine of the triple's
    sentence to the question; its predicate asked for at this hop (past depth
    1, a predicate *other* than the one the path came by, when the question
    asks for several: "drugs that treat the conditions X causes" is causes,
    then treats); it reaches the kind of entity asked for ("which drugs"); past
    depth 1; log(1 + documents stating it); its confidence; log(1 + chunks
    mentioning its far end); it reaches a topic entity; negated."""
    if not candidates:
        return np.zeros((0, len(FEATURES)), dtype=np.float32)
    intents = question_predicates(question)
    wanted = answer_groups(question)
    sims = embedder.embed([triple_text(c.triple, entities) for c in candidates]) @ qvec
    rows = []
    for sim, c in zip(sims, candidates, strict=True):
        t = c.triple
        p = t.predicate
        asked = p in intents and (c.came_by is None or p != c.came_by or len(intents) < 2)
        far = entities.get(c.target)
        rows.append((float(sim), float(asked), float(far is not None and far.type in wanted),
                     float(c.depth > 1), math.log1p(len({e.document_id for e in t.evidence})),
                     t.confidence, math.log1p(len(far.chunk_ids)) if far is not None else 0.0,
                     float(c.to_topic), float(t.qualifiers.negated)))
    return np.asarray(rows, dtype=np.float32)


@dataclass(frozen=True)
class Logistic:
    bias: float
    weights: tuple[float, ...]

    def __call__(self, x: Matrix) -> list[float]:
        z = x @ np.asarray(self.weights, dtype=np.float32) + self.bias
        return [float(v) for v in 1.0 / (1.0 + np.exp(-z))]


@dataclass(frozen=True)
class GuideModel:
    """The builtin guide's two fitted models (``medkg/models/traverse/guide.json``)."""

    keep: Logistic
    evidence: Logistic


@cache
def bundled_guide() -> GuideModel:
    """The fitted models shipped with medkg."""
    raw = json.loads(GUIDE_MODEL.read_text(encoding="utf-8"))
    if tuple(raw["features"]) != FEATURES:
        raise ConfigError("medkg/models/traverse/guide.json was fitted on other features",
                          hint="rerun training/train_traverse.py")
    return GuideModel(*(Logistic(raw[k]["bias"], tuple(raw[k]["weights"]))
                        for k in ("keep", "evidence")))


class BuiltinGuide:
    """The fitted models over :func:`features` (see the module docstring); clue
    entities = the candidates whose vectors are nearest to the question."""

    name = "builtin"

    def __init__(self, embedder: Embedder, model: GuideModel | None = None) -> None:
        self._embedder = embedder
        self._model = model or bundled_guide()

    def score(self, question: str, qvec: Matrix, candidates: Sequence[Candidate],
              entities: dict[str, EntityBrief]) -> list[float]:
        x = features(question, qvec, candidates, entities, self._embedder)
        return self._model.keep(x) if len(x) else []

    def evidence(self, question: str, qvec: Matrix, candidates: Sequence[Candidate],
                 entities: dict[str, EntityBrief]) -> list[float]:
        x = features(question, qvec, candidates, entities, self._embedder)
        return self._model.evidence(x) if len(x) else []

    def clues(self, question: str, qvec: Matrix, candidates: Sequence[EntityBrief],
              graph: TraversalGraph, n: int) -> list[str]:
        scored = []
        for e in candidates:
            vec = graph.entity_vector(e.id)
            if vec is not None:
                scored.append((float(vec @ qvec), e.id))
        return [eid for _, eid in sorted(scored, key=lambda x: (-x[0], x[1]))[:n]]
