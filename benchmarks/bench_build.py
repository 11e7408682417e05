"""Where a build's time goes: ingest + build of N real documents, per stage, with
the sentence-embedding floor and (optionally) an older checkout in the same run.

    python benchmarks/bench_build.py                           # 500 BC5CDR dev abstracts
    python benchmarks/bench_build.py --baseline-src /tmp/old   # + that checkout, same data
    python benchmarks/bench_build.py --corpus medquad --docs 10000 --no-floor
    python benchmarks/bench_build.py --docs 200 --dask-workers 1 --dask-workers 2
    python benchmarks/bench_build.py --corpus abstracts --docs 1000 --postgres \
        --dask-workers 2                      # SQLite, PostgreSQL, 2 Dask workers
    python benchmarks/bench_build.py --variant \
        one-process:MEDKG_EXTRACTION__EXECUTOR=local   # + an arm with other settings

Every arm runs in its own subprocess (its own peak RSS) on a copy of one
template workspace with the default vocabulary already loaded and its concept
vectors already made (from a cache of concept texts made once, or
``--concept-cache``; a checkout that keeps them per machine makes its shared
set in the template step), then times ``ingest`` and ``build``. The template
is made by this checkout; an older one reads the same workspace format. The
floor is the time to embed each sentence of the corpus once with the same
model (an empty cache). ``graph_digest`` hashes the ids of every entity,
statement and link, so arms that built the same graph show the same digest.
Corpora come from ``../shared/data``; without it the script says so and stops.
``--postgres`` adds an arm on the shared store: a private PostgreSQL cluster
(``tests/servers/postgres.py``: ``initdb`` + ``pg_ctl`` in a temporary
directory, ``fsync=off``) with a template of its own. A Dask arm's workers
report their own peak RSS.

Columns of the per-stage table: a stage's own seconds (nested stages
excluded: ``embed`` is every call of the sentence encoder, wherever it came
from), its share of the wall time, calls, texts embedded on its behalf and the
encoding seconds they took, and the process's peak RSS when the stage last
ended.
"""

from __future__ import annotations

import argparse
import collections
import gzip
import hashlib
import json
import os
import shutil
import sqlite3
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
DATA = REPO.parent / "shared" / "data"
CORPORA = {
    "bc5cdr-dev": DATA / "eval" / "bc5cdr" / "CDR_DevelopmentSet.PubTator.txt",
    "bc5cdr-train": DATA / "eval" / "bc5cdr" / "CDR_TrainingSet.PubTator.txt",
    "medquad": DATA / "corpora" / "medquad" / "medquad_answered.jsonl.gz",
    "openstax": DATA / "corpora" / "openstax_nursing" / "modules_plaintext.jsonl",
    # every PubMed abstract of the training and dev splits (BC5CDR, BioRED, PubMedQA
    # contexts), one each by PMID: the largest abstract corpus there is here
    "abstracts": DATA / "eval",
    # every document here that fits the literature layer: the abstracts above, the
    # BioASQ 7B-9B snippet pool, MedQuAD answers and the OpenStax modules, shuffled
    # (seed 0) so that --docs 1000 / 10000 / all are nested samples of one mix
    "all": DATA,
}
ABSTRACT_SOURCES = (Path("bc5cdr/CDR_TrainingSet.PubTator.txt"),
                    Path("bc5cdr/CDR_DevelopmentSet.PubTator.txt"),
                    Path("biored/Train.PubTator"), Path("biored/Dev.PubTator"))


PART_DOCS = 10_000  # documents per JSONL file: 30,000 in one would pass ingest.max_file_mb


def write_corpus(name: str, docs: int, out: Path) -> int:
    """The corpus as JSONL files of up to PART_DOCS documents under ``out``, in
    order (``documents-01.jsonl``, ...); returns how many documents."""
    source = CORPORA[name]
    if not source.exists():
        sys.exit(f"skip: {source} not found (the ../shared checkout is absent)")
    records: list[dict[str, str]] = []
    if name == "all":
        records = _all_records()
    elif name.startswith("bc5cdr"):
        records = _pubtator_records([source])
    elif name == "abstracts":
        records = _abstract_records(source)
    elif name == "medquad":
        records = _medquad_records(source)
    else:
        records = _openstax_records(source)
    records = records[:docs]
    out.mkdir(parents=True, exist_ok=True)
    for old in out.glob("documents*.jsonl"):
        old.unlink()
    for part, first in enumerate(range(0, len(records), PART_DOCS), start=1):
        with (out / f"documents-{part:02d}.jsonl").open("w", encoding="utf-8") as handle:
            for record in records[first:first + PART_DOCS]:
                handle.write(json.dumps(record) + "\n")
    return len(records)


def _abstract_records(eval_dir: Path) -> list[dict[str, str]]:
    records = _pubtator_records([eval_dir / path for path in ABSTRACT_SOURCES])
    seen = {r["id"] for r in records}
    pubmedqa = json.loads((eval_dir / "pubmedqa" / "pqal_dev.json").read_text("utf-8"))
    for pmid, row in pubmedqa.items():
        if pmid not in seen:
            seen.add(pmid)
            records.append({"id": pmid, "title": row["QUESTION"],
                            "text": " ".join(row["CONTEXTS"])})
    return records


def _medquad_records(path: Path) -> list[dict[str, str]]:
    """MedQuAD answers of over 200 characters; a question id that several of its
    source collections reuse gets a suffix, so each answer is its own document."""
    records, seen = [], collections.Counter[str]()
    with gzip.open(path, "rt", encoding="utf-8") as handle:
        for line in handle:
            row = json.loads(line)
            text = " ".join(row["answer"].split())
            if len(text) > 200:
                seen[row["qid"]] += 1
                suffix = f"~{seen[row['qid']]}" if seen[row["qid"]] > 1 else ""
                records.append({"id": row["qid"] + suffix, "title": row["question"],
                                "text": text})
    return records


def _openstax_records(path: Path) -> list[dict[str, str]]:
    records = []
    for line in path.read_text(encoding="utf-8").splitlines():
        row = json.loads(line)
        records.append({"id": row["module"], "title": row["title"], "text": row["text"]})
    return records


def _all_records() -> list[dict[str, str]]:
    """Every literature-layer document of ../shared/data, shuffled with seed 0."""
    import random

    sys.path.insert(0, str(REPO))
    from medkg.evaluation.qa import read_bioasq

    records = _abstract_records(CORPORA["abstracts"])
    pool = read_bioasq(DATA / "eval" / "bioasq")  # the 7B-9B snippet pool
    records += [{"id": f"bioasq-{d.key}", "title": d.title, "text": d.text}
                for d in pool.documents]
    records += [{**r, "id": f"medquad-{r['id']}"} for r in _medquad_records(CORPORA["medquad"])]
    records += [{**r, "id": f"openstax-{r['id']}"}
                for r in _openstax_records(CORPORA["openstax"])]
    random.Random(0).shuffle(records)
    return records


def _pubtator_records(paths: list[Path]) -> list[dict[str, str]]:
    """Title and abstract of each PubTator document, the first of each PMID."""
    sys.path.insert(0, str(REPO))
    from medkg.evaluation.pubtator import read_pubtator

    records, seen = [], set()
    for path in paths:
        for pub in read_pubtator(path):
            if pub.pmid not in seen:
                seen.add(pub.pmid)
                records.append({"id": pub.pmid, "title": pub.title, "text": pub.text})
    return records


def concept_cache(out: Path, seed: Path | None) -> Path:
    """An embedding cache holding the default vocabulary's concept vectors only
    (so no arm gets document vectors for free); made once, from ``seed`` where
    it has them."""
    target = out / "concept-cache.sqlite"
    if target.exists():
        return target
    from medkg.config import EmbeddingConfig
    from medkg.linking.embeddings import PASSAGE, CachedEmbedder, SentenceTransformerEmbedder
    from medkg.linking.linker import concept_content
    from medkg.ontology.loaders import load_default

    texts = [concept_content(c) for c in load_default().concepts]
    partial = out / "concept-cache.partial.sqlite"
    partial.unlink(missing_ok=True)
    embedder = CachedEmbedder(SentenceTransformerEmbedder(EmbeddingConfig()), partial)
    if seed is not None and seed.exists():
        keys = {embedder._key(t, PASSAGE) for t in texts}
        with sqlite3.connect(seed) as src:
            rows = [r for r in src.execute("SELECT key, v FROM vec") if r[0] in keys]
        with embedder._db:
            embedder._db.executemany("INSERT OR REPLACE INTO vec VALUES (?, ?)", rows)
    for start in range(0, len(texts), 2048):
        embedder.embed(texts[start : start + 2048])
    embedder.close()
    partial.rename(target)
    return target


def make_template(workdir: Path, cache: Path) -> dict[str, object]:
    """A closed workspace with the default vocabulary loaded (and, for a checkout
    that keeps them per machine, all concept vectors made): every arm starts
    from a copy of it."""
    from medkg.workspace import Workspace

    ws_path = workdir / "ws"
    shutil.rmtree(ws_path, ignore_errors=True)
    ws = Workspace.create(ws_path)
    seeded = ws_path / "cache" / "embeddings.sqlite"
    seeded.parent.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(cache, seeded)
    start = time.perf_counter()
    ws.load_vocabulary(None)
    vocab_s = time.perf_counter() - start
    try:
        from medkg.files import user_cache_dir
        from medkg.linking.concept_vectors import all_concept_vectors
    except ImportError:
        pass
    else:  # only where linking compares with every concept (not lexical candidates)
        if getattr(ws.settings.linking, "concept_candidates", "all") == "all":
            all_concept_vectors(ws.parts.concept_index().concepts(), ws.parts.embedder,
                                user_cache_dir() / "concept-vectors",
                                ws.settings.linking.ann_threshold)
    ws.close()
    (workdir / "done").write_text("template complete\n", encoding="utf-8")
    return {"vocab_s": vocab_s}


def run_arm(corpus: Path, workdir: Path, template: Path) -> dict[str, object]:
    """One arm in this process (whichever medkg is on sys.path), from a copy of
    the template workspace."""
    from medkg.config import Settings
    from medkg.model import Layer
    from medkg.workspace import Workspace

    try:
        from medkg import timing
    except ImportError:  # an older checkout: totals only
        timing = None  # type: ignore[assignment]
    ws_path = workdir / "ws"
    shutil.rmtree(ws_path, ignore_errors=True)
    shutil.copytree(template / "ws", ws_path)
    Settings().save(ws_path / "medkg.toml")  # this checkout's defaults (and settings names)
    graph_dirs = [ws_path / name for name in ("graph", "tables", "rdf")]
    ws = Workspace.open(ws_path)
    result: dict[str, object] = {}
    clock_cm = timing.recording() if timing is not None else None
    clock = clock_cm.__enter__() if clock_cm is not None else None
    start = time.perf_counter()
    ingested = ws.ingest([corpus], Layer.LITERATURE)
    ingest_s = time.perf_counter() - start
    built = ws.build()
    total_s = time.perf_counter() - start
    build_peak = _peak_rss_mb()  # before the digest below, which holds every id at once
    if clock_cm is not None:
        clock_cm.__exit__(None, None, None)
    counts = ws.store.counts()
    graph = hashlib.sha256()
    for layer in (Layer.USER, Layer.LITERATURE):
        for key in sorted([*(t.id for t in ws.store.iter_triples(layer)),
                           *(e.id for e in ws.store.entities(layer))]):
            graph.update(key.encode())
    for key in sorted(f"{x.source} {x.kind.value} {x.target}" for x in ws.store.iter_links()):
        graph.update(key.encode())
    ws.close()
    result.update({
        "graph_digest": graph.hexdigest()[:12],
        "documents": ingested.documents, "chunks": ingested.chunks,
        "failed": len(ingested.failed), "entities": built.entities,
        "triples": built.triples, "links": built.links, "quads": counts.quads,
        "ingest_s": ingest_s, "build_s": total_s - ingest_s, "total_s": total_s,
        "docs_per_s": ingested.documents / total_s if total_s else 0.0,
        "peak_rss_mb": build_peak, "digest_peak_rss_mb": _peak_rss_mb(),
        "workspace_mb": sum(p.stat().st_size for p in ws_path.rglob("*") if p.is_file())
        / 2**20,
        "graph_mb": sum(p.stat().st_size for d in graph_dirs for p in d.rglob("*")
                        if p.is_file()) / 2**20,
    })
    if clock is not None and timing is not None:
        result["table"] = timing.table(clock, total_s)
        result["embedded"] = sum(r.texts_embedded for r in clock.stages.values())
    return result


def run_floor(corpus: Path) -> dict[str, object]:
    """Embed each sentence of the corpus once with the same model, no cache."""
    from medkg.config import EmbeddingConfig
    from medkg.linking.embeddings import SentenceTransformerEmbedder
    from medkg.text import sentence_spans

    sentences: list[str] = []
    lines = (line for part in sorted(corpus.glob("documents-*.jsonl"))
             for line in part.read_text(encoding="utf-8").splitlines())
    for line in lines:
        text = json.loads(line)["text"]
        sentences.extend(text[s:e] for s, e in sentence_spans(text))
    embedder = SentenceTransformerEmbedder(EmbeddingConfig())
    embedder.embed(["warm up"])
    start = time.perf_counter()
    embedder.embed(sentences)
    return {"sentences": len(sentences), "floor_s": time.perf_counter() - start,
            "peak_rss_mb": _peak_rss_mb()}


def _postgres_mb(data: Path) -> float:
    """The size of a PostgreSQL data directory (it belongs to the postgres user)."""
    done = subprocess.run(["du", "-sm", str(data)], capture_output=True, text=True, check=False)
    return float(done.stdout.split()[0]) if done.returncode == 0 else float("nan")


def _peak_rss_mb() -> float:
    import resource

    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def _child(arm: str, src: Path, args: argparse.Namespace, cache: Path | None,
           settings: dict[str, str] | None = None, template: str = "template"
           ) -> dict[str, object]:
    """One arm in a child process of checkout ``src``; ``template``: the directory
    (under --out) of the template workspace it starts from (a checkout whose
    workspace format differs makes its own: ``--arm template`` run by it)."""
    env = {**os.environ, "PYTHONPATH": str(src), "HF_HUB_OFFLINE": "1",
           "XDG_CACHE_HOME": str(args.out / "xdg-cache"), **(settings or {})}
    workdir = args.out / (template if arm == "template" else arm)
    command = [sys.executable, __file__, "--arm", arm, "--corpus-dir", str(args.corpus_dir),
               "--workdir", str(workdir), "--out", str(args.out), "--template", template]
    if cache is not None:
        command += ["--concept-cache", str(cache)]

    done = subprocess.run(command, env=env, cwd=src, capture_output=True, text=True)
    if done.returncode:
        sys.exit(f"arm {arm} failed:\n{done.stderr[-4000:]}")
    result: dict[str, object] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--corpus", choices=sorted(CORPORA), default="bc5cdr-dev")
    parser.add_argument("--docs", type=int, default=500)
    parser.add_argument("--baseline-src", type=Path,
                        help="another checkout of medkg to run first on the same data")
    parser.add_argument("--concept-cache", type=Path,
                        help="an embeddings.sqlite with the default vocabulary's concept "
                        "vectors (kept under --out otherwise; the first run makes it)")
    parser.add_argument("--seed-cache", type=Path,
                        help="any embeddings.sqlite to take concept vectors from")
    parser.add_argument("--out", type=Path, help="where workspaces and caches go "
                        "(default: a temporary directory)")
    parser.add_argument("--variant", action="append", default=[],
                        help="one more arm of this checkout with settings from the "
                        "environment: NAME:MEDKG_SECTION__KEY=VALUE[,...] (repeatable)")
    parser.add_argument("--dask-workers", type=int, action="append", default=[],
                        help="one more arm whose extraction runs on a local Dask cluster "
                        "of this many worker processes (repeatable: --dask-workers 1 "
                        "--dask-workers 2)")
    parser.add_argument("--postgres", action="store_true",
                        help="one more arm on a private PostgreSQL cluster (the shared store)")
    parser.add_argument("--no-floor", action="store_true")
    parser.add_argument("--arm", help=argparse.SUPPRESS)
    parser.add_argument("--corpus-dir", type=Path, help=argparse.SUPPRESS)
    parser.add_argument("--workdir", type=Path, help=argparse.SUPPRESS)
    parser.add_argument("--template", default="template", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.arm == "floor":
        print(json.dumps(run_floor(args.corpus_dir)))
        return
    if args.arm == "template":
        args.workdir.mkdir(parents=True, exist_ok=True)
        print(json.dumps(make_template(args.workdir, args.concept_cache)))
        return
    if args.arm:
        args.workdir.mkdir(parents=True, exist_ok=True)
        print(json.dumps(run_arm(args.corpus_dir, args.workdir, args.out / args.template)))
        return
    keep = args.out is not None
    args.out = args.out or Path(tempfile.mkdtemp(prefix="bench-build-"))
    args.out.mkdir(parents=True, exist_ok=True)
    docs = write_corpus(args.corpus, args.docs, args.out / "corpus")
    args.corpus_dir = args.out / "corpus"  # a folder of parts: ingest reads it whole
    sys.path.insert(0, str(REPO))
    cache = args.concept_cache or concept_cache(args.out, args.seed_cache)
    if not (args.out / "template" / "done").exists():
        made = _child("template", REPO, args, cache)
        print(f"template workspace: default vocabulary loaded in {made['vocab_s']:.0f} s",
              flush=True)
    arms: dict[str, dict[str, object]] = {}
    if args.baseline_src:
        # its own template: a checkout from before the typed tables cannot read the
        # workspace this one makes (and this one would move that one's graph)
        baseline = args.baseline_src.resolve()
        if not (args.out / "template-before" / "done").exists():
            _child("template", baseline, args, cache, template="template-before")
        arms["before"] = _child("before", baseline, args, cache, template="template-before")
    arms["now"] = _child("now", REPO, args, cache)
    for workers in args.dask_workers:
        from distributed import Client, LocalCluster

        cluster_cm = LocalCluster(  # type: ignore[no-untyped-call]
            n_workers=workers, threads_per_worker=1, processes=True, dashboard_address=None)
        with cluster_cm as cluster:
            address = cluster.scheduler_address.removeprefix("tcp://")
            arm = _child(f"dask-{workers}", REPO, args, cache,
                         {"MEDKG_EXTRACTION__EXECUTOR": f"dask://{address}"})
            with Client(cluster) as client:  # type: ignore[no-untyped-call]
                peaks = client.run(_peak_rss_mb)
            arm["worker_peak_rss_mb"] = " ".join(f"{v:.0f}" for v in peaks.values())
            arms[f"dask x{workers}"] = arm
    if args.postgres:
        sys.path.insert(0, str(REPO))
        from tests.servers.postgres import PASSWORD, available, postgres

        why = available()
        if why:
            sys.exit(f"--postgres: {why}")
        with postgres() as server:
            settings = {"MEDKG_STORE__BACKEND": "postgres", "MEDKG_STORE__URL": server.url,
                        "MEDKG_STORE__PASSWORD_ENV": "BENCH_PG_PASSWORD",
                        "BENCH_PG_PASSWORD": PASSWORD}
            _child("template", REPO, args, cache, settings, template="template-pg")
            arm = _child("postgres", REPO, args, cache, settings, template="template-pg")
            arm["server_mb"] = _postgres_mb(server.directory / "data")
            arms["postgres"] = arm
    for variant in args.variant:
        name, _, assignments = variant.partition(":")
        settings = dict(a.split("=", 1) for a in assignments.split(",") if a)
        arms[name] = _child(name, REPO, args, cache, settings)
    floor = None if args.no_floor else _child("floor", REPO, args, None)
    print(f"corpus: {args.corpus}, {docs} documents; default vocabulary loaded, "
          "its concept vectors cached")
    keys = ["documents", "failed", "chunks", "entities", "triples", "links", "quads", "ingest_s",
            "build_s", "total_s", "docs_per_s", "peak_rss_mb", "digest_peak_rss_mb",
            "worker_peak_rss_mb",
            "workspace_mb", "graph_mb", "server_mb", "graph_digest"]
    print(f"| {'measure':<14} | " + " | ".join(f"{a:>10}" for a in arms) + " |")
    print("|---|" + "---:|" * len(arms))
    for key in keys:
        cells = []
        for arm in arms.values():
            value = arm.get(key)
            cells.append(f"{value:>10.1f}" if isinstance(value, float) else f"{value!s:>10}")
        print(f"| {key:<14} | " + " | ".join(cells) + " |")
    if floor is not None:
        floor_s = float(floor["floor_s"])  # type: ignore[arg-type]
        print(f"\nfloor: {floor['sentences']} sentences embedded once in {floor_s:.1f} s")
        for name, arm in arms.items():
            print(f"{name}: total {arm['total_s']:.1f} s = "
                  f"{float(arm['total_s']) / floor_s:.1f}x the floor")  # type: ignore[arg-type]
    for name, arm in arms.items():
        if "table" in arm:
            print(f"\nper stage ({name}; {arm.get('embedded')} texts embedded):")
            print(arm["table"])
    if not keep:
        shutil.rmtree(args.out, ignore_errors=True)


if __name__ == "__main__":
    main()
