"""Export: each format's size, time and peak memory, and its own tool's verdict.

    python benchmarks/bench_export.py --workspace .medkg-demo --out /tmp/exports
    python benchmarks/bench_export.py --workspace WS --out DIR --formats ttl kgx-tsv \\
        --baseline-src /tmp/medkg-before          # + "ttl (before)": the old code, same graph
    python benchmarks/bench_export.py --synthetic 100000 --statements 100000 --out DIR ...

Each export runs in a child process of its own, so its peak RSS (``ru_maxrss``)
is its alone; ``--baseline-src`` names a checkout of an earlier medkg whose
``export ttl`` runs on the same workspace in the same run (the comparison holds
on a noisy machine). ``--synthetic N`` first writes a workspace of N entities
(one mention each), ``--statements`` statements with evidence, and their
documents, straight through the store API (no NLP), to measure memory at a
scale the sample corpora do not reach.

Verdicts (``--validate``; the tools run in ``.venv-interop``, made by ``make
install-dev``): ``kgx validate`` (its error counts), HermiT on the OWL,
``networkx.read_graphml`` counts, ``sssom-py`` mapping count, and the quads or
triples Oxigraph's parser reads back from each RDF file.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
INTEROP = REPO / ".venv-interop" / "bin" / "python"
DIR_FORMATS = {"kgx-tsv", "kgx-jsonl", "kgx-tsv-normalised", "neo4j-csv"}
SUFFIX = {"ttl": "ttl", "trig": "trig", "nq": "nq", "jsonld": "jsonld", "owl": "owl",
          "graphml": "graphml", "sssom": "sssom.tsv"}
ALL = ["ttl", "trig", "nq", "jsonld", "kgx-tsv", "kgx-jsonl", "kgx-tsv-normalised", "owl",
       "graphml", "neo4j-csv", "sssom"]


def target(out: Path, fmt: str, tag: str = "") -> Path:
    return out / (f"{fmt}{tag}" if fmt in DIR_FORMATS else f"graph{tag}.{SUFFIX[fmt]}")


def one(workspace: Path, fmt: str, path: Path) -> None:
    """In the child: export, then print seconds, peak RSS and the report as JSON."""
    from medkg.workspace import Workspace

    start = time.perf_counter()
    with Workspace.open(workspace) as ws:
        ws.export(path, fmt, overwrite=True)
    seconds = time.perf_counter() - start
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(json.dumps({"seconds": seconds, "peak_mb": peak}))


def run_child(workspace: Path, fmt: str, path: Path, src: Path | None = None) -> dict[str, Any]:
    env = dict(os.environ, HF_HUB_OFFLINE="1", TRANSFORMERS_OFFLINE="1")
    if src is not None:  # the earlier medkg comes first on the path
        env["PYTHONPATH"] = str(src)
    done = subprocess.run([sys.executable, __file__, "--one", str(workspace), fmt, str(path)],
                          capture_output=True, text=True, env=env, check=False)
    if done.returncode != 0:
        return {"error": done.stderr.strip().splitlines()[-1] if done.stderr else "failed"}
    result: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    result["bytes"] = (sum(f.stat().st_size for f in path.iterdir()) if path.is_dir()
                       else path.stat().st_size)
    return result


def verdict(fmt: str, path: Path) -> str:
    """What the format's own tool says of the file."""
    if fmt in ("ttl", "trig", "nq", "jsonld"):
        import pyoxigraph as ox

        kind = {"ttl": ox.RdfFormat.TURTLE, "trig": ox.RdfFormat.TRIG,
                "nq": ox.RdfFormat.N_QUADS, "jsonld": ox.RdfFormat.JSON_LD}[fmt]
        n = sum(1 for _ in ox.parse(path=str(path), format=kind))
        return f"Oxigraph parses {n:,} {'triples' if fmt == 'ttl' else 'quads'}"
    if fmt == "owl":
        from medkg.export.vocabulary import check_owl

        start = time.perf_counter()
        try:
            check_owl(path)
        except Exception as exc:
            return f"HermiT: {exc}"
        return f"HermiT: consistent ({time.perf_counter() - start:.0f} s)"
    if not INTEROP.exists():
        return "no .venv-interop (make install-dev)"
    check = str(REPO / "tests" / "interop" / "check.py")
    if fmt.startswith("kgx"):
        args = ["kgx-validate", *map(str, sorted(path.iterdir()))]
    elif fmt == "graphml":
        args = ["graphml", str(path)]
    elif fmt == "sssom":
        args = ["sssom", str(path)]
    else:
        return "read back by tests/export/test_formats.py (no neo4j-admin here)"
    done = subprocess.run([str(INTEROP), check, *args], capture_output=True, text=True,
                          check=False)
    if done.returncode != 0:
        return "tool failed: " + (done.stderr.strip().splitlines() or ["?"])[-1][:120]
    result = json.loads(done.stdout.strip().splitlines()[-1])
    if fmt.startswith("kgx"):
        errors = {k: v for level in result["summary"].values() for k, v in level.items()}
        return "kgx validate: " + (", ".join(f"{v} {k}" for k, v in errors.items())
                                   or "no errors")
    if fmt == "graphml":
        return f"networkx: {result['nodes']:,} nodes, {result['edges']:,} edges"
    return f"sssom-py: {result['mappings']:,} mappings"


def synthetic(workspace: Path, entities: int, statements: int) -> None:
    """A workspace of ``entities`` entities and ``statements`` statements."""
    from medkg.model import (
        Chunk,
        Document,
        Entity,
        Evidence,
        Layer,
        Mention,
        Predicate,
        Qualifiers,
        Triple,
    )
    from medkg.workspace import Workspace

    groups = ("DISO", "CHEM", "GENE")
    predicates = (Predicate.CAUSES, Predicate.TREATS, Predicate.ASSOCIATED_WITH)
    per_doc = 100
    with Workspace.create(workspace) as ws:
        store = ws.store
        made = 0
        for d in range(0, entities, per_doc):
            names = [f"entity {i}" for i in range(d, min(d + per_doc, entities))]
            k = max(1, statements * len(names) // entities)
            lines = [f"{names[j % len(names)]} relates to {names[(j + 1) % len(names)]}."
                     for j in range(k)]
            text = "\n".join(lines)
            doc = Document.create(layer=Layer.LITERATURE, title=f"synthetic {d}",
                                  source="synthetic", media_type="text/plain", text=text)
            chunk = Chunk.create(doc, 0, 0, len(text))
            store.add_document(doc, [chunk])
            ents: dict[str, Entity] = {}
            for name in names:
                start = text.find(name + " ")
                mention = Mention(chunk_id=chunk.id, document_id=doc.id, start=start,
                                  end=start + len(name), text=name)
                group = groups[len(ents) % 3]
                ents[name] = Entity(id=Entity.key_for(Layer.LITERATURE, name, group, None),
                                    layer=Layer.LITERATURE, name=name, type=group,
                                    mentions=[mention] if start >= 0 else [])
            store.add_entities(ents.values())
            triples, pos = [], 0
            for j, line in enumerate(lines):
                head = ents[names[j % len(names)]].id
                tail = ents[names[(j + 1) % len(names)]].id
                pred = predicates[j % 3]
                ev = Evidence(chunk_id=chunk.id, document_id=doc.id, start=pos,
                              end=pos + len(line), quote=line)
                triples.append(Triple(
                    id=Triple.key_for(Layer.LITERATURE, head, pred, tail, Qualifiers()),
                    layer=Layer.LITERATURE, head=head, predicate=pred, tail=tail,
                    evidence=[ev], confidence=0.5 + (j % 5) / 10))
                pos += len(line) + 1
            store.add_triples(triples)
            made += len(triples)
        print(f"synthetic workspace: {entities:,} entities, {made:,} statements, "
              f"{ws.store.counts().quads:,} quads", flush=True)


def main() -> None:
    if sys.argv[1:2] == ["--one"]:
        one(Path(sys.argv[2]), sys.argv[3], Path(sys.argv[4]))
        return
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--workspace", type=Path)
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--formats", nargs="+", default=ALL)
    parser.add_argument("--baseline-src", type=Path,
                        help="a checkout of an earlier medkg: its `export ttl` runs too")
    parser.add_argument("--validate", action="store_true")
    parser.add_argument("--synthetic", type=int, help="entities of a synthetic workspace")
    parser.add_argument("--statements", type=int, default=0)
    args = parser.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    workspace = args.workspace
    if args.synthetic:
        workspace = args.out / "synthetic-ws"
        if not workspace.exists():
            start = time.perf_counter()
            synthetic(workspace, args.synthetic, args.statements)
            print(f"written in {time.perf_counter() - start:.0f} s", flush=True)
    if workspace is None:
        parser.error("--workspace or --synthetic")
    print(f"\n{'format':<22} {'seconds':>8} {'peak MB':>8} {'size MB':>9}  verdict")
    rows = [(fmt, None) for fmt in args.formats]
    if args.baseline_src:
        rows.append(("ttl", args.baseline_src))
    for fmt, src in rows:
        path = target(args.out, fmt, "-before" if src else "")
        result = run_child(workspace, fmt, path, src)
        name = f"{fmt} (before)" if src else fmt
        if "error" in result:
            print(f"{name:<22} failed: {result['error'][:100]}", flush=True)
            continue
        said = verdict(fmt, path) if args.validate else ""
        print(f"{name:<22} {result['seconds']:>8.1f} {result['peak_mb']:>8.0f} "
              f"{result['bytes'] / 1e6:>9.2f}  {said}", flush=True)


if __name__ == "__main__":
    main()
