"""A learned classifier for relations between the concepts of a chunk.

Patterns only catch relations stated in set phrases; most relations in
abstracts are implied across a sentence or two. For every pair of concepts of
the right semantic groups that co-occur in a chunk, each *head* of the model
(one relation: a predicate between two groups) scores features of how they
co-occur — same sentence, distance, the words between and around them, cue
words of the sentence (treat, induce, contraindicated), mention in the first
sentence, prominence, pattern hits, hierarchy — with a logistic regression
trained by ``training/train_relations.py``. A pair gets the relation of the
head that clears its threshold by the widest margin, so a chemical and a
disease are related as an adverse effect *or* as a treatment, never both; the
closest co-occurring sentence is the evidence. The confidence a relation carries
is the head's *calibrated* probability (see ``Head.calibrated``): the thresholds
are set for F1, far below a probability a reader would call a fact.

Heads of the bundled model (``medkg/models/relations/relations.json``):

- CHEM -> DISO ``has_adverse_effect`` (BC5CDR CID)
- CHEM -> DISO ``treats`` (BioRED negative correlation of a chemical and a disease)
- GENE -> DISO ``associated_with`` (BioRED gene-disease relations)
- CHEM -- CHEM ``interacts_with`` (BioRED).

The training script also tries chemical-disease association, chemical -> gene
and gene -- gene heads, and leaves out those too weak to help (see
``medkg/models/README.md``).

The model file is JSON: per head its groups, predicate, feature weights, bias,
threshold and provenance. A file of the first format (one chemical -> disease
head: ``weights``, ``bias``, ``threshold``) still loads.
"""

from __future__ import annotations

import json
import math
import re
from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path

from medkg.errors import ConfigError
from medkg.extraction.extract import ChunkExtraction, MentionHit, RelationHit
from medkg.model import Predicate
from medkg.modelref import ModelRef

MODELS = Path(__file__).resolve().parents[1] / "models" / "relations"
BUNDLED_RELATIONS = MODELS / "relations.json"
_WORD = re.compile(r"[a-z][a-z-]+")
_INDUCED = re.compile(r"\s*-?\s*(?:induced|related|associated|caused|mediated)\b",
                      re.IGNORECASE)
STEM = 7  # words between mentions are cut to this many letters
TRIGGERS = ("induc", "caus", "associat", "toxic", "after", "follow", "receiv", "treat",
            "develop", "due", "related", "produc", "result", "adverse", "side", "risk",
            "onset", "reversib", "discontinu", "withdraw", "overdose", "exposure", "dose",
            "prevent", "protect", "attenuat", "reduc", "inhibit", "improv", "efficac",
            "indicat", "manag", "contraindic", "therap", "alleviat", "ameliorat", "reliev",
            "mutat", "variant", "polymorph", "express", "bind", "interact", "combin",
            "activat", "increas", "decreas", "suppress", "block", "agonist", "antagon")
# Words of the sentence itself that say what kind of relation it states.
CUES = ("treat", "therap", "indicat", "manag", "efficac", "effective", "prevent", "protect",
        "attenuat", "ameliorat", "alleviat", "reliev", "improv", "benefi", "contraindic",
        "induc", "caus", "toxic", "adverse", "side", "complicat", "develop", "risk",
        "associat", "mutat", "polymorph", "variant", "carrier", "express", "inhibit",
        "bind", "interact", "combin", "co-admin", "coadmin", "placebo", "randomi", "rat",
        "mice", "patient", "case", "report", "overdose", "intoxic", "poison")

Ancestors = Callable[[str], set[str]]


@dataclass(frozen=True)
class Pair:
    """Two concepts of a chunk, in the head's direction (first group, second group)."""

    head: str
    tail: str


def _bucket(n: int, edges: tuple[int, ...]) -> str:
    for edge in edges:
        if n <= edge:
            return str(edge)
    return f">{edges[-1]}"


def pair_features(ex: ChunkExtraction, ancestors: Ancestors | None = None,
                  groups: tuple[str, str] = ("CHEM", "DISO")) -> dict[Pair, dict[str, float]]:
    """Features of every concept pair of ``groups`` (head group, tail group) in one
    chunk. Within one group, each unordered pair once. With the vocabulary's
    ``ancestors``, also whether a broader or narrower tail concept is named too
    (annotators relate to the most specific concept)."""
    first = [m for m in ex.mentions if m.group == groups[0] and m.concept_id]
    second = [m for m in ex.mentions if m.group == groups[1] and m.concept_id]
    if not first or not second:
        return {}
    text, base = ex.chunk.text, ex.chunk.start
    sentences = sorted({m.sentence for m in ex.mentions})
    index_of = {s: i for i, s in enumerate(sentences)}
    counts_a = Counter(m.concept_id for m in first)
    counts_b = Counter(m.concept_id for m in second)
    patterned = {(r.head.concept_id, r.tail.concept_id): r.predicate for r in ex.relations}
    same_group = groups[0] == groups[1]
    cue_cache: dict[tuple[int, int], frozenset[str]] = {}
    out: dict[Pair, dict[str, float]] = {}
    for a_id in counts_a:
        for b_id in counts_b:
            if a_id == b_id or (same_group and a_id > b_id):
                continue
            as_ = [m for m in first if m.concept_id == a_id]
            bs = [m for m in second if m.concept_id == b_id]
            f: dict[str, float] = {"bias_pair": 1.0}
            gaps = [abs(index_of[a.sentence] - index_of[b.sentence]) for a in as_ for b in bs]
            f[f"sent_gap={_bucket(min(gaps), (0, 1, 2, 4))}"] = 1.0
            f["same_sentence_count"] = math.log1p(sum(1 for g in gaps if g == 0))
            f[f"chem_count={_bucket(counts_a[a_id], (1, 2, 4))}"] = 1.0
            f[f"dis_count={_bucket(counts_b[b_id], (1, 2, 4))}"] = 1.0
            f["chem_top"] = float(counts_a[a_id] == max(counts_a.values()))
            f["dis_top"] = float(counts_b[b_id] == max(counts_b.values()))
            f["n_chems"] = math.log1p(len(counts_a))
            f["n_diseases"] = math.log1p(len(counts_b))
            top = sentences[0]
            a_first = any(m.sentence == top for m in as_)
            b_first = any(m.sentence == top for m in bs)
            f["chem_in_first_sentence"] = float(a_first)
            f["dis_in_first_sentence"] = float(b_first)
            f["both_in_first_sentence"] = float(a_first and b_first)
            f["dis_negated_any"] = float(any(m.qualifiers.negated for m in bs))
            f["dis_hypothetical_any"] = float(any(m.qualifiers.hypothetical for m in bs))
            f["chem_induced"] = float(any(_INDUCED.match(text, m.end - base) for m in as_))
            f["dis_induced"] = float(any(_INDUCED.match(text, m.end - base) for m in bs))
            if ancestors is not None:
                above = ancestors(b_id)
                f["dis_has_broader"] = float(any(o in above for o in counts_b if o != b_id))
                f["dis_has_narrower"] = float(any(b_id in ancestors(o) for o in counts_b
                                                  if o != b_id))
            for key in ((a_id, b_id), (b_id, a_id)):
                if key in patterned:
                    f[f"pattern={patterned[key].value}"] = 1.0
            shared = {a.sentence for a in as_} & {b.sentence for b in bs}
            for s in shared:
                if s not in cue_cache:
                    cue_cache[s] = _cues(text[s[0] - base : s[1] - base])
                for cue in cue_cache[s]:
                    f[f"cue:{cue}"] = 1.0
            for a in as_:
                for b in bs:
                    if a.sentence == b.sentence:
                        f.update(_sentence_features(text, base, a, b))
            out[Pair(a_id, b_id)] = f
    return out


def _cues(sentence: str) -> frozenset[str]:
    words = _WORD.findall(sentence.lower())
    return frozenset(c for c in CUES for w in words if w.startswith(c))


def _sentence_features(text: str, base: int, chem: MentionHit, dis: MentionHit
                       ) -> dict[str, float]:
    """What lies between (and just before) two mentions of one sentence: its
    length, trigger words, and the words themselves (cut to a stem)."""
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
    right_start = max(chem.end, dis.end) - base
    for word in _WORD.findall(text[right_start : right_start + 40].lower())[:3]:
        for trigger in TRIGGERS:
            if word.startswith(trigger):
                f[f"right:{trigger}"] = 1.0
    return f


@dataclass
class Head:
    """One relation the model predicts: a logistic regression over named features."""

    name: str
    predicate: Predicate
    groups: tuple[str, str]
    weights: dict[str, float]
    bias: float
    threshold: float
    about: str = ""
    # (a, b): the calibrated confidence is sigmoid(a * logit(p) + b), fitted on
    # out-of-fold predictions of the training splits; None: not calibrated
    calibration: tuple[float, float] | None = None

    def probability(self, features: dict[str, float]) -> float:
        z = self.bias + sum(self.weights.get(k, 0.0) * v for k, v in features.items())
        return _sigmoid(z)

    def calibrated(self, p: float) -> float:
        """The measured probability that a pair scored ``p`` is right."""
        if self.calibration is None:
            return p
        a, b = self.calibration
        p = min(max(p, 1e-6), 1 - 1e-6)
        return _sigmoid(a * math.log(p / (1 - p)) + b)

    def to_json(self) -> dict[str, object]:
        out: dict[str, object] = {
            "name": self.name, "predicate": self.predicate.value, "groups": list(self.groups),
            "bias": self.bias, "threshold": self.threshold, "about": self.about,
            "weights": self.weights}
        if self.calibration is not None:
            out["calibration"] = list(self.calibration)
        return out

    @classmethod
    def from_json(cls, data: dict[str, object]) -> Head:
        groups = data["groups"]
        if not isinstance(groups, list) or len(groups) != 2:
            raise ValueError("a head needs two groups")
        calibration = data.get("calibration")
        if calibration is not None and (not isinstance(calibration, list)
                                        or len(calibration) != 2):
            raise ValueError("a head's calibration is [scale, shift]")
        return cls(str(data["name"]), Predicate(str(data["predicate"])),
                   (str(groups[0]), str(groups[1])),
                   {str(k): float(v) for k, v in dict(data["weights"]).items()},  # type: ignore[call-overload]
                   float(data["bias"]), float(data["threshold"]),  # type: ignore[arg-type]
                   str(data.get("about", "")),
                   None if calibration is None
                   else (float(calibration[0]), float(calibration[1])))


def _sigmoid(z: float) -> float:
    return 1.0 / (1.0 + math.exp(-max(-60.0, min(60.0, z))))


def resolve_relation_model(setting: str, ancestors: Ancestors | None = None
                           ) -> RelationModel | None:
    """``none`` -> no model; ``bundled`` -> the shipped one; else a model file path.
    ``ancestors`` is the vocabulary's hierarchy, which some features use."""
    path = ModelRef(setting, "extraction.relation_model").path(BUNDLED_RELATIONS)
    return None if path is None else RelationModel.load(path, ancestors)


@dataclass
class RelationModel:
    """Heads (one per relation), each a logistic regression; see the module text."""

    heads: list[Head]
    about: str = ""
    ancestors: Ancestors | None = field(default=None, repr=False)

    @classmethod
    def load(cls, path: Path, ancestors: Ancestors | None = None) -> RelationModel:
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
            if "heads" in data:
                heads = [Head.from_json(h) for h in data["heads"]]
            else:  # the first format: one chemical -> disease (CID) head
                heads = [Head("cid", Predicate.HAS_ADVERSE_EFFECT, ("CHEM", "DISO"),
                              data["weights"], data["bias"], data["threshold"],
                              data.get("about", ""))]
        except (OSError, ValueError, KeyError, TypeError) as e:
            raise ConfigError(f"{path}: not a relation model file ({e})") from e
        return cls(heads, data.get("about", ""), ancestors)

    def save(self, path: Path) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps({"about": self.about,
                                    "heads": [h.to_json() for h in self.heads]},
                                   indent=1, sort_keys=True), encoding="utf-8")

    def scores(self, ex: ChunkExtraction) -> Iterable[tuple[Head, Pair, float]]:
        """Every head's probability for every candidate pair of its groups."""
        by_groups: dict[tuple[str, str], list[Head]] = {}
        for head in self.heads:
            by_groups.setdefault(head.groups, []).append(head)
        for groups, heads in by_groups.items():
            for pair, features in pair_features(ex, self.ancestors, groups).items():
                for head in heads:
                    yield head, pair, head.probability(features)

    def relations(self, ex: ChunkExtraction) -> list[RelationHit]:
        """The relations this model finds in a chunk: per concept pair, the head
        that clears its threshold by the widest margin — unless it is a therapy the
        text contradicts (:func:`says_harm`): then the next head that clears its
        threshold, or, where the text says outright that the chemical brought the
        disorder on ("X-induced Y"), the adverse-effect head with its own
        (calibrated, maybe low) probability."""
        scored: dict[frozenset[str], list[tuple[float, Head, Pair, float]]] = {}
        for head, pair, p in self.scores(ex):
            key = frozenset((pair.head, pair.tail))
            scored.setdefault(key, []).append((p - head.threshold, head, pair, p))
        out = []
        for options in scored.values():
            cleared = sorted((o for o in options if o[0] >= 0), key=lambda o: -o[0])
            for _, head, pair, p in cleared:
                if head.predicate in _TREATMENT:
                    harm = says_harm(ex, pair, head.groups)
                    if harm == "stated":
                        for _, other, pair2, q in options:
                            if other.predicate is Predicate.HAS_ADVERSE_EFFECT:
                                out.append(self._hit(ex, other, pair2, q))
                                break
                        break
                    if harm:
                        continue
                out.append(self._hit(ex, head, pair, p))
                break
        return out

    @staticmethod
    def _hit(ex: ChunkExtraction, head: Head, pair: Pair, p: float) -> RelationHit:
        a, b = _closest(ex.mentions, pair, head.groups)
        return RelationHit(a, head.predicate, b, round(head.calibrated(p), 3),
                           f"classifier:{head.name}")


# (evaluation.judging.THERAPY also counts contraindications: a different set)
_TREATMENT = frozenset({Predicate.TREATS, Predicate.PREVENTS})
# A sentence that says the chemical brought the disorder on ("cisplatin-induced
# nephrotoxicity", "exacerbated asthma") does not state a treatment of it.
_HARM_CUE = re.compile(r"\b(?:induc\w*|caus\w*|exacerbat\w*|precipitat\w*|worsen\w*|"
                       r"aggravat\w*|provok\w*|triggere?d?|toxicit\w*|adverse)\b",
                       re.IGNORECASE)
_THERAPY_CUE = re.compile(r"\b(?:treat\w*|therap\w*|effective\w*|efficac\w*|improv\w*|"
                          r"reliev\w*|alleviat\w*|amelior\w*|prevent\w*|protect\w*|"
                          r"attenuat\w*|revers\w*|manag\w*|control\w*|benefi\w*|"
                          r"indicated|remission|respon\w*)\b", re.IGNORECASE)


_BY = re.compile(r"\s*(?:was|were|is|are)?\s*(?:induced|caused|provoked|triggered) by\b",
                 re.IGNORECASE)
NEAR = 60  # characters between "X-induced" and the disorder it names


def says_harm(ex: ChunkExtraction, pair: Pair, groups: tuple[str, str]) -> str:
    """How the text says the chemical brings the disorder on: ``"stated"`` when the
    disorder is named by it ("iron overload", "lead poisoning") or a sentence naming
    both says "X-induced Y" or "Y induced by X" (whatever else it says: "protection
    against doxorubicin-induced cardiotoxicity"); ``"cued"`` when the sentences
    naming both speak of harm (induced, caused, exacerbated...) and none of them of
    a treatment; ``""`` when it does not."""
    a = [m for m in ex.mentions if m.concept_id == pair.head and m.group == groups[0]]
    b = [m for m in ex.mentions if m.concept_id == pair.tail and m.group == groups[1]]
    if any(re.search(rf"\b{re.escape(x.text.lower())}\b", y.text.lower())
           for x in a for y in b):
        return "stated"  # the disorder is named by the chemical: iron overload
    shared = {m.sentence for m in a} & {m.sentence for m in b}
    if not shared:
        return ""
    text, base = ex.chunk.text, ex.chunk.start
    for x in a:
        for y in b:
            if x.sentence != y.sentence:
                continue
            if (x.end <= y.start <= x.end + NEAR and _INDUCED.match(text, x.end - base)) or (
                    y.end <= x.start <= y.end + NEAR and _BY.match(text, y.end - base)):
                return "stated"
    texts = [text[s - base : e - base] for s, e in shared]
    if any(_HARM_CUE.search(t) for t in texts) and not any(_THERAPY_CUE.search(t)
                                                           for t in texts):
        return "cued"
    return ""


def _closest(mentions: list[MentionHit], pair: Pair, groups: tuple[str, str]
             ) -> tuple[MentionHit, MentionHit]:
    a = [m for m in mentions if m.concept_id == pair.head and m.group == groups[0]]
    b = [m for m in mentions if m.concept_id == pair.tail and m.group == groups[1]]
    return min(((x, y) for x in a for y in b), key=lambda xy: abs(xy[0].start - xy[1].start))
