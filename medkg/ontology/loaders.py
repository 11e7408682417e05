"""One entry point for every vocabulary format, with checks shared by all.

``load_file`` picks the reader by what the path is (OBO file, UMLS RRF
directory, MeSH label list, TSV/CSV table), fills in semantic groups and
checks the hierarchy: a cycle in is_a is recorded as a warning with the ids
on the cycle (the concepts still load; nothing is silently dropped).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

from medkg.errors import VocabularyError
from medkg.model import Concept
from medkg.ontology.obo import read_obo
from medkg.ontology.owl import read_owl
from medkg.ontology.rrf import RRFFilter, read_rrf
from medkg.ontology.semantic import assign_groups
from medkg.ontology.tabular import is_mesh_list, read_mesh_list, read_table


@dataclass
class VocabularyLoad:
    concepts: list[Concept]
    source: str
    warnings: list[str] = field(default_factory=list)


def find_cycles(concepts: Iterable[Concept]) -> list[list[str]]:
    """Cycles in the parent graph, each as the list of ids on it."""
    parents = {c.id: c.parents for c in concepts}
    state: dict[str, int] = {}  # 1 = on the current path, 2 = done
    cycles: list[list[str]] = []
    for root in parents:
        if state.get(root):
            continue
        stack: list[tuple[str, int]] = [(root, 0)]
        path: list[str] = []
        while stack:
            node, i = stack.pop()
            if i == 0:
                state[node] = 1
                path.append(node)
            kids = [p for p in parents.get(node, []) if p in parents]
            if i < len(kids):
                stack.append((node, i + 1))
                nxt = kids[i]
                if state.get(nxt) == 1:
                    cycles.append([*path[path.index(nxt):], nxt])
                elif not state.get(nxt):
                    stack.append((nxt, 0))
            else:
                state[node] = 2
                path.pop()
    return cycles


def without_cycles(concepts: list[Concept]) -> list[Concept]:
    """The concepts with the edge that closes each parent cycle removed. For the
    packaged default, where merged vocabularies (MeSH trees, HPO) can disagree
    on direction; a user's own file keeps its cycles and gets a warning."""
    closing = {(cycle[-2], cycle[-1]) for cycle in find_cycles(concepts)}
    if not closing:
        return concepts
    return [c.model_copy(update={"parents": [p for p in c.parents if (c.id, p) not in closing]})
            if any((c.id, p) in closing for p in c.parents) else c for c in concepts]


def load_file(path: Path, *, rrf_filter: RRFFilter = RRFFilter()) -> VocabularyLoad:
    if path.is_dir():
        concepts = read_rrf(path, rrf_filter)
    elif not path.exists():
        raise VocabularyError(path, None, "no such file or directory")
    elif path.suffix.lower() == ".obo":
        concepts = read_obo(path)[1]
    elif path.suffix.lower() in {".owl", ".rdf", ".owx"}:
        concepts = read_owl(path)
    elif path.suffix.lower() in {".csv", ".tsv", ".tab"}:
        concepts = read_mesh_list(path) if is_mesh_list(path) else read_table(path)
    else:
        raise VocabularyError(
            path, None, f"unknown vocabulary format {path.suffix!r}",
            hint="give an .obo or .owl file, a UMLS META directory, or a .tsv/.csv table")
    if not concepts:  # a header and nothing else (found by fuzzing: was an IndexError)
        raise VocabularyError(path, None, "no concepts in it",
                              hint="a vocabulary file needs at least one term")
    return finish(concepts, concepts[0].source)


def finish(concepts: list[Concept], source: str) -> VocabularyLoad:
    """Fill in semantic groups and check the hierarchy of freshly read concepts."""
    concepts = assign_groups(concepts)
    warnings = [f"is_a cycle: {' -> '.join(c)}" for c in find_cycles(concepts)]
    return VocabularyLoad(concepts, source, warnings)


def load_default() -> VocabularyLoad:
    """The default vocabulary from installed packages (see medkg.ontology.packaged)."""
    from medkg.ontology.packaged import default_vocabulary

    return finish(without_cycles(default_vocabulary()), "medkg-default")
