"""Train the builtin engine's NER models from PubTator files.

    # chemicals and diseases (medkg/models/ner)
    python training/train_ner.py --train ../shared/data/eval/bc5cdr/CDR_TrainingSet.PubTator.txt \
        --train ../shared/data/eval/biored/Train.PubTator --out medkg/models/ner
    # genes and organisms (medkg/models/ner-genes): BioRED only, since BC5CDR
    # leaves genes unannotated and would teach the model they are not entities
    python training/train_ner.py --train ../shared/data/eval/biored/Train.PubTator \
        --labels gene=GENE,organism=LIVB --out medkg/models/ner-genes

Reproducible: fixed seed, a generated spaCy config (CPU, efficiency), and a
held-out tenth of the training documents as the development set for model
selection; the benchmark dev splits are never seen. Labels are semantic
groups: CHEM (chemicals, drugs), DISO (diseases, phenotypes), GENE (genes and
gene products), LIVB (organisms).
"""

from __future__ import annotations

import argparse
import random
import shutil
import sys
import tempfile
from pathlib import Path

LABELS = {"chemical": "CHEM", "disease": "DISO"}


def _parse_labels(spec: str) -> dict[str, str]:
    """``gene=GENE,organism=LIVB`` -> {word in the gold type: label}."""
    pairs = [item.split("=", 1) for item in spec.split(",") if item.strip()]
    return {word.strip().lower(): label.strip() for word, label in pairs}


def _label(gold_type: str, labels: dict[str, str]) -> str | None:
    low = gold_type.lower()
    return next((label for word, label in labels.items() if word in low), None)


def to_docbin(paths: list[Path], out_train: Path, out_dev: Path, seed: int,
              labels: dict[str, str] = LABELS) -> tuple[int, int]:
    import spacy
    from spacy.tokens import DocBin
    from spacy.util import filter_spans

    from medkg.evaluation.pubtator import read_pubtator

    nlp = spacy.blank("en")
    docs = []
    for path in paths:
        for pub in read_pubtator(path):
            doc = nlp.make_doc(pub.text)
            spans = []
            for m in pub.mentions:
                label = _label(m.type, labels)
                if label is None:
                    continue
                span = doc.char_span(m.start, m.end, label=label, alignment_mode="expand")
                if span is not None:
                    spans.append(span)
            doc.ents = filter_spans(spans)
            docs.append(doc)
    random.Random(seed).shuffle(docs)
    cut = max(1, len(docs) // 10)
    DocBin(docs=docs[cut:]).to_disk(out_train)
    DocBin(docs=docs[:cut]).to_disk(out_dev)
    return len(docs) - cut, cut


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--train", type=Path, action="append", required=True)
    parser.add_argument("--out", type=Path, default=Path("medkg/models/ner"))
    parser.add_argument("--seed", type=int, default=13)
    parser.add_argument("--max-epochs", type=int, default=30)
    parser.add_argument("--width", type=int, default=96, help="tok2vec width")
    parser.add_argument("--depth", type=int, default=4, help="tok2vec CNN depth")
    parser.add_argument("--labels", default="chemical=CHEM,disease=DISO",
                        help="gold type word=label pairs; other gold types are ignored")
    args = parser.parse_args()
    for path in args.train:
        if not path.exists():
            sys.exit(f"skip: {path} not found (the ../shared checkout is absent)")
    from spacy.cli.init_config import fill_config, init_config
    from spacy.cli.train import train

    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        n_train, n_dev = to_docbin(args.train, work / "train.spacy", work / "dev.spacy", args.seed,
                                   _parse_labels(args.labels))
        print(f"{n_train} training documents, {n_dev} held out for model selection")
        config = init_config(lang="en", pipeline=["ner"], optimize="efficiency", gpu=False)
        config["system"]["seed"] = args.seed
        config["training"]["max_epochs"] = args.max_epochs
        config["training"]["patience"] = 1600
        config["paths"]["train"] = str(work / "train.spacy")
        config["paths"]["dev"] = str(work / "dev.spacy")
        encode = config["components"]["tok2vec"]["model"]["encode"]
        encode["width"], encode["depth"] = args.width, args.depth
        config.to_disk(work / "base.cfg")
        fill_config(work / "config.cfg", work / "base.cfg")
        train(work / "config.cfg", work / "output", use_gpu=-1)
        if args.out.exists():
            shutil.rmtree(args.out)
        shutil.copytree(work / "output" / "model-best", args.out)
    print(f"model written to {args.out}")


if __name__ == "__main__":
    main()
