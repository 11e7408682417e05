"""Train the chemical -> disease relation model (medkg/models/relations/cid.json).

    python training/train_relations.py \
        --train ../shared/data/eval/bc5cdr/CDR_TrainingSet.PubTator.txt

The builtin pipeline (bundled NER + the default vocabulary) runs over each
training abstract exactly as it would at inference; every co-occurring
(chemical, disease) concept pair is a candidate, labelled positive when it
maps to a gold CID pair. A logistic regression is fitted on nine tenths of the
documents; the threshold is the one with the best pair F1 on the held-out
tenth (gold pairs without a candidate count as misses). Fixed seed; the
development split is never read.
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
    from medkg.construction.nlp import BUNDLED_NER, build_pipeline
    from medkg.construction.relation_model import RelationModel, pair_features
    from medkg.evaluation.extraction import _gold_ids
    from medkg.evaluation.pubtator import read_pubtator
    from medkg.model import Chunk, Document, Layer
    from medkg.ontology.index import ConceptIndex
    from medkg.ontology.loaders import load_default

    index = ConceptIndex(load_default().concepts)
    nlp = build_pipeline(index, 3, BUNDLED_NER)
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
        for pair, features in pair_features(ex).items():
            chem, dis = index.get(pair.chemical), index.get(pair.disease)
            label = bool(chem and dis and any(frozenset((a, b)) in gold
                                              for a in _gold_ids(chem) for b in _gold_ids(dis)))
            rows.append((n, features, label))
    cut = len(docs) // 10
    train = [r for r in rows if r[0] >= cut]
    held = [r for r in rows if r[0] < cut]
    vec = DictVectorizer()
    x = vec.fit_transform([f for _, f, _ in train])
    clf = LogisticRegression(C=0.5, max_iter=2000, random_state=args.seed)
    clf.fit(x, [y for _, _, y in train])
    probs = clf.predict_proba(vec.transform([f for _, f, _ in held]))[:, 1]
    gold_held = sum(gold_counts[:cut])
    best = (0.0, 0.5)
    for t in [i / 100 for i in range(10, 91, 2)]:
        tp = sum(1 for p, (_, _, y) in zip(probs, held, strict=True) if p >= t and y)
        fp = sum(1 for p, (_, _, y) in zip(probs, held, strict=True) if p >= t and not y)
        prec = tp / (tp + fp) if tp + fp else 0.0
        rec = tp / gold_held if gold_held else 0.0
        f1 = 2 * prec * rec / (prec + rec) if prec + rec else 0.0
        best = max(best, (f1, t))
    print(f"{len(train)} training pairs ({sum(y for *_, y in train)} positive); held-out pair "
          f"F1 {best[0]:.3f} at threshold {best[1]:.2f}")
    weights = {name: round(float(w), 5) for name, w in zip(vec.get_feature_names_out(),
                                                             clf.coef_[0], strict=True)}
    RelationModel(weights, round(float(clf.intercept_[0]), 5), best[1],
                  about=f"logistic regression, BC5CDR training set ({len(docs)} abstracts, "
                  f"seed {args.seed}); held-out pair F1 {best[0]:.3f}").save(args.out)
    print(f"model written to {args.out}")


if __name__ == "__main__":
    main()
