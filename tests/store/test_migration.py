"""A workspace made by the release before the typed tables (its graph in Oxigraph)
opens with this release: its graph moves into the tables once, nothing is
re-extracted, curators' decisions and revisions stay, and it answers as before.

The old workspace is built in the test by the previous release's own code (a git
worktree of the commit before the tables), run in a child process."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from medkg.model import Layer
from medkg.pipeline.marks import documents_to_extract
from medkg.workspace import Workspace
from tests.conftest import EXAMPLES, REPO, SEED_OBO

pytestmark = pytest.mark.slow
BEFORE_TABLES = "63dd16a"  # the last release whose graph lived in Oxigraph
QUESTION = "What treats type 2 diabetes?"

OLD_BUILD = """
import json, sys
from pathlib import Path
from medkg.model import Layer, ReviewAction
from medkg.pipeline.review import Request
from medkg.workspace import Workspace

root, seed, examples = Path(sys.argv[1]), Path(sys.argv[2]), Path(sys.argv[3])
with Workspace.create(root) as ws:
    ws.load_vocabulary(seed)
    ws.ingest([examples / "literature" / "01-type2-diabetes.md"], Layer.LITERATURE)
    ws.ingest([examples / "user" / "note-01-diabetes-followup.txt"], Layer.USER)
    ws.build()
    statements = sorted(ws.store.triples(Layer.LITERATURE), key=lambda t: t.id)
    ws.review(Request(ReviewAction.ACCEPT, statements[0].id, "checked"), "curator")
    ws.review(Request(ReviewAction.REJECT, statements[1].id, "wrong"), "curator")
    ws.build()
    answer = ws.ask(sys.argv[4])
    counts = ws.store.counts()
    print(json.dumps({
        "text": answer.text, "citations": [c.chunk_id for c in answer.citations],
        "entities": counts.entities, "triples": counts.triples,
        "documents": counts.user.documents + counts.literature.documents,
        "chunks": counts.user.chunks + counts.literature.chunks, "links": counts.links,
        "decisions": counts.decisions,
        "reviews": {t.id: t.review.value for t in ws.store.triples()}}))
"""


@pytest.fixture
def old_release(tmp_path: Path) -> Iterator[Path]:
    """A worktree of the release before the tables (skips outside a git clone)."""
    git = shutil.which("git")
    if git is None or not (REPO / ".git").exists():
        pytest.skip("needs a git clone of medkg (the old release is built from its history)")
    if subprocess.run([git, "-C", str(REPO), "cat-file", "-e", f"{BEFORE_TABLES}^{{commit}}"],
                      capture_output=True).returncode != 0:
        pytest.skip(f"this clone lacks commit {BEFORE_TABLES} (a shallow clone?)")
    where = tmp_path / "old-release"
    subprocess.run([git, "-C", str(REPO), "worktree", "add", "--detach", str(where),
                    BEFORE_TABLES], check=True, capture_output=True)
    try:
        yield where
    finally:
        subprocess.run([git, "-C", str(REPO), "worktree", "remove", "--force", str(where)],
                       capture_output=True)


def test_an_old_workspace_moves_into_the_tables_and_answers_the_same(
        old_release: Path, tmp_path: Path) -> None:
    root = tmp_path / "ws"
    env = {k: v for k, v in os.environ.items() if not k.startswith("MEDKG_STORE__")}
    env["PYTHONPATH"] = str(old_release)
    done = subprocess.run([sys.executable, "-c", OLD_BUILD, str(root), str(SEED_OBO),
                           str(EXAMPLES), QUESTION], cwd=old_release, env=env,
                          capture_output=True, text=True, timeout=900)
    assert done.returncode == 0, done.stderr[-3000:]
    before = json.loads(done.stdout.strip().splitlines()[-1])
    assert (root / "graph").is_dir() and not (root / "tables").exists()

    with Workspace.open(root) as ws:
        counts = ws.store.counts()  # the first use of the graph moves it
        assert ws.settings.store.backend == "sqlite"
        assert (counts.entities, counts.triples, counts.links, counts.decisions) == (
            before["entities"], before["triples"], before["links"], before["decisions"])
        assert counts.user.documents + counts.literature.documents == before["documents"]
        assert counts.user.chunks + counts.literature.chunks == before["chunks"]
        assert {t.id: t.review.value for t in ws.store.triples()} == before["reviews"]
        assert documents_to_extract(ws.store) == []  # nothing is extracted again
        answer = ws.ask(QUESTION)
        assert answer.text == before["text"]
        assert [c.chunk_id for c in answer.citations] == before["citations"]
        report = ws.build()
        assert report.documents == 0 and report.review_unresolved == 0
    assert not (root / "graph").exists() and (root / "tables").is_dir()
    assert 'backend = "sqlite"' in (root / "medkg.toml").read_text(encoding="utf-8")
    with Workspace.open(root) as ws:  # once: the second open finds nothing to move
        assert ws.store.counts().triples == before["triples"]
        assert ws.store.triples(Layer.LITERATURE)
