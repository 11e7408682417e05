"""A vocabulary update: which documents are extracted again, and how long it
takes against redoing every document, in one run on one corpus.

    python benchmarks/bench_reextract.py                 # 300 BC5CDR dev abstracts, HPO
    python benchmarks/bench_reextract.py --docs 100 --changed 0.02

The older vocabulary is the HPO in ``../shared/data/vocab/hpo/hp.obo``; the newer
one is the same file with a share of its terms changed the way ontology releases
change them (``--changed``, default 2%, split evenly): a synonym added, a term
renamed (its old name kept as a synonym), a term obsoleted with ``replaced_by`` a
new term of the same name. One workspace is built with the older vocabulary and
copied; then, on each copy, the newer vocabulary is loaded and

- ``selective``: ``medkg build`` (only the documents the load touched), and
- ``everything``: ``medkg build --reextract`` (every document again),

both timed (load and build apart). The two graphs must be equal (sorted N-Quads
less load times and the vocabulary version in extraction marks): printed as
``same graph``. Without ``../shared`` the script says so and stops.
"""

from __future__ import annotations

import argparse
import hashlib
import re
import shutil
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(Path(__file__).resolve().parent))
HPO = REPO.parent / "shared" / "data" / "vocab" / "hpo" / "hp.obo"


def newer_hpo(text: str, share: float) -> tuple[str, dict[str, int]]:
    """The HPO with ``share`` of its live terms changed (every k-th term, so the
    same terms each run): added synonym, rename, obsolete + replaced_by."""
    stanzas = text.split("\n[Term]\n")
    head, terms = stanzas[0], stanzas[1:]
    live = [i for i, t in enumerate(terms) if "\nis_obsolete: true" not in t]
    step = max(1, int(1 / share))
    counts = {"synonym added": 0, "renamed": 0, "obsoleted": 0}
    extra: list[str] = []
    for n, i in enumerate(live[::step]):
        stanza = terms[i]
        name = re.search(r"^name: (.*)$", stanza, re.M)
        tid = re.search(r"^id: (HP:\d+)$", stanza, re.M)
        if name is None or tid is None:
            continue
        kind = n % 3
        if kind == 0:
            terms[i] = stanza.replace(f"name: {name[1]}\n",
                                      f"name: {name[1]}\nsynonym: \"{name[1]} finding\" EXACT []\n")
            counts["synonym added"] += 1
        elif kind == 1:
            terms[i] = stanza.replace(f"name: {name[1]}\n",
                                      f"name: {name[1]} (disorder)\n"
                                      f"synonym: \"{name[1]}\" EXACT []\n")
            counts["renamed"] += 1
        else:
            new_id = f"HP:9{tid[1][4:]}"
            terms[i] = (f"id: {tid[1]}\nname: obsolete {name[1]}\nis_obsolete: true\n"
                        f"replaced_by: {new_id}\n")
            extra.append(stanza.replace(f"id: {tid[1]}\n", f"id: {new_id}\n"))
            counts["obsoleted"] += 1
    return "\n[Term]\n".join([head, *terms, *extra]) + "\n", counts


def graph_digest(ws: object) -> str:
    from rdflib.namespace import PROV

    from medkg.store.vocab import MKG

    lines = sorted(f"{s.n3()} {p.n3()} {o.n3()} {g.n3()}"
                   for s, p, o, g in ws.store.quads()  # type: ignore[attr-defined]
                   if p != PROV.generatedAtTime
                   and not (p == MKG.completed and str(o).startswith("extracted@")))
    return hashlib.sha256("\n".join(lines).encode()).hexdigest()[:12]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--docs", type=int, default=300)
    ap.add_argument("--changed", type=float, default=0.02, help="share of HPO terms changed")
    ap.add_argument("--out", type=Path, default=None, help="work directory (default: temp)")
    args = ap.parse_args()
    if not HPO.exists():
        sys.exit(f"skip: {HPO} not found (the ../shared checkout is absent)")
    from bench_build import write_corpus

    from medkg.model import Layer
    from medkg.workspace import Workspace

    work = args.out or Path(tempfile.mkdtemp(prefix="medkg-reextract-"))
    work.mkdir(parents=True, exist_ok=True)
    corpus = work / "corpus"
    n = write_corpus("bc5cdr-dev", args.docs, corpus)
    vocab = work / "vocab" / "hp.obo"
    vocab.parent.mkdir(exist_ok=True)
    older = HPO.read_text(encoding="utf-8")
    newer, counts = newer_hpo(older, args.changed)
    vocab.write_text(older, encoding="utf-8")

    rows: list[tuple[str, str]] = []
    t0 = time.perf_counter()
    base = work / "base"
    with Workspace.create(base) as ws:
        ws.load_vocabulary(vocab)
        ws.ingest([corpus], Layer.LITERATURE)
        ws.build()
        entities = ws.store.counts().entities
    first = time.perf_counter() - t0
    rows.append(("first build (older HPO): load + ingest + build", f"{first:.1f} s"))
    for arm in ("warm-up", "selective", "everything"):
        shutil.copytree(base, work / arm)
    vocab.write_text(newer, encoding="utf-8")
    # Untimed: the newer HPO's new concepts get their vectors once per machine
    # (files.user_cache_dir); neither timed arm should pay that.
    with Workspace.open(work / "warm-up") as ws:
        ws.load_vocabulary(vocab)
        ws.build()
    digests, reextracted = {}, {}
    for arm in ("selective", "everything"):
        with Workspace.open(work / arm) as ws:
            t = time.perf_counter()
            ws.load_vocabulary(vocab)
            load_s = time.perf_counter() - t
            status = ws.extraction_status()
            t = time.perf_counter()
            report = ws.build(reextract=arm == "everything")
            build_s = time.perf_counter() - t
            reextracted[arm] = report.reextracted
            digests[arm] = graph_digest(ws)
        rows += [(f"{arm}: load newer HPO (incl. finding touched documents)", f"{load_s:.1f} s"),
                 (f"{arm}: stale after the load", str(len(status.stale_vocabulary))),
                 (f"{arm}: build", f"{build_s:.1f} s"),
                 (f"{arm}: documents extracted again", str(report.reextracted)),
                 (f"{arm}: load + build", f"{load_s + build_s:.1f} s")]
    changes = ", ".join(f"{v} {k}" for k, v in counts.items())
    print(f"corpus: {n} BC5CDR dev abstracts; {entities} entities after the first build; "
          f"HPO {sum(counts.values())} terms changed ({changes})")
    width = max(len(k) for k, _ in rows)
    for key, value in rows:
        print(f"{key:<{width}}  {value:>10}")
    same = digests["selective"] == digests["everything"]
    print(f"graph digest: selective {digests['selective']}, everything {digests['everything']}"
          f" -> {'same graph' if same else 'DIFFERENT graphs'}")
    if args.out is None:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
