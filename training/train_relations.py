"""Train the chemical -> disease relation model (medkg/models/relations/cid.json).

    python training/train_relations.py \
        --train ../shared/data/eval/bc5cdr/CDR_TrainingSet.PubTator.txt

The builtin pipeline (bundled NER + lexicon + the default vocabulary) runs over each
training abstract exactly as it would at inference; every co-occurring
(chemical, disease) concept pair is a candidate, labelled positive when it
maps to a gold CID pair. The threshold is the one with the best pair F1 over
out-of-fold predictions (five folds by document; gold pairs without a
candidate count as misses); the model is then fitted on every document.
Fixed seed; the development split is never read.
"""

from __future__ import annotations

import argparse
import random
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--train", type=Path, required=True)
    parser.add_argument("--out", type=Path,
                        default=REPO / "medkg" / "models" / "relations" / "cid.json")
    parser.add_argument("--seed", type=int, default=13)
    args = parser.parse_args()
    if not args.train.exists():
        sys.exit(f"skip: {args.train} not found (the ../shared checkout is absent)")

    from sklearn.feature_extraction import DictVectorizer
    from sklearn.linear_model import LogisticRegression

    from medkg.construction.extraction import extract
    from medkg.construction.lexicon import resolve_lexicon
    from medkg.construction.nlp import BUNDLED_NER, build_pipeline
    from medkg.construction.relation_model import RelationModel, pair_features
    from medkg.evaluation.extraction import _gold_ids
    from medkg.evaluation.pubtator import read_pubtator
    from medkg.model import Chunk, Document, Layer
    from medkg.ontology.index import ConceptIndex
    from medkg.ontology.loaders import load_default

    index = ConceptIndex(load_default().concepts)
    nlp = build_pipeline(index, 3, BUNDLED_NER, resolve_lexicon("bundled"))
    docs = list(read_pubtator(args.train))
    random.Random(args.seed).shuffle(docs)
    rows: list[tuple[int, dict[str, float], bool]] = []  # (doc number, features, label)
    gold_counts: list[int] = []
    for n, pub in enumerate(docs):
        gold = {frozenset((r.first, r.second)) for r in pub.relations}
        gold_counts.append(len(gold))
        document = Document.create(layer=Layer.LITERATURE, title=pub.title, source=pub.pmid,
                                   media_type="text/plain", text=pub.text)
        [ex] = list(extract([Chunk.create(document, 0, 0, len(pub.text))], nlp))
        for pair, features in pair_features(ex, index.ancestors).items():
            chem, dis = index.get(pair.chemical), index.get(pair.disease)
            label = bool(chem and dis and any(frozenset((a, b)) in gold
                                              for a in _gold_ids(chem) for b in _gold_ids(dis)))
            rows.append((n, features, label))
    # Threshold from out-of-fold predictions (5 folds by document), then one model on all.
    folds = 5
    labels = [y for _, _, y in rows]
    probs = [0.0] * len(rows)
    for k in range(folds):
        fit = [i for i, r in enumerate(rows) if r[0] % folds != k]
        held = [i for i, r in enumerate(rows) if r[0] % folds == k]
        vec = DictVectorizer()
        clf = LogisticRegression(C=0.1, max_iter=3000, random_state=args.seed)
        clf.fit(vec.fit_transform([rows[i][1] for i in fit]), [labels[i] for i in fit])
        for i, p in zip(held, clf.predict_proba(vec.transform([rows[i][1] for i in held]))[:, 1],
                        strict=True):
            probs[i] = float(p)
    gold_total = sum(gold_counts)
    best = (0.0, 0.5)
    for t in [i / 100 for i in range(10, 91, 2)]:
        tp = sum(1 for p, y in zip(probs, labels, strict=True) if p >= t and y)
        fp = sum(1 for p, y in zip(probs, labels, strict=True) if p >= t and not y)
        prec = tp / (tp + fp) if tp + fp else 0.0
        rec = tp / gold_total if gold_total else 0.0
        f1 = 2 * prec * rec / (prec + rec) if prec + rec else 0.0
        best = max(best, (f1, t))
    vec = DictVectorizer()
    clf = LogisticRegression(C=0.1, max_iter=3000, random_state=args.seed)
    clf.fit(vec.fit_transform([f for _, f, _ in rows]), labels)
    print(f"{len(rows)} training pairs ({sum(labels)} positive); out-of-fold pair "
          f"F1 {best[0]:.3f} at threshold {best[1]:.2f}")
    weights = {name: round(float(w), 5) for name, w in zip(vec.get_feature_names_out(),
                                                             clf.coef_[0], strict=True)}
    RelationModel(weights, round(float(clf.intercept_[0]), 5), best[1],
                  about=f"logistic regression, BC5CDR training set ({len(docs)} abstracts, "
                  f"seed {args.seed}); out-of-fold pair F1 {best[0]:.3f}").save(args.out)
    print(f"model written to {args.out}")


if __name__ == "__main__":
    main()
