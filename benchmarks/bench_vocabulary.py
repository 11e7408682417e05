"""Vocabulary layer: load time and memory, lookup latency, and BC5CDR normalisation.

    python benchmarks/bench_vocabulary.py load      # HPO, Disease Ontology, MeSH labels
    python benchmarks/bench_vocabulary.py lookup    # exact and approximate, 10k queries
    python benchmarks/bench_vocabulary.py bc5cdr    # gold mentions -> MeSH top-1 / top-5

Load runs each source in a fresh subprocess (so peak memory is its own), three
times, and reports the median. Sources come from ../shared/data (the benchmark
skips with a message when it is absent) except the default vocabulary, which
installed packages ship.
"""

from __future__ import annotations

import argparse
import json
import random
import resource
import statistics
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
SHARED = REPO.parent / "shared" / "data"
SOURCES = {
    "HPO (hp.obo)": SHARED / "vocab" / "hpo" / "hp.obo",
    "Disease Ontology (full OBO)": SHARED / "vocab" / "doid" / "doid_2016-09-01_full.obo",
    "MeSH labels (CSV)": SHARED / "vocab" / "mesh" / "mesh_descriptor_labels_invenio.csv",
}
BC5CDR_DEV = SHARED / "eval" / "bc5cdr" / "CDR_DevelopmentSet.PubTator.txt"
MONDO = SHARED / "vocab" / "mondo"


def need(path: Path) -> Path:
    if not path.exists():
        sys.exit(f"skip: {path} not found (the ../shared checkout is absent)")
    return path


def _child_load(name: str) -> None:
    from medkg.ontology.index import ConceptIndex
    from medkg.ontology.loaders import load_default, load_file

    t0 = time.perf_counter()
    load = load_default() if name == "default" else load_file(SOURCES[name])
    t1 = time.perf_counter()
    index = ConceptIndex(load.concepts)
    index.approximate()
    t2 = time.perf_counter()
    print(json.dumps({"concepts": len(load.concepts), "parse_s": t1 - t0, "index_s": t2 - t1,
                      "rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}))


def bench_load(runs: int) -> None:
    for path in SOURCES.values():
        need(path)
    print(f"{'source':<32}{'concepts':>9}{'parse s':>9}{'index s':>9}{'peak MB':>9}"
          f"  (median of {runs})")
    for name in [*SOURCES, "default"]:
        rows = []
        for _ in range(runs):
            out = subprocess.run([sys.executable, __file__, "_child", name],
                                 check=True, capture_output=True, text=True)
            rows.append(json.loads(out.stdout.strip().splitlines()[-1]))
        med = {k: statistics.median(r[k] for r in rows) for k in rows[0]}
        label = "default (installed packages)" if name == "default" else name
        print(f"{label:<32}{int(med['concepts']):>9}{med['parse_s']:>9.2f}{med['index_s']:>9.2f}"
              f"{med['rss_mb']:>9.0f}")


def _all_concepts() -> list:
    from medkg.ontology.loaders import load_default, load_file
    from medkg.ontology.merge import merge_equivalents

    concepts = load_default().concepts
    concepts += load_file(need(SOURCES["Disease Ontology (full OBO)"])).concepts
    return merge_equivalents(concepts)


def _typo(text: str, rng: random.Random) -> str:
    if len(text) < 5:
        return text
    i = rng.randrange(1, len(text) - 1)
    return text[:i] + text[i + 1] + text[i] + text[i + 2:]  # swap two letters


def _percentiles(values: list[float]) -> tuple[float, float]:
    ordered = sorted(values)
    return ordered[len(ordered) // 2], ordered[int(len(ordered) * 0.95)]


def bench_lookup(n: int) -> None:
    from medkg.ontology.index import ConceptIndex

    concepts = _all_concepts()
    t0 = time.perf_counter()
    index = ConceptIndex(concepts)
    index.approximate()
    print(f"index over {len(index)} concepts built in {time.perf_counter() - t0:.1f} s")
    rng = random.Random(7)
    names = [c.name for c in rng.sample(concepts, n)]
    rows = []
    for label, queries, call in (
        ("exact lookup()", names, lambda q: index.lookup(q)),
        ("search() k=5, exact names", names, lambda q: index.search(q, 5)),
        ("search() k=5, one typo", [_typo(q, rng) for q in names], lambda q: index.search(q, 5)),
    ):
        times = []
        hits = 0
        for q, name in zip(queries, names, strict=True):
            s = time.perf_counter()
            result = call(q)
            times.append((time.perf_counter() - s) * 1000)
            first = result[0] if result else None
            found = first.concept.name if hasattr(first, "concept") else getattr(first, "name", "")
            hits += found == name
        p50, p95 = _percentiles(times)
        rows.append((label, p50, p95, hits / len(queries)))
    print(f"{'query kind':<30}{'p50 ms':>9}{'p95 ms':>9}{'top-1 = source':>16}  ({n} queries)")
    for label, p50, p95, acc in rows:
        print(f"{label:<30}{p50:>9.3f}{p95:>9.3f}{acc:>16.3f}")


def _umls_to_mesh() -> dict[str, set[str]]:
    """UMLS CUI -> MeSH ids through MONDO's exact-match mappings (for HPO's UMLS xrefs)."""
    def pairs(name: str, prefix: str) -> dict[str, set[str]]:
        out: dict[str, set[str]] = {}
        for line in need(MONDO / name).read_text(encoding="utf-8").splitlines():
            cells = line.split("\t")
            if len(cells) > 3 and cells[0].startswith("MONDO:") and cells[2].startswith(prefix):
                out.setdefault(cells[0], set()).add(cells[2].split(":", 1)[1])
        return out

    umls, mesh = pairs("mondo_exactmatch_umls.sssom.tsv", "UMLS:"), pairs(
        "mondo_exactmatch_mesh.sssom.tsv", "MESH:")
    out: dict[str, set[str]] = {}
    for mondo, cuis in umls.items():
        for cui in cuis:
            out.setdefault(cui, set()).update(mesh.get(mondo, set()))
    return out


def bench_bc5cdr(expand: bool) -> None:
    from medkg.abbreviations import find_abbreviations
    from medkg.evaluation.pubtator import read_pubtator
    from medkg.ontology.index import ConceptIndex

    docs = list(read_pubtator(need(BC5CDR_DEV)))
    index = ConceptIndex(_all_concepts())
    index.approximate()
    via_umls = _umls_to_mesh()

    def mesh_ids(concept: object) -> set[str]:
        ids: set[str] = set()
        for ref in [concept.id, *concept.xrefs]:  # type: ignore[attr-defined]
            prefix, _, local = ref.partition(":")
            if prefix.upper() in {"MESH", "MSH"}:
                ids.add(local)
            elif prefix.upper() == "UMLS":
                ids |= via_umls.get(local, set())
        return ids

    totals: Counter[str] = Counter()
    t0 = time.perf_counter()
    for doc in docs:
        # An abbreviation the abstract defines ("valproic acid (VPA)") is looked up
        # by its long form.
        abbreviations = find_abbreviations(doc.text) if expand else {}
        for m in doc.mentions:
            if m.type not in {"Chemical", "Disease"} or not m.ids:
                continue
            gold = set(m.ids)
            cands = index.search(abbreviations.get(m.text, m.text), 5)
            ranks = [i for i, c in enumerate(cands) if mesh_ids(c.concept) & gold]
            for key in (m.type, "all"):
                totals[f"{key}.n"] += 1
                totals[f"{key}.top1"] += bool(ranks and ranks[0] == 0)
                totals[f"{key}.top5"] += bool(ranks)
    seconds = time.perf_counter() - t0
    print(f"BC5CDR dev gold mentions -> vocabulary (default + Disease Ontology), "
          f"abbreviation expansion {'on' if expand else 'off'}, {seconds:.1f} s")
    print(f"{'type':<10}{'mentions':>9}{'top-1':>8}{'top-5':>8}")
    for key in ("Chemical", "Disease", "all"):
        n = totals[f"{key}.n"]
        print(f"{key:<10}{n:>9}{totals[f'{key}.top1'] / n:>8.3f}{totals[f'{key}.top5'] / n:>8.3f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("what", choices=["load", "lookup", "bc5cdr", "_child"])
    parser.add_argument("name", nargs="?")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--queries", type=int, default=10_000)
    parser.add_argument("--no-abbreviations", action="store_true",
                        help="bc5cdr: look mentions up as written (the baseline)")
    args = parser.parse_args()
    if args.what == "_child":
        _child_load(args.name)
    elif args.what == "load":
        bench_load(args.runs)
    elif args.what == "lookup":
        bench_lookup(args.queries)
    else:
        bench_bc5cdr(expand=not args.no_abbreviations)


if __name__ == "__main__":
    main()
