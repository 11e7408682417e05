"""Checks medkg's export files with each format's own tools; runs in .venv-interop.

    python tests/interop/check.py kgx-validate FILE...   # KGX's validator, Biolink model offline
    python tests/interop/check.py graphml FILE           # networkx.read_graphml
    python tests/interop/check.py sssom FILE             # sssom-py parse
    python tests/interop/check.py biolink TOML           # categories, predicates, enums vs bmt

Each prints one JSON object. KGX and bmt read the Biolink model from the web by
default; here they read the copy the ``biolink-model`` package ships (the
predicate mapping file, which no package ships, is not needed to validate).
"""

from __future__ import annotations

import contextlib
import importlib.util
import io
import json
import sys
import tomllib
from pathlib import Path
from typing import Any


def _biolink_root() -> Path:
    spec = importlib.util.find_spec("biolink_model")
    assert spec is not None and spec.submodule_search_locations
    return Path(spec.submodule_search_locations[0])


def _offline_bmt() -> None:
    import bmt.toolkit as tk

    defaults = list(tk.Toolkit.__init__.__defaults__ or ())
    defaults[0] = str(_biolink_root() / "schema" / "biolink_model.yaml")
    defaults[1] = {"predicate mappings": []}
    tk.Toolkit.__init__.__defaults__ = tuple(defaults)


def kgx_validate(files: list[str]) -> dict[str, Any]:
    _offline_bmt()
    import kgx.config as kc

    context = json.loads((_biolink_root() / "prefixmaps" / "biolink-model-prefix-map.json")
                         .read_text(encoding="utf-8"))
    for name in ("biolink", "monarch_context", "obo_context"):
        kc.jsonld_context_map[name] = context
    import kgx.cli.cli_utils as cli_utils

    fmt = "jsonl" if files[0].endswith(".jsonl") else "tsv"
    files = sorted(files, key=lambda f: "nodes" not in Path(f).name)  # KGX reads nodes first
    cli_utils.stdout = io.StringIO()  # it prints the report it returns
    with contextlib.redirect_stdout(io.StringIO()):
        report = cli_utils.validate(inputs=files, input_format=fmt, input_compression=None,
                                    output=None)
    summary = {level: {kind: sum(len(set(v)) for v in messages.values())
                       for kind, messages in kinds.items()}
               for level, kinds in report.items()}
    return {"summary": summary, "report": report}


def graphml(path: str) -> dict[str, Any]:
    import networkx as nx

    g = nx.read_graphml(path)
    layers: dict[str, int] = {}
    for _n, data in g.nodes(data=True):
        layers[data.get("layer", "")] = layers.get(data.get("layer", ""), 0) + 1
    return {"nodes": g.number_of_nodes(), "edges": g.number_of_edges(),
            "multigraph": g.is_multigraph(), "node_layers": layers,
            "edge_attrs": sorted({k for *_e, d in g.edges(data=True) for k in d})}


def sssom(path: str) -> dict[str, Any]:
    from sssom.parsers import parse_sssom_table

    msdf = parse_sssom_table(path)
    df = msdf.df
    return {"mappings": len(df), "predicates": sorted(set(df["predicate_id"])),
            "prefixes": sorted(msdf.converter.prefix_map)}


def biolink(toml_path: str) -> dict[str, Any]:
    _offline_bmt()
    from bmt import Toolkit

    tk = Toolkit()
    data = tomllib.loads(Path(toml_path).read_text(encoding="utf-8"))
    bad = [f"{section}.{k} = {v}" for section in ("groups", "semantic_types", "prefixes")
           for k, v in data[section].items() if not tk.is_category(v)]
    bad += [f"import_predicates: {k}" for k in data["import_predicates"]
            if not tk.is_predicate(k)]
    agents = set(tk.view.get_enum("AgentTypeEnum").permissible_values)
    levels = set(tk.view.get_enum("KnowledgeLevelEnum").permissible_values)
    bad += [f"agent_types.{k} = {v}" for k, v in data["agent_types"].items() if v not in agents]
    return {"model": tk.get_model_version(), "bad": bad, "knowledge_levels": sorted(levels),
            "predicates_known": {p: tk.is_predicate(p) for p in sys.argv[3:]}}


def main() -> None:
    command, args = sys.argv[1], sys.argv[2:]
    if command == "kgx-validate":
        result = kgx_validate(args)
    elif command == "graphml":
        result = graphml(args[0])
    elif command == "sssom":
        result = sssom(args[0])
    elif command == "biolink":
        result = biolink(args[0])
    else:
        raise SystemExit(f"unknown check {command}")
    print(json.dumps(result))


if __name__ == "__main__":
    main()
