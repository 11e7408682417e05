"""The layering of docs/ARCHITECTURE.md, checked on the code: no module imports a
module of a layer above its own (lazy imports inside functions included; imports
only for type checking are not code and are left out), and only
``store/registry.py`` names a concrete store backend."""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1] / "medkg"

# From the bottom; a module's layer is that of its first dotted prefix listed.
LAYERS: list[set[str]] = [
    {"model", "errors", "timing", "memory", "files", "lock", "text", "layout", "sqlitefile",
     "identifiers", "fingerprints", "unionfind", "abbreviations"},
    {"config", "modelref", "ontology"},
    {"store", "linking", "llm"},
    {"rulehub", "review", "export", "tagtree", "retrieval", "publish", "publish_neo4j"},
    {"reading", "extraction", "growth"},
    {"components"},
    {"engines"},
    {"pipeline"},
    {"workspace"},
    {"server", "evaluation", "integrations"},
    {"cli"},
]
BACKENDS = {"medkg.store.tables", "medkg.store.rdf", "medkg.store.sparql",
            "medkg.store.neo4j", "medkg.store.sql"}
# Modules that name a backend without choosing the workspace's store, and why.
BACKEND_USERS = {
    # publish sends to a SPARQL server through the protocol client, and reads the
    # typed tables' revision: it needs those two, whatever the workspace's store is
    ("medkg.publish", "medkg.store.sparql"), ("medkg.publish", "medkg.store.tables"),
    # the workspace's facade: the typed tables' own features (a copy to them, the
    # target of `publish`), checked by isinstance; the SPARQL endpoint's parser
    ("medkg.workspace", "medkg.store.tables"), ("medkg.workspace", "medkg.store.sparql"),
}


def layer_of(module: str) -> int:
    first = module.removeprefix("medkg.").split(".")[0]
    for number, names in enumerate(LAYERS):
        if first in names:
            return number
    raise AssertionError(f"{module} is in no layer of tests/test_layering.py: add it")


def _type_checking(node: ast.If) -> bool:
    test = node.test
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING")


def imports(path: Path) -> list[tuple[int, str]]:
    """(line, module) of every medkg import the module's code makes."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    package = ".".join(path.relative_to(PACKAGE.parent).with_suffix("").parts[:-1])
    found: list[tuple[int, str]] = []

    def visit(node: ast.AST) -> None:
        if isinstance(node, ast.If) and _type_checking(node):
            for child in node.orelse:
                visit(child)
            return
        if isinstance(node, ast.Import):
            found.extend((node.lineno, a.name) for a in node.names if a.name.startswith("medkg"))
        elif isinstance(node, ast.ImportFrom):
            if node.level:  # relative
                base = package.rsplit(".", node.level - 1)[0] if node.level > 1 else package
                name = f"{base}.{node.module}" if node.module else base
            else:
                name = node.module or ""
            if name.startswith("medkg"):
                # "from medkg.pipeline import ask": the module is medkg.pipeline.ask
                found.extend((node.lineno, f"{name}.{a.name}") if (
                    PACKAGE.parent / name.replace(".", "/") / f"{a.name}.py").exists()
                    else (node.lineno, name) for a in node.names)
        for child in ast.iter_child_nodes(node):
            visit(child)

    visit(tree)
    return found


def modules() -> list[tuple[str, Path]]:
    out = []
    for path in sorted(PACKAGE.rglob("*.py")):
        parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
        name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
        if name != "medkg":
            out.append((name, path))
    return out


def test_no_module_imports_a_layer_above_its_own() -> None:
    upward = []
    for name, path in modules():
        mine = layer_of(name)
        for line, target in imports(path):
            if target != "medkg" and layer_of(target) > mine:
                upward.append(f"{path.relative_to(PACKAGE.parent)}:{line} ({name}, layer "
                              f"{mine}) imports {target} (layer {layer_of(target)})")
    assert not upward, "\n".join(upward)


def test_only_the_registry_names_a_store_backend() -> None:
    named = [f"{path.relative_to(PACKAGE.parent)}:{line} imports {target}"
             for name, path in modules() if not name.startswith("medkg.store")
             for line, target in imports(path)
             if any(target == b or target.startswith(b + ".") for b in BACKENDS)
             and (name, target) not in BACKEND_USERS]
    assert not named, "\n".join(named)


def test_every_module_has_a_layer() -> None:
    for name, _path in modules():
        layer_of(name)
