"""Train the SAC-KG pruner (medkg/models/pruner/pruner.json) without manual labels.

    python training/train_pruner.py --vocab ../shared/data/vocab

Labels come from the relations of open vocabulary graphs, as SAC-KG does with
an open KG: a concept that is the head of some relation is "grow", one that
only ever appears as a tail is "prune". Relations read:

- Disease Ontology ``disease-symptom.tsv`` (disease -> symptom);
- Disease Ontology logical axioms ``DO-subClassOf-anonymous.tsv``
  (disease -> 'located in' anatomy, 'has material basis in', 'transmitted by',
  'has allergic trigger' chemical, ...);
- HPO annotations ``phenotype.hpoa.gz`` (rare disease -> phenotype), at most
  ``--per-source`` diseases;
- the drug list of ``drug-named-entity-recognition`` (an installed dependency):
  a drug with MeSH tree numbers heads a pharmacological-class relation.

Features: the name's embedding (the bundled all-MiniLM-L6-v2) and its semantic
group (looked up by name in the default vocabulary, else the group the
relation implies). A fifth of the names, chosen by a hash of the name, is held
out; the report gives held-out accuracy and grow precision/recall. Fixed seed.
"""

from __future__ import annotations

import argparse
import bz2
import csv
import gzip
import hashlib
import json
import pickle
import random
import re
import sys
from collections import defaultdict
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
_AXIOM = re.compile(r"'([^']+)' some (?:'([^']+)'|([\w-]+))")
# Tail groups the Disease Ontology's axiom relations imply, when the name is not
# in the vocabulary.
AXIOM_GROUPS = {"located in": "ANAT", "has symptom": "DISO", "transmitted by": "LIVB",
                "has infectious agent": "LIVB", "has allergic trigger": "CHEM",
                "realized by": "PROC", "has material basis in": "GENE"}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--vocab", type=Path, required=True, help="../shared/data/vocab")
    parser.add_argument("--out", type=Path,
                        default=REPO / "medkg" / "models" / "pruner" / "pruner.json")
    parser.add_argument("--per-source", type=int, default=3000)
    parser.add_argument("--seed", type=int, default=13)
    args = parser.parse_args()
    doid = args.vocab / "doid"
    if not doid.exists():
        sys.exit(f"skip: {doid} not found (the ../shared checkout is absent)")

    import numpy as np
    from sklearn.linear_model import LogisticRegression

    from medkg.config import EmbeddingConfig
    from medkg.growth.pruner import features
    from medkg.linking.embeddings import SentenceTransformerEmbedder
    from medkg.ontology.index import ConceptIndex, normalize_term
    from medkg.ontology.loaders import load_default

    rng = random.Random(args.seed)
    heads: dict[str, str] = {}  # name -> group hint
    tails: dict[str, str] = {}

    def head(name: str, group: str) -> None:
        heads.setdefault(name.strip(), group)

    def tail(name: str, group: str) -> None:
        tails.setdefault(name.strip(), group)

    with (doid / "disease-symptom.tsv").open(encoding="utf-8") as f:
        for row in csv.DictReader(f, delimiter="\t"):
            head(row["disease_label"], "DISO")
            tail(row["symptom_label"], "DISO")
    with (doid / "DO-subClassOf-anonymous.tsv").open(encoding="utf-8") as f:
        for row in csv.DictReader(f, delimiter="\t"):
            found = _AXIOM.findall(row["SubClass Of [ANON]"])
            if found:
                head(row["LABEL"], "DISO")
            for relation, quoted, bare in found:
                tail(quoted or bare, AXIOM_GROUPS.get(relation, "CONC"))
    hpo_heads: dict[str, set[str]] = defaultdict(set)
    with gzip.open(args.vocab / "hpo" / "phenotype.hpoa.gz", "rt", encoding="utf-8") as f:
        for line in f:
            if line.startswith("#") or line.startswith("database_id"):
                continue
            cols = line.rstrip("\n").split("\t")
            if len(cols) > 10 and cols[10] == "P":
                hpo_heads[cols[1]].add(cols[3])
    hp_names = _obo_names(args.vocab / "hpo" / "hp.obo")
    for disease in rng.sample(sorted(hpo_heads), min(args.per_source, len(hpo_heads))):
        head(disease, "DISO")
        for hp in hpo_heads[disease]:
            if hp in hp_names:
                tail(hp_names[hp], "DISO")
    import importlib.util

    spec = importlib.util.find_spec("drug_named_entity_recognition")
    assert spec is not None and spec.origin is not None
    with bz2.open(Path(spec.origin).parent / "drug_ner_dictionary.pkl.bz2") as fb:
        drugs = pickle.load(fb)["drug_canonical_to_data"]
    with_class = sorted(info["name"] for info in drugs.values()
                        if info.get("mesh_tree") and info.get("name"))
    for name in rng.sample(with_class, min(args.per_source, len(with_class))):
        head(name, "CHEM")

    index = ConceptIndex(load_default().concepts)
    names: dict[str, tuple[str, str, int]] = {}  # key -> (name, group, label)
    for pool, label in ((tails, 0), (heads, 1)):  # heads overwrite: head anywhere = grow
        for name, hint in pool.items():
            key = normalize_term(name)
            if not key:
                continue
            found = index.lookup(name)
            group = (found[0].semantic_group if found and found[0].semantic_group else hint)
            names[key] = (name, group, label)
    rows = sorted(names.items())
    held = [hashlib.sha256(k.encode()).digest()[0] < 52 for k, _ in rows]  # ~20%
    groups = sorted({g for _, (_, g, _) in rows})
    embedder = SentenceTransformerEmbedder(EmbeddingConfig())
    vectors = embedder.embed([n for _, (n, _, _) in rows])
    x = features(vectors, [g for _, (_, g, _) in rows], groups)
    y = np.array([lab for _, (_, _, lab) in rows])
    test = np.array(held)
    model = LogisticRegression(C=1.0, max_iter=2000, class_weight="balanced")
    model.fit(x[~test], y[~test])
    pred = model.predict(x[test])
    truth = y[test]
    tp = int(((pred == 1) & (truth == 1)).sum())
    report = {
        "names": len(rows), "grow": int(y.sum()), "prune": int(len(y) - y.sum()),
        "held_out": int(test.sum()),
        "held_out_accuracy": round(float((pred == truth).mean()), 4),
        "grow_precision": round(tp / max(1, int((pred == 1).sum())), 4),
        "grow_recall": round(tp / max(1, int((truth == 1).sum())), 4),
        "prune_share_of_held_out": round(float((truth == 0).mean()), 4),
    }
    model.fit(x, y)  # the shipped model sees every name
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps({
        "embedding": "all-MiniLM-L6-v2", "groups": groups,
        "weights": [round(float(w), 6) for w in model.coef_[0]],
        "bias": round(float(model.intercept_[0]), 6), "threshold": 0.5,
        "trained_on": "Disease Ontology disease-symptom + logical axioms, HPO annotations, "
                      "drug-named-entity-recognition drug classes; head = grow, tail-only = prune",
        "seed": args.seed, "report": report,
    }) + "\n", encoding="utf-8")
    print(json.dumps(report, indent=2))


def _obo_names(path: Path) -> dict[str, str]:
    out: dict[str, str] = {}
    current = None
    with path.open(encoding="utf-8") as f:
        for line in f:
            if line.startswith("id: "):
                current = line[4:].strip()
            elif line.startswith("name: ") and current:
                out[current] = line[6:].strip()
    return out


if __name__ == "__main__":
    main()
