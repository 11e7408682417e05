"""Train the relation model (medkg/models/relations/relations.json).

    python training/train_relations.py \
        --train ../shared/data/eval/bc5cdr/CDR_TrainingSet.PubTator.txt \
        --train ../shared/data/eval/biored/Train.PubTator \
        [--keep-weights medkg/models/relations/relations.json]

The bundled heads' weights are the fit of an earlier pipeline, kept with
``--keep-weights``: a refit with today's pipeline lowered BC5CDR dev CID F1
(0.3863 -> 0.3808, ``medkg eval extraction`` with the relation model on) while
its out-of-fold figures barely moved; their calibration is this procedure's.

The builtin pipeline (bundled NER + lexicon + the default vocabulary) runs over each
training abstract exactly as it would at inference. Every co-occurring concept
pair of a head's groups is a candidate for that head, labelled positive when it
maps to a gold pair of the head's relation types. A head learns only from the
files that annotate its types: BC5CDR annotates chemical-induced disease (CID)
alone, so its documents teach the adverse-effect head and no other; BioRED
annotates every head. Per head, the regularisation and the threshold are the
ones with the best pair F1 over out-of-fold predictions (five folds by
document; gold pairs without a candidate count as misses); the head is then
fitted on every document; a head below ``--min-f1`` is left out. Fixed seed;
the development splits are never read.

Confidence is calibrated on the same out-of-fold predictions: per head, a
logistic map of the log-odds (Platt scaling), so that a relation the model
asserts with confidence 0.8 is right about eight times in ten on data it was not
fitted on. The patterns (``extraction/relations.py``) learn nothing, so their
confidence is their measured precision on the training splits, judged by
``medkg.evaluation.judging`` (written to ``patterns.json`` beside the model); a
pattern judged fewer than ``MIN_JUDGED`` times keeps its prior and is listed as
uncalibrated.
"""

from __future__ import annotations

import argparse
import json
import math
import pickle
import random
import sys
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
BIORED_TYPES = frozenset({"Association", "Positive_Correlation", "Negative_Correlation",
                          "Bind", "Cotreatment", "Drug_Interaction", "Comparison",
                          "Conversion"})
# PubTator entity types -> semantic groups (BC5CDR and BioRED names).
GOLD_GROUPS = {"Chemical": "CHEM", "ChemicalEntity": "CHEM", "Disease": "DISO",
               "DiseaseOrPhenotypicFeature": "DISO", "GeneOrGeneProduct": "GENE"}


@dataclass(frozen=True)
class HeadSpec:
    name: str
    predicate: str
    groups: tuple[str, str]
    types: frozenset[str]  # gold relation types that make a pair positive


HEADS = (
    # BioRED's positive correlations of a chemical and a disease are not all adverse
    # effects; learned from them too, the head scored 0.389 on BC5CDR dev, from
    # BC5CDR's CID alone 0.406 (cached extractions, same features and C).
    HeadSpec("adverse", "has_adverse_effect", ("CHEM", "DISO"), frozenset({"CID"})),
    HeadSpec("treats", "treats", ("CHEM", "DISO"), frozenset({"Negative_Correlation"})),
    HeadSpec("chemical_disease", "associated_with", ("CHEM", "DISO"),
             frozenset({"Association"})),
    HeadSpec("gene_disease", "associated_with", ("GENE", "DISO"), BIORED_TYPES),
    HeadSpec("chemical_gene", "interacts_with", ("CHEM", "GENE"), BIORED_TYPES),
    HeadSpec("chemical_chemical", "interacts_with", ("CHEM", "CHEM"), BIORED_TYPES),
    HeadSpec("gene_gene", "interacts_with", ("GENE", "GENE"), BIORED_TYPES),
)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--train", type=Path, action="append", required=True)
    parser.add_argument("--out", type=Path,
                        default=REPO / "medkg" / "models" / "relations" / "relations.json")
    parser.add_argument("--patterns-out", type=Path,
                        default=REPO / "medkg" / "models" / "relations" / "patterns.json")
    parser.add_argument("--cache", type=Path,
                        help="a pickle of the training extractions (read when present, "
                        "else written): reruns skip the pipeline")
    parser.add_argument("--keep-weights", type=Path,
                        help="a model file whose heads' weights and thresholds are kept: "
                        "only their calibration is fitted (on this run's out-of-fold "
                        "predictions, same procedure), e.g. when a refit would lower a dev "
                        "figure the model is guarded by")
    parser.add_argument("--seed", type=int, default=13)
    parser.add_argument("--min-f1", type=float, default=0.2,
                        help="a head whose out-of-fold pair F1 is lower is left out: it "
                        "would add more wrong relations than right ones")
    args = parser.parse_args()
    for path in args.train:
        if not path.exists():
            sys.exit(f"skip: {path} not found (the ../shared checkout is absent)")

    from sklearn.feature_extraction import DictVectorizer
    from sklearn.linear_model import LogisticRegression

    from medkg.evaluation.extraction import _gold_ids
    from medkg.evaluation.pubtator import read_pubtator
    from medkg.extraction.extract import extract
    from medkg.extraction.lexicon import resolve_lexicon
    from medkg.extraction.nlp import build_pipeline, resolve_ner_models
    from medkg.extraction.relation_model import Head, RelationModel, pair_features
    from medkg.model import Chunk, Document, Layer, Predicate
    from medkg.ontology.index import ConceptIndex
    from medkg.ontology.loaders import load_default

    index = ConceptIndex(load_default().concepts)
    nlp = build_pipeline(index, 3, resolve_ner_models("bundled"), resolve_lexicon("bundled"))
    docs = []  # (file types, PubTator document)
    for path in args.train:
        pubs = list(read_pubtator(path))
        types = frozenset(r.type for p in pubs for r in p.relations)
        docs += [(types, p) for p in pubs]
    random.Random(args.seed).shuffle(docs)
    if args.cache and args.cache.exists():
        extractions = pickle.loads(args.cache.read_bytes())
    else:
        extractions = []
        for n, (_, pub) in enumerate(docs):
            document = Document.create(layer=Layer.LITERATURE, title=pub.title,
                                       source=pub.pmid, media_type="text/plain", text=pub.text)
            [ex] = list(extract([Chunk.create(document, 0, 0, len(pub.text))], nlp))
            extractions.append(ex)
            if n % 100 == 0:
                print(f"  extracted {n}/{len(docs)}", file=sys.stderr)
        if args.cache:
            args.cache.write_bytes(pickle.dumps(extractions))
    write_pattern_calibration(args.patterns_out, docs, extractions, index)

    heads = []
    for spec in HEADS:
        rows: list[tuple[int, dict[str, float], bool]] = []
        gold_total = 0
        for n, ((types, pub), ex) in enumerate(zip(docs, extractions, strict=True)):
            if not types & spec.types:
                continue  # this file does not annotate the head's relations
            group_of = {i: GOLD_GROUPS.get(m.type) for m in pub.mentions for i in m.ids}
            gold = {frozenset((r.first, r.second)) for r in pub.relations
                    if r.type in spec.types
                    and sorted((group_of.get(r.first), group_of.get(r.second)), key=str)
                    == sorted(spec.groups)}
            gold_total += len(gold)
            for pair, features in pair_features(ex, index.ancestors, spec.groups).items():
                a, b = index.get(pair.head), index.get(pair.tail)
                label = bool(a and b and any(frozenset((x, y)) in gold
                                             for x in _gold_ids(a) for y in _gold_ids(b)))
                rows.append((n, features, label))
        labels = [y for _, _, y in rows]
        if sum(labels) < 10:
            print(f"{spec.name}: {sum(labels)} positive pairs, too few; head left out")
            continue
        best = (-1.0, 0.5, 1.0)  # (F1, threshold, C)
        oof: dict[float, list[float]] = {}
        for c in (0.03, 0.1, 0.3):
            probs = [0.0] * len(rows)
            for k in range(5):
                fit = [i for i, r in enumerate(rows) if r[0] % 5 != k]
                held = [i for i, r in enumerate(rows) if r[0] % 5 == k]
                vec = DictVectorizer()
                clf = LogisticRegression(C=c, max_iter=3000, random_state=args.seed)
                clf.fit(vec.fit_transform([rows[i][1] for i in fit]), [labels[i] for i in fit])
                held_p = clf.predict_proba(vec.transform([rows[i][1] for i in held]))[:, 1]
                for i, p in zip(held, held_p, strict=True):
                    probs[i] = float(p)
            oof[c] = probs
            for t in [i / 100 for i in range(6, 91, 2)]:
                tp = sum(1 for p, y in zip(probs, labels, strict=True) if p >= t and y)
                fp = sum(1 for p, y in zip(probs, labels, strict=True) if p >= t and not y)
                prec = tp / (tp + fp) if tp + fp else 0.0
                rec = tp / gold_total if gold_total else 0.0
                f1 = 2 * prec * rec / (prec + rec) if prec + rec else 0.0
                best = max(best, (f1, t, c))
        f1, threshold, c = best
        if f1 < args.min_f1:
            print(f"{spec.name}: out-of-fold pair F1 {f1:.3f} < {args.min_f1}; head left out")
            continue
        scale, shift = platt(oof[c], labels, args.seed)
        if args.keep_weights is not None:
            kept = {h.name: h for h in RelationModel.load(args.keep_weights).heads}
            if spec.name not in kept:
                print(f"{spec.name}: not in {args.keep_weights}; left out")
                continue
            old = kept[spec.name]
            print(f"{spec.name}: weights kept from {args.keep_weights.name}; calibration "
                  f"{scale:.3f} * logit + {shift:.3f} (out-of-fold, C {c})")
            heads.append(Head(old.name, old.predicate, old.groups, old.weights, old.bias,
                              old.threshold, f"{old.about}; calibration fitted on the "
                              f"out-of-fold probabilities of a refit (C {c}, out-of-fold "
                              f"pair F1 {f1:.3f})", (scale, shift)))
            continue
        vec = DictVectorizer()
        clf = LogisticRegression(C=c, max_iter=3000, random_state=args.seed)
        clf.fit(vec.fit_transform([f for _, f, _ in rows]), labels)
        weights = {name: round(float(w), 5)
                   for name, w in zip(vec.get_feature_names_out(), clf.coef_[0], strict=True)
                   if abs(w) >= 1e-4}
        about = (f"{len(rows)} candidate pairs ({sum(labels)} positive) of {gold_total} gold "
                 f"pairs; C {c}; out-of-fold pair F1 {f1:.3f}; calibration fitted on the "
                 "out-of-fold probabilities")
        print(f"{spec.name}: {about} at threshold {threshold:.2f}; "
              f"calibration {scale:.3f} * logit + {shift:.3f}")
        heads.append(Head(spec.name, Predicate(spec.predicate), spec.groups, weights,
                          round(float(clf.intercept_[0]), 5), threshold, about,
                          (scale, shift)))
    names = ", ".join(p.name for p in args.train)
    about = (RelationModel.load(args.keep_weights).about if args.keep_weights is not None
             else f"logistic regression heads trained on {names} ({len(docs)} abstracts, "
             f"seed {args.seed})")
    RelationModel(heads, about=about).save(args.out)
    print(f"model written to {args.out}")


def platt(probs: list[float], labels: list[bool], seed: int) -> tuple[float, float]:
    """(a, b) of p' = sigmoid(a * logit(p) + b), fitted on out-of-fold probabilities."""
    from sklearn.linear_model import LogisticRegression

    x = [[math.log(max(p, 1e-6) / max(1 - p, 1e-6))] for p in probs]
    fit = LogisticRegression(C=1e6, max_iter=1000, random_state=seed).fit(x, labels)
    return round(float(fit.coef_[0][0]), 5), round(float(fit.intercept_[0]), 5)


def write_pattern_calibration(path: Path, docs: list, extractions: list, index: object
                              ) -> None:
    """Each pattern's measured precision on the training splits (see the module text)."""
    from medkg.evaluation.extraction import _gold_ids
    from medkg.evaluation.judging import gold_types, is_right, judgeable
    from medkg.extraction.relations import MIN_JUDGED, PATTERNS

    judged: Counter[str] = Counter()
    right: Counter[str] = Counter()
    for (types, pub), ex in zip(docs, extractions, strict=True):
        pairs = gold_types((r.type, r.first, r.second) for r in pub.relations)
        for rel in ex.relations:
            if not rel.pattern.startswith("pattern:") or rel.head.qualifiers.negated:
                continue
            if not judgeable(rel.predicate, (rel.head.group, rel.tail.group), types):
                continue
            head, tail = index.get(rel.head.concept_id), index.get(rel.tail.concept_id)
            found: set[str] = set()
            if head is not None and tail is not None:
                for a in _gold_ids(head):
                    for b in _gold_ids(tail):
                        found |= pairs.get(frozenset((a, b)), set())
            name = rel.pattern.removeprefix("pattern:")
            judged[name] += 1
            right[name] += is_right(rel.predicate, found)
    out = {}
    for p in PATTERNS:
        n, k = judged[p.name], right[p.name]
        entry: dict[str, object] = {"predicate": p.predicate.value, "judged": n, "right": k,
                                    "prior": p.confidence}
        if n >= MIN_JUDGED:
            entry["confidence"] = round((k + 1) / (n + 2), 3)  # Beta(1, 1) smoothed
        out[p.name] = entry
        print(f"pattern {p.name}: {k}/{n} right"
              + (f" -> {entry['confidence']}" if "confidence" in entry
                 else f" (uncalibrated, prior {p.confidence})"))
    path.write_text(json.dumps({
        "about": "measured precision of each pattern on the training splits "
                 "(training/train_relations.py); patterns without 'confidence' were judged "
                 f"fewer than {MIN_JUDGED} times and keep their prior",
        "patterns": out}, indent=1, sort_keys=True), encoding="utf-8")


if __name__ == "__main__":
    main()
