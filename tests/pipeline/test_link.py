"""Linking an entity without a concept embeds its name's lexical candidates in the
vocabulary, not the whole vocabulary (``linking.concept_candidates``); the
setting is part of what links depend on, so changing it links again."""

from __future__ import annotations

from pathlib import Path

import pytest

from medkg.linking.linker import lexical_candidates
from medkg.model import Entity, Layer, LinkKind
from medkg.workspace import Workspace
from tests.conftest import copy_workspace


def _set(root: Path, name: str, value: str) -> None:
    config = root / "medkg.toml"
    lines = [f"{name} = {value}" if line.startswith(f"{name} = ") else line
             for line in config.read_text(encoding="utf-8").splitlines()]
    config.write_text("\n".join(lines) + "\n", encoding="utf-8")


def _orphan_definitions(ws: Workspace) -> tuple[list[Entity], dict[str, str]]:
    store = ws.parts.store
    orphans = [e for layer in (Layer.USER, Layer.LITERATURE) for e in store.entities(layer)
               if not e.concept_ids]
    ids = {e.id for e in orphans}
    links = {x.source: x.target for x in store.links(kind=LinkKind.DEFINITION_OF)
             if x.source in ids}
    return orphans, links


def test_lexical_candidates_only_then_all(built_workspace: Path, tmp_path: Path,
                                          monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    machine = tmp_path / "cache" / "medkg" / "concept-vectors"
    root = copy_workspace(built_workspace, tmp_path / "ws")
    _set(root, "lexical_candidates", "3")
    with Workspace.open(root) as ws:
        ws.build()  # the setting changed: linked again
        orphans, links = _orphan_definitions(ws)
        assert orphans, "the sample notes have entities the seed vocabulary does not name"
        vocabulary = ws.parts.concept_index()
        candidates = lexical_candidates(orphans, vocabulary, 3)
        assert all(target in candidates[source] for source, target in links.items())
        embedded = set(ws.parts.index("concepts").ids())
        normalised = {cid for layer in (Layer.USER, Layer.LITERATURE)
                      for e in ws.parts.store.entities(layer) for cid in e.concept_ids}
        wanted = normalised | {cid for ids in candidates.values() for cid in ids}
        assert wanted <= embedded < {c.id for c in vocabulary.concepts()}
    assert not machine.exists()  # the whole vocabulary was never embedded

    _set(root, "concept_candidates", '"all"')
    with Workspace.open(root) as ws:
        ws.build()
        _, every = _orphan_definitions(ws)
    assert machine.exists() and any(machine.iterdir())
    # with more concepts to choose from, an entity keeps its link or finds a better one
    assert set(links) <= set(every)
