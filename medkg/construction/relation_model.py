"""A learned classifier for chemical -> disease relations within a chunk.

Patterns only catch relations stated in set phrases; most "chemical induced
disease" facts in abstracts are implied across a sentence or two. For every
(chemical concept, disease concept) pair that co-occurs in a chunk this model
scores features of how they co-occur (same sentence, distance, trigger words
between them, mention in the first sentence, prominence, pattern hits) with a logistic
regression trained by ``training/train_relations.py``; pairs above the
threshold become ``has_adverse_effect`` relations with the closest
co-occurring sentence as evidence.

The model file is JSON: feature weights, bias, threshold, and its provenance.
"""

from __future__ import annotations

import json
import math
import re
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from medkg.construction.extraction import ChunkExtraction, MentionHit, RelationHit
from medkg.model import Predicate
from medkg.modelref import ModelRef

BUNDLED_RELATIONS = Path(__file__).resolve().parents[1] / "models" / "relations" / "cid.json"
_WORD = re.compile(r"[a-z][a-z-]+")
_INDUCED = re.compile(r"\s*-?\s*(?:induced|related|associated|caused)\b", re.IGNORECASE)
STEM = 7  # words between mentions are cut to this many letters
TRIGGERS = ("induc", "caus", "associat", "toxic", "after", "follow", "receiv", "treat",
            "develop", "due", "related", "produc", "result", "adverse", "side", "risk",
            "onset", "reversib", "discontinu", "withdraw", "overdose", "exposure", "dose")


@dataclass(frozen=True)
class Pair:
    chemical: str
    disease: str


def _bucket(n: int, edges: tuple[int, ...]) -> str:
    for edge in edges:
        if n <= edge:
            return str(edge)
    return f">{edges[-1]}"


Ancestors = Callable[[str], set[str]]


def pair_features(ex: ChunkExtraction, ancestors: Ancestors | None = None
                  ) -> dict[Pair, dict[str, float]]:
    """Features of every chemical/disease concept pair in one chunk. With the
    vocabulary's ``ancestors``, also whether a broader or narrower disease is
    named too (annotators relate a chemical to the most specific disease)."""
    chems = [m for m in ex.mentions if m.group == "CHEM" and m.concept_id]
    diseases = [m for m in ex.mentions if m.group == "DISO" and m.concept_id]
    if not chems or not diseases:
        return {}
    text, base = ex.chunk.text, ex.chunk.start
    sentences = sorted({m.sentence for m in ex.mentions})
    index_of = {s: i for i, s in enumerate(sentences)}
    chem_counts = Counter(m.concept_id for m in chems)
    dis_counts = Counter(m.concept_id for m in diseases)
    patterned = {(r.head.concept_id, r.tail.concept_id, r.predicate) for r in ex.relations}
    out: dict[Pair, dict[str, float]] = {}
    for c_id in chem_counts:
        for d_id in dis_counts:
            cs = [m for m in chems if m.concept_id == c_id]
            ds = [m for m in diseases if m.concept_id == d_id]
            f: dict[str, float] = {"bias_pair": 1.0}
            gaps = [abs(index_of[a.sentence] - index_of[b.sentence]) for a in cs for b in ds]
            f[f"sent_gap={_bucket(min(gaps), (0, 1, 2, 4))}"] = 1.0
            f["same_sentence_count"] = math.log1p(sum(1 for g in gaps if g == 0))
            f[f"chem_count={_bucket(chem_counts[c_id], (1, 2, 4))}"] = 1.0
            f[f"dis_count={_bucket(dis_counts[d_id], (1, 2, 4))}"] = 1.0
            f["chem_top"] = float(chem_counts[c_id] == max(chem_counts.values()))
            f["dis_top"] = float(dis_counts[d_id] == max(dis_counts.values()))
            f["n_chems"] = math.log1p(len(chem_counts))
            f["n_diseases"] = math.log1p(len(dis_counts))
            first = sentences[0]
            chem_first_sent = any(m.sentence == first for m in cs)
            dis_first_sent = any(m.sentence == first for m in ds)
            f["chem_in_first_sentence"] = float(chem_first_sent)
            f["dis_in_first_sentence"] = float(dis_first_sent)
            f["both_in_first_sentence"] = float(chem_first_sent and dis_first_sent)
            f["dis_negated_any"] = float(any(m.qualifiers.negated for m in ds))
            f["dis_hypothetical_any"] = float(any(m.qualifiers.hypothetical for m in ds))
            f["chem_induced"] = float(any(_INDUCED.match(text, m.end - base) for m in cs))
            if ancestors is not None:
                above = ancestors(d_id)
                f["dis_has_broader"] = float(any(o in above for o in dis_counts if o != d_id))
                f["dis_has_narrower"] = float(any(d_id in ancestors(o) for o in dis_counts
                                                  if o != d_id))
            for p in (Predicate.HAS_ADVERSE_EFFECT, Predicate.CAUSES, Predicate.TREATS,
                      Predicate.PREVENTS, Predicate.CONTRAINDICATED_IN):
                if (c_id, d_id, p) in patterned:
                    f[f"pattern={p.value}"] = 1.0
            for a in cs:
                for b in ds:
                    if a.sentence == b.sentence:
                        f.update(_sentence_features(text, base, a, b))
            out[Pair(c_id, d_id)] = f
    return out


def _sentence_features(text: str, base: int, chem: MentionHit, dis: MentionHit
                       ) -> dict[str, float]:
    """What lies between (and just before) a chemical and a disease mention in one
    sentence: its length, trigger words, and the words themselves (cut to a stem)."""
    f: dict[str, float] = {"chem_first": float(chem.start < dis.start)}
    lo, hi = (chem.end, dis.start) if chem.start < dis.start else (dis.end, chem.start)
    words = _WORD.findall(text[lo - base : hi - base].lower())
    f[f"between_len={_bucket(len(words), (1, 3, 6, 12))}"] = 1.0
    for word in words:
        for trigger in TRIGGERS:
            if word.startswith(trigger):
                f[f"between:{trigger}"] = 1.0
        if len(words) <= 12 and len(word) > 2:
            f[f"bw:{word[:STEM]}"] = 1.0
    left_end = min(chem.start, dis.start) - base
    for word in _WORD.findall(text[max(0, left_end - 40) : left_end].lower())[-4:]:
        for trigger in TRIGGERS:
            if word.startswith(trigger):
                f[f"left:{trigger}"] = 1.0
    return f


def resolve_relation_model(setting: str, ancestors: Ancestors | None = None
                           ) -> RelationModel | None:
    """``none`` -> no model; ``bundled`` -> the shipped one; else a model file path.
    ``ancestors`` is the vocabulary's hierarchy, which some features use."""
    path = ModelRef(setting, "extraction.relation_model").path(BUNDLED_RELATIONS)
    return None if path is None else RelationModel.load(path, ancestors)


class RelationModel:
    """Logistic regression over sparse named features."""

    def __init__(self, weights: dict[str, float], bias: float, threshold: float,
                 about: str = "", ancestors: Ancestors | None = None) -> None:
        self.ancestors = ancestors
        self.weights = weights
        self.bias = bias
        self.threshold = threshold
        self.about = about

    @classmethod
    def load(cls, path: Path, ancestors: Ancestors | None = None) -> RelationModel:
        data = json.loads(path.read_text(encoding="utf-8"))
        return cls(data["weights"], data["bias"], data["threshold"], data.get("about", ""),
                   ancestors)

    def save(self, path: Path) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps({"about": self.about, "bias": self.bias,
                                    "threshold": self.threshold, "weights": self.weights},
                                   indent=1, sort_keys=True), encoding="utf-8")

    def probability(self, features: dict[str, float]) -> float:
        z = self.bias + sum(self.weights.get(k, 0.0) * v for k, v in features.items())
        return 1.0 / (1.0 + math.exp(-z))

    def relations(self, ex: ChunkExtraction) -> list[RelationHit]:
        """Chemical -> disease relations this model finds in a chunk."""
        out = []
        for pair, features in pair_features(ex, self.ancestors).items():
            p = self.probability(features)
            if p < self.threshold:
                continue
            head, tail = _closest(ex.mentions, pair)
            out.append(RelationHit(head, Predicate.HAS_ADVERSE_EFFECT, tail, round(p, 3),
                                   "classifier:cid"))
        return out


def _closest(mentions: list[MentionHit], pair: Pair) -> tuple[MentionHit, MentionHit]:
    cs = [m for m in mentions if m.concept_id == pair.chemical and m.group == "CHEM"]
    ds = [m for m in mentions if m.concept_id == pair.disease and m.group == "DISO"]
    return min(((a, b) for a in cs for b in ds), key=lambda ab: abs(ab[0].start - ab[1].start))
