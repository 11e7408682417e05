"""The graph on each store backend that runs here, in one run on one graph:
embedded Oxigraph against a SPARQL server (a private Virtuoso 7 from Debian).

    python benchmarks/bench_stores.py                    # 500 BC5CDR dev abstracts
    python benchmarks/bench_stores.py --docs 100 --questions 20 --build-docs 20
    python benchmarks/bench_stores.py --docs 1000 --fill 0   # dev + 500 training abstracts

One workspace is built once on Oxigraph (the default vocabulary, then ``--docs``
BC5CDR abstracts: the dev split's 500, then training abstracts). Then, each step
in a process of its own (so its peak RSS is its own), for each backend:

- ``write``: the whole graph (vocabulary included) streamed into an empty store
  of that backend (:func:`medkg.store.copy.copy_graph`): quads/s.
- ``ask``: ``--questions`` questions made from the corpus's gold chemical and
  disease names ("What are the adverse effects of X?", "Which chemicals can
  induce Y?"), answered by the workspace on that backend (the Virtuoso one was
  moved there by ``copy_graph(switch=True)``): p50 and p95 seconds.
- ``build``: ``--build-docs`` BC5CDR training abstracts ingested and built into a
  workspace that has the vocabulary only, on that backend: the pipeline's own
  writes and reads over HTTP against Oxigraph's in-process calls.
- ``fill`` (``--fill N``): copies of the graph under other base IRIs put in the
  store the ask workspace uses until it holds N quads, then ``ask`` again. On
  Virtuoso that is a shared server; an Oxigraph store is one workspace's alone,
  and its reads that are not limited to one named graph read the copies too.
  For one graph of a million quads on both, build a bigger one (``--docs 1000``).

Virtuoso's own peak memory (VmHWM) is read from /proc after each step.
Without ``../shared`` or without Virtuoso the script says so and stops.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(Path(__file__).resolve().parent))
BC5CDR = REPO.parent / "shared" / "data" / "eval" / "bc5cdr" / "CDR_DevelopmentSet.PubTator.txt"
BACKENDS = ("oxigraph", "sparql")


def _peak_rss_mb() -> float:
    import resource

    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def questions(docs: int, n: int) -> list[str]:
    """Questions from the gold mentions of the first ``docs`` abstracts."""
    pmids: list[str] = []
    names: dict[str, Counter[str]] = {"Chemical": Counter(), "Disease": Counter()}
    for line in BC5CDR.read_text(encoding="utf-8").splitlines():
        if "|t|" in line:
            pmid = line.split("|", 1)[0]
            if pmid not in pmids:
                pmids.append(pmid)
        parts = line.split("\t")
        if len(parts) >= 6 and parts[0] in pmids[:docs] and parts[4] in names:
            names[parts[4]][parts[3].lower()] += 1
    chemicals = [c for c, _ in names["Chemical"].most_common()]
    diseases = [d for d, _ in names["Disease"].most_common()]
    out: list[str] = []
    for chem, disease in zip(chemicals, diseases, strict=False):
        out += [f"What are the adverse effects of {chem}?",
                f"Which chemicals can induce {disease}?"]
    return out[:n]


def store_config(backend: str, url: str, tag: str) -> object:
    """``sparql``: inserts through Virtuoso's Graph Store Protocol endpoint (as one
    would set it up for bulk loads); ``sparql-update``: SPARQL updates only."""
    from medkg.config import StoreConfig

    if backend.startswith("sparql"):
        gsp = url.removesuffix("sparql") + "sparql-graph-crud" if backend == "sparql" else ""
        return StoreConfig(backend="sparql", url=url, graph_store_url=gsp,
                           base_iri=f"https://bench.medkg/{tag}/")
    return StoreConfig(backend="oxigraph")


# -- steps, each run in a child process ---------------------------------------------


def step_base(work: Path, docs: int) -> dict[str, object]:
    from bench_build import write_corpus

    from medkg.model import Layer
    from medkg.workspace import Workspace

    corpus = work / "corpus"
    n = write_corpus("bc5cdr-dev", docs, corpus)
    if docs > n:  # more than the dev split holds: training abstracts after it
        extra = work / "corpus-train"
        n += write_corpus("bc5cdr-train", docs - n, extra)
        with (corpus / "documents.jsonl").open("a", encoding="utf-8") as out:
            out.write((extra / "documents.jsonl").read_text("utf-8"))
        shutil.rmtree(extra)
    t0 = time.perf_counter()
    with Workspace.create(work / "vocab-only") as ws:
        ws.load_vocabulary(None)
    vocab_s = time.perf_counter() - t0
    shutil.copytree(work / "vocab-only", work / "base")
    t0 = time.perf_counter()
    with Workspace.open(work / "base") as ws:
        ws.ingest([corpus], Layer.LITERATURE)
        ws.build()
        counts = ws.store.counts()
    build_s = time.perf_counter() - t0
    return {"documents": n, "vocab_s": vocab_s, "build_s": build_s, "quads": counts.quads,
            "entities": counts.entities, "triples": counts.triples, "links": counts.links,
            "concepts": counts.concepts}


def step_write(work: Path, backend: str, url: str) -> dict[str, object]:
    from medkg.store.copy import copy_graph
    from medkg.store.registry import open_store
    from medkg.workspace import Workspace

    if backend == "sparql":
        # The copy the ask step uses: a workspace whose graph moved to Virtuoso.
        shutil.rmtree(work / "ws-sparql", ignore_errors=True)
        shutil.copytree(work / "base", work / "ws-sparql")
        with Workspace.open(work / "ws-sparql") as moved:
            report = moved.copy_graph(store_config(backend, url, "ask"),  # type: ignore[arg-type]
                                      replace=True, switch=True)
    else:
        target_dir = work / "write-oxigraph"
        shutil.rmtree(target_dir, ignore_errors=True)
        with Workspace.open(work / "base", access="read") as ws:
            target = open_store(store_config(backend, url, "w"), target_dir)  # type: ignore[arg-type]
            report = copy_graph(ws.store, target, replace=True)
            target.close()
        shutil.rmtree(target_dir, ignore_errors=True)
        if backend == "oxigraph":
            shutil.rmtree(work / "ws-oxigraph", ignore_errors=True)
            shutil.copytree(work / "base", work / "ws-oxigraph")
    return {"quads": report.quads, "seconds": report.seconds, "per_second": report.per_second,
            "verified": report.verified, "peak_rss_mb": _peak_rss_mb()}


def step_fill(work: Path, backend: str, url: str, total: int) -> dict[str, object]:
    """Copies of the graph under other base IRIs into the store the ask step's
    workspace uses, until that store holds at least ``total`` quads."""
    from medkg.config import StoreConfig
    from medkg.store.copy import copy_graph
    from medkg.store.registry import open_store
    from medkg.workspace import Workspace

    t0 = time.perf_counter()
    with Workspace.open(work / "base", access="read") as ws:
        size = ws.store.counts().quads
        copies = max(0, -(-total // size) - 1)
        for i in range(copies):
            cfg: StoreConfig = store_config(backend, url, f"fill{i}")  # type: ignore[assignment]
            if backend == "oxigraph":
                cfg = StoreConfig(backend="oxigraph", base_iri=f"https://bench.medkg/fill{i}/")
            target = open_store(cfg, work / "ws-oxigraph" / "graph")
            copy_graph(ws.store, target, replace=True)
            target.close()
    return {"held": size * (copies + 1), "copies": copies, "seconds": time.perf_counter() - t0}


def step_ask(work: Path, backend: str, asked: list[str]) -> dict[str, object]:
    from medkg.workspace import Workspace

    times: list[float] = []
    cited = 0
    with Workspace.open(work / f"ws-{backend}", access="read") as ws:
        ws.ask("What treats hypertension?")  # loads the models and indexes: not timed
        for question in asked:
            t0 = time.perf_counter()
            answer = ws.ask(question)
            times.append(time.perf_counter() - t0)
            cited += bool(answer.citations)
    times.sort()
    return {"questions": len(times), "p50": statistics.median(times),
            "p95": times[min(len(times) - 1, int(0.95 * len(times)))],
            "mean": statistics.fmean(times), "answered_with_citations": cited,
            "peak_rss_mb": _peak_rss_mb()}


def step_build(work: Path, backend: str, url: str, docs: int) -> dict[str, object]:
    from bench_build import write_corpus

    from medkg.model import Layer
    from medkg.workspace import Workspace

    corpus = work / f"build-corpus-{docs}"
    if not corpus.exists():  # abstracts the graph does not hold: the end of BC5CDR's
        write_corpus("bc5cdr-train", 500, work / "train")  # training split
        rows = (work / "train" / "documents.jsonl").read_text("utf-8").splitlines()
        corpus.mkdir()
        (corpus / "documents.jsonl").write_text("\n".join(rows[-docs:]) + "\n", "utf-8")
        shutil.rmtree(work / "train")
    root = work / f"build-{backend}"
    shutil.rmtree(root, ignore_errors=True)
    shutil.copytree(work / "vocab-only", root)
    with Workspace.open(root) as ws:
        if backend == "sparql":
            ws.copy_graph(store_config(backend, url, "build"), replace=True,  # type: ignore[arg-type]
                          switch=True)
        requests0 = getattr(ws.store._ds.store, "requests", 0)  # type: ignore[attr-defined]
        t0 = time.perf_counter()
        ws.ingest([corpus], Layer.LITERATURE)
        report = ws.build()
        seconds = time.perf_counter() - t0
        requests = getattr(ws.store._ds.store, "requests", 0) - requests0  # type: ignore[attr-defined]
    return {"documents": docs, "seconds": seconds, "triples": report.triples,
            "http_requests": requests, "peak_rss_mb": _peak_rss_mb()}


# -- the run ------------------------------------------------------------------------


def _child(args: argparse.Namespace, step: str, backend: str = "", url: str = ""
           ) -> dict[str, object]:
    command = [sys.executable, __file__, "--step", step, "--work", str(args.work),
               "--docs", str(args.docs), "--questions", str(args.questions),
               "--build-docs", str(args.build_docs), "--backend", backend, "--url", url,
               "--fill", str(args.fill)]
    done = subprocess.run(command, capture_output=True, text=True, check=False,
                          env={**os.environ, "HF_HUB_OFFLINE": "1"})
    if done.returncode:
        sys.exit(f"step {step} {backend} failed:\n{done.stderr[-4000:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])  # type: ignore[no-any-return]


def _server_memory(directory: Path) -> tuple[float, float]:
    """Virtuoso's current and peak resident memory, MiB."""
    pid = re.search(r"VIRT_PID=(\d+)", (directory / "virtuoso.lck").read_text())
    if pid is None:
        return 0.0, 0.0
    status = Path(f"/proc/{pid[1]}/status").read_text()
    values = {k: int(re.search(rf"{k}:\s+(\d+)", status)[1]) / 1024  # type: ignore[index]
              for k in ("VmRSS", "VmHWM")}
    return values["VmRSS"], values["VmHWM"]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--docs", type=int, default=500)
    ap.add_argument("--questions", type=int, default=100)
    ap.add_argument("--build-docs", type=int, default=50)
    ap.add_argument("--work", type=Path, default=None, help="work directory (kept; a "
                    "finished base workspace in it is reused)")
    ap.add_argument("--fill", type=int, default=1_000_000, help="then ask again with "
                    "the store holding at least this many quads (copies of the graph under "
                    "other base IRIs; 0: skip)")
    ap.add_argument("--step", default="", help=argparse.SUPPRESS)
    ap.add_argument("--backend", default="", help=argparse.SUPPRESS)
    ap.add_argument("--url", default="", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.step:
        work: Path = args.work
        result = {
            "base": lambda: step_base(work, args.docs),
            "write": lambda: step_write(work, args.backend, args.url),
            "ask": lambda: step_ask(work, args.backend, questions(args.docs, args.questions)),
            "build": lambda: step_build(work, args.backend, args.url, args.build_docs),
            "fill": lambda: step_fill(work, args.backend, args.url, args.fill),
        }[args.step]()
        print(json.dumps(result))
        return
    if not BC5CDR.exists():
        sys.exit(f"skip: {BC5CDR} not found (the ../shared checkout is absent)")
    from tests.servers.virtuoso import available, virtuoso

    why = available()
    if why:
        sys.exit(f"skip: {why}")
    keep = args.work is not None
    args.work = (args.work or Path(tempfile.mkdtemp(prefix="medkg-stores-"))).resolve()
    args.work.mkdir(parents=True, exist_ok=True)
    started = time.perf_counter()
    if (args.work / "base.json").exists():
        base = json.loads((args.work / "base.json").read_text())
    else:
        for leftover in ("base", "vocab-only", "corpus"):
            shutil.rmtree(args.work / leftover, ignore_errors=True)
        base = _child(args, "base")
        (args.work / "base.json").write_text(json.dumps(base))
    print(f"graph: {base['documents']} BC5CDR abstracts + the default vocabulary = "
          f"{base['quads']:,} quads ({base['concepts']:,} concepts, {base['entities']:,} "
          f"entities, {base['triples']:,} statements, {base['links']:,} links); "
          f"built on Oxigraph in {base['vocab_s']:.0f} s (vocabulary) + "
          f"{base['build_s']:.0f} s (ingest + build)", flush=True)
    rows: dict[str, dict[str, dict[str, object]]] = {b: {} for b in BACKENDS}
    upd = "sparql-update"
    with virtuoso(buffers=340_000) as server:
        rows["sparql-update"] = {"write": _child(args, "write", "sparql-update", server.url)}
        print(f"  write  sparql-update {json.dumps(rows['sparql-update']['write'])}", flush=True)
        for step in ("write", "ask", "build") if args.build_docs else ("write", "ask"):
            for backend in BACKENDS:
                result = _child(args, step, backend, server.url)
                if backend == "sparql":
                    result["server_rss_mb"], result["server_peak_mb"] = \
                        _server_memory(server.directory)
                rows[backend][step] = result
                print(f"  {step:<6} {backend:<9} {json.dumps(result)}", flush=True)
        if args.fill:
            for backend in BACKENDS:
                rows[backend]["fill"] = _child(args, "fill", backend, server.url)
                rows[backend]["ask-full"] = result = _child(args, "ask", backend, server.url)
                if backend == "sparql":
                    result["server_rss_mb"], result["server_peak_mb"] = \
                        _server_memory(server.directory)
                print(f"  fill   {backend:<9} {json.dumps(rows[backend]['fill'])}", flush=True)
                print(f"  ask    {backend:<9} {json.dumps(result)}", flush=True)
    print()
    header = ("", "oxigraph", "virtuoso")
    table = [
        ("write: quads", *(f"{rows[b]['write']['quads']:,}" for b in BACKENDS)),
        ("write: seconds", *(f"{rows[b]['write']['seconds']:.1f}" for b in BACKENDS)),
        ("write: quads/s (virtuoso: Graph Store Protocol)",
         *(f"{rows[b]['write']['per_second']:,.0f}" for b in BACKENDS)),
        ("write: quads/s (virtuoso: INSERT DATA only)", "-",
         f"{rows[upd]['write']['per_second']:,.0f}"),
        ("write: counts agree", *(str(rows[b]['write']['verified']) for b in BACKENDS)),
        ("write: medkg peak RSS MiB", *(f"{rows[b]['write']['peak_rss_mb']:.0f}"
                                        for b in BACKENDS)),
        (f"ask: p50 s ({args.questions} questions)",
         *(f"{rows[b]['ask']['p50']:.3f}" for b in BACKENDS)),
        ("ask: p95 s", *(f"{rows[b]['ask']['p95']:.3f}" for b in BACKENDS)),
        ("ask: answers with citations", *(str(rows[b]['ask']['answered_with_citations'])
                                          for b in BACKENDS)),
        ("ask: medkg peak RSS MiB", *(f"{rows[b]['ask']['peak_rss_mb']:.0f}"
                                      for b in BACKENDS)),
        *([(f"ingest + build {args.build_docs} more abstracts: s",
            *(f"{rows[b]['build']['seconds']:.1f}" for b in BACKENDS)),
           ("build: statements", *(str(rows[b]['build']['triples']) for b in BACKENDS)),
           ("build: HTTP requests", *(str(rows[b]['build']['http_requests'])
                                      for b in BACKENDS)),
           ("build: medkg peak RSS MiB", *(f"{rows[b]['build']['peak_rss_mb']:.0f}"
                                           for b in BACKENDS))] if args.build_docs else []),
        *([(f"ask with the store at {rows['sparql']['fill']['held']:,} quads: p50 s",
            *(f"{rows[b]['ask-full']['p50']:.3f}" for b in BACKENDS)),
           ("  p95 s", *(f"{rows[b]['ask-full']['p95']:.3f}" for b in BACKENDS)),
           ("  filling it took s", *(f"{rows[b]['fill']['seconds']:.0f}" for b in BACKENDS))]
          if args.fill else []),
        ("Virtuoso peak RSS MiB (VmHWM)", "-",
         f"{max(float(r.get('server_peak_mb', 0)) for r in rows['sparql'].values()):.0f}"),
    ]
    width = max(len(r[0]) for r in table)
    print(f"{header[0]:<{width}}  {header[1]:>12}  {header[2]:>12}")
    for name, a, b in table:
        print(f"{name:<{width}}  {a:>12}  {b:>12}")
    print(f"\nwhole run: {time.perf_counter() - started:.0f} s")
    if not keep:
        shutil.rmtree(args.work, ignore_errors=True)


if __name__ == "__main__":
    main()
