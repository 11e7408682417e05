"""How far asserted relations can be trusted, before and after, in one run.

    python benchmarks/bench_calibration.py --baseline-code /tmp/old [--min-precision 0.8]

For each dev split (BC5CDR, BioRED) and each code tree (the baseline, e.g. a
worktree of an older commit, and this checkout), the builtin pipeline runs over
every abstract with the patterns alone (the default) and with the bundled
relation model. Each asserted relation (one per document, predicate and concept
pair; negated ones left out) is judged by ``medkg.evaluation.judging``. Printed
per predicate family:

- asserted, judged, precision and recall of what is asserted;
- ECE: expected calibration error of the confidences (10 bins);
- shown: what an answer presents as a fact (confidence >= ``--min-precision``;
  the baseline presents every statement), its precision and recall;
- confusion: a therapy where the gold says the chemical raises the disease, or
  a harm where it lowers it, as a share of judged therapy and harm relations
  whose pair is a gold pair.

The pipeline runs in a child process per code tree, so the baseline is the
older code as it was; the scoring here is the same for both. Needs
``../shared/data/eval``; exits with a message where it is absent.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from collections import defaultdict
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
DATA = REPO.parent / "shared" / "data" / "eval"
SPLITS = {"BC5CDR dev": DATA / "bc5cdr" / "CDR_DevelopmentSet.PubTator.txt",
          "BioRED dev": DATA / "biored" / "Dev.PubTator"}
GOLD_GROUPS = {"Chemical": "CHEM", "ChemicalEntity": "CHEM", "Disease": "DISO",
               "DiseaseOrPhenotypicFeature": "DISO", "GeneOrGeneProduct": "GENE"}

# Runs in the child, against whichever medkg its PYTHONPATH holds: only APIs that
# older trees have too.
CHILD = r"""
import json, sys
from pathlib import Path
from medkg.extraction.extract import extract
from medkg.extraction.lexicon import resolve_lexicon
from medkg.extraction.nlp import build_pipeline, resolve_ner_models
from medkg.extraction.relation_model import resolve_relation_model
from medkg.evaluation.extraction import _gold_ids
from medkg.evaluation.pubtator import read_pubtator
from medkg.model import Chunk, Document, Layer
from medkg.ontology.index import ConceptIndex
from medkg.ontology.loaders import load_default

index = ConceptIndex(load_default().concepts)
nlp = build_pipeline(index, 3, resolve_ner_models("bundled"), resolve_lexicon("bundled"))
model = resolve_relation_model("bundled", index.ancestors)
for path in sys.argv[1:]:
    for pub in read_pubtator(Path(path)):
        doc = Document.create(layer=Layer.LITERATURE, title=pub.title, source=pub.pmid,
                              media_type="text/plain", text=pub.text)
        [ex] = list(extract([Chunk.create(doc, 0, 0, len(pub.text))], nlp,
                            relate=model.relations))
        for r in ex.relations:
            if r.head.qualifiers.negated or r.tail.qualifiers.negated:
                continue
            h, t = index.get(r.head.concept_id), index.get(r.tail.concept_id)
            print(json.dumps({
                "file": path, "pmid": pub.pmid, "predicate": r.predicate.value,
                "method": r.pattern, "confidence": r.confidence,
                "groups": [r.head.group, r.tail.group],
                "pair": [r.head.concept_id, r.tail.concept_id],
                "head_ids": sorted(_gold_ids(h)) if h else [],
                "tail_ids": sorted(_gold_ids(t)) if t else []}))
"""


def predictions(code: Path) -> list[dict]:
    env = {**os.environ, "PYTHONPATH": str(code), "HF_HUB_OFFLINE": "1"}
    # cwd is the code root too: ``python -c`` puts the working directory first on
    # the path, before PYTHONPATH, so run elsewhere it would import that medkg
    out = subprocess.run([sys.executable, "-c", CHILD, *map(str, SPLITS.values())],
                         env=env, cwd=code, capture_output=True, text=True, check=False)
    if out.returncode != 0:
        sys.exit(f"the pipeline of {code} failed:\n{out.stderr[-3000:]}")
    return [json.loads(line) for line in out.stdout.splitlines() if line.startswith("{")]


def score(rows: list[dict], gold: dict, min_precision: float | None) -> dict[str, dict]:
    """Per predicate family (and all judged), the figures of the module text."""
    from medkg.evaluation.judging import (
        ANY_PAIR,
        HARM,
        RIGHT_TYPES,
        THERAPY,
        confusion,
        expected_calibration_error,
        is_right,
        judgeable,
    )
    from medkg.model import Predicate

    families: dict[str, frozenset[Predicate] | None] = {
        "therapy": THERAPY, "harm": HARM, "association": ANY_PAIR}
    # ... and each predicate of them on its own (its recall against its family's gold)
    families |= {f"  {p.value}": frozenset({p})
                 for f in (THERAPY, HARM, ANY_PAIR) for p in sorted(f)}
    families["all judged"] = None
    best: dict[tuple, dict] = {}
    for r in rows:
        key = (r["file"], r["pmid"], r["predicate"], *sorted(r["pair"]))
        if key not in best or r["confidence"] > best[key]["confidence"]:
            best[key] = r
    out: dict[str, dict] = {}
    for name, family in families.items():
        judged: list[tuple[float, bool]] = []
        asserted = confused = with_gold = 0
        found: set[tuple] = set()
        shown_found: set[tuple] = set()
        shown: list[bool] = []
        for r in best.values():
            predicate = Predicate(r["predicate"])
            if family is not None and predicate not in family:
                continue
            asserted += 1
            file_gold = gold[r["file"]]
            if not judgeable(predicate, tuple(r["groups"]), file_gold["types"]):
                continue
            types: set[str] = set()
            pair = None
            for a in r["head_ids"]:
                for b in r["tail_ids"]:
                    got = file_gold["pairs"].get((r["pmid"], frozenset((a, b))))
                    if got:
                        types |= got
                        pair = (r["pmid"], frozenset((a, b)))
            right = is_right(predicate, types)
            judged.append((r["confidence"], right))
            if right and pair:
                found.add(pair)
            if types and predicate in THERAPY | HARM:
                with_gold += 1
                confused += confusion(predicate, types)
            if min_precision is None or r["confidence"] >= min_precision:
                shown.append(right)
                if right and pair:
                    shown_found.add(pair)
        total = _gold_total(gold, next((f for f in (THERAPY, HARM, ANY_PAIR)
                                        if family is not None and family <= f), None),
                            RIGHT_TYPES)
        n = len(judged)
        out[name] = {
            "asserted": asserted, "judged": n,
            "precision": _ratio(sum(y for _, y in judged), n),
            "recall": _ratio(len(found), total),
            "ece": expected_calibration_error(judged),
            "shown": len(shown), "shown_precision": _ratio(sum(shown), len(shown)),
            "shown_recall": _ratio(len(shown_found), total),
            "confusion": (_ratio(confused, with_gold)
                          if family is None or family & (THERAPY | HARM) else None)}
    return out


def _gold_total(gold: dict, family, right_types: dict) -> int:
    """Gold pairs a family could find: for therapy and harm, chemical-disease pairs
    of the types that make it right; for associations and all, every gold pair."""
    total = 0
    for file_gold in gold.values():
        for types, groups in file_gold["by_pair"].values():
            if family in right_types:
                total += bool(types & right_types[family]) and groups == {"CHEM", "DISO"}
            else:
                total += 1
    return total


def _ratio(a: int, b: int) -> float | None:
    return round(a / b, 3) if b else None


def read_gold() -> dict:
    from medkg.evaluation.pubtator import read_pubtator

    gold = {}
    for path in SPLITS.values():
        pairs: dict[tuple, set[str]] = defaultdict(set)
        by_pair: dict[tuple, tuple[set[str], frozenset[str]]] = {}
        types: set[str] = set()
        for pub in read_pubtator(path):
            group_of = {i: GOLD_GROUPS.get(m.type, m.type) for m in pub.mentions for i in m.ids}
            for r in pub.relations:
                key = (pub.pmid, frozenset((r.first, r.second)))
                pairs[key].add(r.type)
                types.add(r.type)
                groups = frozenset((group_of.get(r.first, "?"), group_of.get(r.second, "?")))
                by_pair[key] = (pairs[key], groups)
        gold[str(path)] = {"pairs": dict(pairs), "by_pair": by_pair,
                           "types": frozenset(types)}
    return gold


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--baseline-code", type=Path,
                        help="a checkout of the code to compare against (e.g. a worktree)")
    parser.add_argument("--min-precision", type=float, default=None,
                        help="the facts.min_precision to apply (default: the setting's)")
    parser.add_argument("--json", type=Path, help="also write the figures here")
    args = parser.parse_args()
    missing = [str(p) for p in SPLITS.values() if not p.exists()]
    if missing:
        sys.exit(f"skip: {', '.join(missing)} not found (the ../shared checkout is absent)")
    from medkg.config import FactsConfig

    min_precision = (args.min_precision if args.min_precision is not None
                     else FactsConfig().min_precision)
    gold = read_gold()
    arms = [("this checkout", REPO, min_precision)]
    if args.baseline_code:
        arms.insert(0, (f"baseline {args.baseline_code}", args.baseline_code, None))
    results: dict = {}
    current: list[dict] = []
    for arm, code, gate in arms:
        rows = predictions(code)
        if code == REPO:
            current = rows
        for split, path in SPLITS.items():
            file_rows = [r for r in rows if r["file"] == str(path)]
            for setting, keep in (("patterns", lambda r: r["method"].startswith("pattern:")),
                                  ("patterns+model", lambda r: True)):
                chosen = [r for r in file_rows if keep(r)]
                results[f"{arm} | {split} | {setting}"] = score(
                    chosen, {str(path): gold[str(path)]}, gate)
    print(f"facts shown when confidence >= {min_precision} (the baseline shows every "
          "statement)\n")
    header = ("arm | split | relations", "family", "asserted", "judged", "P", "R", "ECE",
              "shown", "shown P", "shown R", "confusion")
    print(" | ".join(header))
    print("|".join("---" for _ in header))
    for key, families in results.items():
        for family, f in families.items():
            print(" | ".join(str(x) for x in (
                key, family, f["asserted"], f["judged"], f["precision"], f["recall"],
                f["ece"], f["shown"], f["shown_precision"], f["shown_recall"],
                f["confusion"] if f["confusion"] is not None else "-")))
    print("\nthis checkout, patterns+model, all judged families: what a bar would show")
    print("min_precision | split | shown | shown P | shown R")
    print("---|---|---|---|---")
    for bar in (0.5, 0.6, 0.7, 0.75, 0.8, 0.85, 0.9):
        for split, path in SPLITS.items():
            f = score([r for r in current if r["file"] == str(path)],
                      {str(path): gold[str(path)]}, bar)["all judged"]
            print(f"{bar} | {split} | {f['shown']} | {f['shown_precision']} | "
                  f"{f['shown_recall']}")
    if args.json:
        args.json.write_text(json.dumps(results, indent=1), encoding="utf-8")


if __name__ == "__main__":
    main()
