"""Fault injection: ``medkg ingest``, ``build``, ``delete`` and ``vocab load``,
each killed with SIGKILL (a real child process) at seeded points spread over
the whole command, then run again; the graph (sorted N-Quads) and every
derived index must equal those of one uninterrupted run, no delete may be
left pending, and a question must be answered.

Derived data compared: chunk, entity and concept vectors, the lexical index,
the concept index and the tag tree (with their manifests).

Marked ``faults``: ``make test`` leaves them out (they are the slowest tests);
``.ci/run`` runs them after it with one kill point a command, ``make
test-faults`` with 20. ``FAULT_POINTS`` sets the points (3 when unset).
"""

from __future__ import annotations

import json
import os
import random
import re
import shutil
import signal
import sqlite3
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest

from medkg.files import manifest_matches
from medkg.model import Layer
from medkg.workspace import Workspace
from tests.conftest import EXAMPLES, REPO, SEED_OBO

pytestmark = [pytest.mark.slow, pytest.mark.faults]

POINTS = int(os.environ.get("FAULT_POINTS", "3"))
SEED = 20261201
LITERATURE = ["01-type2-diabetes.md", "02-hypertension.md", "07-chronic-kidney-disease.md"]
NOTES = ["note-01-diabetes-followup.txt", "note-02-cough-on-lisinopril.txt"]
QUESTION = "What are the adverse effects of metformin?"
LOAD_TIME = re.compile(r'<http://www.w3.org/ns/prov#generatedAtTime> "[^"]*"')
# Every vocabulary load makes a new version, which extraction marks name.
MARK_VOCABULARY = re.compile(r'"extracted@([0-9a-f]+)/[0-9a-f]+"')


def medkg(args: list[str], kill_at: int = 0) -> subprocess.CompletedProcess[str]:
    """Run ``medkg ARGS`` in a child process, killed at its ``kill_at``-th call
    into medkg's code (0: not killed)."""
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"}
    return subprocess.run(
        [sys.executable, "-m", "tests.faults.killer", str(kill_at), "--", *args],
        cwd=REPO, env=env, capture_output=True, text=True, timeout=900, check=False)


def calls_of(done: subprocess.CompletedProcess[str]) -> int:
    found = re.findall(r"calls: (\d+)", done.stderr)
    assert found, done.stderr[-2000:]
    return int(found[-1])


def snapshot(root: Path) -> dict[str, object]:
    """The graph and everything derived from it, comparable between runs."""
    out: dict[str, object] = {}
    with Workspace.open(root) as ws:
        out["quads"] = sorted(MARK_VOCABULARY.sub(r'"extracted@\1/<version>"', LOAD_TIME.sub(
            "<load time>", " ".join(t.n3() for t in q))) for q in ws.store.quads())
        state = ws.parts.fingerprints
        out["pending deletes"] = state.pending_deletes()
        # "vocabulary": a new version with every load; "reconciled": a stamp of the
        # derived files' times, a cache key only
        out["stages"] = sorted((k, v) for k, v in state.recorded().items()
                               if k not in ("vocabulary", "reconciled"))
    vectors = root / "vectors"
    for kind in ("chunks", "entities", "concepts"):
        path = vectors / f"{kind}.npz"
        if path.exists():
            with np.load(path) as data:
                order = np.argsort(data["ids"])
                out[f"{kind} vectors"] = (list(data["ids"][order]),
                                          np.round(data["vectors"][order], 5).tobytes())
    lexical = vectors / "lexical.sqlite"
    if lexical.exists():
        db = sqlite3.connect(lexical)
        out["lexical index"] = sorted(db.execute(
            "SELECT r.id, t.tokens FROM chunk_terms AS t JOIN chunk_rows AS r ON r.n = t.rowid"
        ).fetchall())
        db.close()
    terms = vectors / "concept-terms"
    if (terms / "concepts.jsonl").exists():
        out["concept index valid"] = manifest_matches(terms)
        out["concept index"] = sorted((terms / "concepts.jsonl").read_text().splitlines())
    tree = root / "retrieval" / "tagtree.json"
    if tree.exists():
        out["tag tree valid"] = manifest_matches(tree.parent)
        out["tag tree"] = json.loads(tree.read_text())
    return out


def _docs(tmp: Path) -> tuple[Path, Path]:
    lit, user = tmp / "docs" / "literature", tmp / "docs" / "user"
    lit.mkdir(parents=True)
    user.mkdir(parents=True)
    for name in LITERATURE:
        shutil.copy(EXAMPLES / "literature" / name, lit / name)
    for name in NOTES:
        shutil.copy(EXAMPLES / "user" / name, user / name)
    return lit, user


def _updated_vocabulary(tmp: Path) -> Path:
    """The seed vocabulary with changed names and definitions: a reload replaces."""
    text = SEED_OBO.read_text(encoding="utf-8")
    text = re.sub(r'^def: "', 'def: "(revised) ', text, flags=re.MULTILINE)
    text = re.sub(r"^name: (.*)$", r"name: \1 (revised)", text, count=20, flags=re.MULTILINE)
    path = tmp / "seed-revised.obo"
    path.write_text(text, encoding="utf-8")
    return path


Scenario = tuple[Callable[[Path, Path, Path], None], Callable[[Path, Path, Path, Path], list[str]]]


def _prepare_vocab(ws: Path, lit: Path, user: Path) -> None:
    with Workspace.create(ws) as w:
        w.load_vocabulary(SEED_OBO)


def _prepare_built(ws: Path, lit: Path, user: Path) -> None:
    with Workspace.create(ws) as w:
        w.load_vocabulary(SEED_OBO)
        w.ingest([lit], Layer.LITERATURE)
        w.ingest([user], Layer.USER)
        w.build()


def _prepare_ingested(ws: Path, lit: Path, user: Path) -> None:
    with Workspace.create(ws) as w:
        w.load_vocabulary(SEED_OBO)
        w.ingest([lit], Layer.LITERATURE)
        w.ingest([user], Layer.USER)


def _delete_args(ws: Path, lit: Path, user: Path, tmp: Path) -> list[str]:
    with Workspace.open(ws) as w:
        ids = [w.store.document_ids(Layer.LITERATURE)[0], w.store.document_ids(Layer.USER)[0]]
    return ["delete", *ids, "-w", str(ws)]


def _prepare_edited(ws: Path, lit: Path, user: Path) -> None:
    """Built; then one note edited, one removed, one added (for ``ingest --sync``)."""
    _prepare_built(ws, lit, user)
    first, second = (user / name for name in NOTES)
    first.write_text(first.read_text(encoding="utf-8") + "\nPlan: start amlodipine 5 mg.\n",
                     encoding="utf-8")
    second.unlink()
    (user / "note-03-new.txt").write_text("Metformin was started for type 2 diabetes.\n",
                                          encoding="utf-8")


def _prepare_stale(ws: Path, lit: Path, user: Path) -> None:
    """Built; then a vocabulary update that touches some documents (re-extraction)."""
    _prepare_built(ws, lit, user)
    with Workspace.open(ws) as w:
        w.load_vocabulary(_updated_vocabulary(ws.parent))
        assert w.extraction_status().stale_vocabulary


SCENARIOS: dict[str, Scenario] = {
    "ingest": (_prepare_vocab,
               lambda ws, lit, user, tmp: ["ingest", str(lit), "--layer", "literature",
                                           "-w", str(ws)]),
    "build": (_prepare_ingested, lambda ws, lit, user, tmp: ["build", "-w", str(ws)]),
    "delete": (_prepare_built, _delete_args),
    "ingest --sync": (_prepare_edited,
                      lambda ws, lit, user, tmp: ["ingest", "--sync", str(user), "-w", str(ws)]),
    "re-extract": (_prepare_stale, lambda ws, lit, user, tmp: ["build", "-w", str(ws)]),
    "vocab load": (_prepare_built,
                   lambda ws, lit, user, tmp: ["vocab", "load", str(_updated_vocabulary(tmp)),
                                               "-w", str(ws)]),
}


@pytest.mark.parametrize("command", list(SCENARIOS))
def test_killed_at_any_point_then_rerun_equals_one_uninterrupted_run(
        command: str, tmp_path: Path) -> None:
    prepare, make_args = SCENARIOS[command]
    lit, user = _docs(tmp_path)
    start = tmp_path / "start"
    prepare(start, lit, user)

    reference = tmp_path / "reference"
    shutil.copytree(start, reference)
    args = make_args(reference, lit, user, tmp_path)
    done = medkg(args)
    assert done.returncode == 0, done.stderr[-3000:]
    total = calls_of(done)
    expected = snapshot(reference)

    points = sorted(random.Random(f"{SEED}-{command}").sample(range(1, total + 1), POINTS))
    killed = 0
    for point in points:
        trial = tmp_path / f"killed-{point}"
        shutil.copytree(start, trial)
        args = make_args(trial, lit, user, tmp_path)
        first = medkg(args, kill_at=point)
        killed += first.returncode == -signal.SIGKILL
        again = medkg(args)
        # A re-run of a delete may report ids the killed run had already deleted.
        allowed = (0, 1) if command == "delete" else (0,)
        assert again.returncode in allowed, (point, again.stderr[-3000:])
        if again.returncode == 1:
            assert "no document with id" in again.stderr, again.stderr[-3000:]
        got = snapshot(trial)
        assert got.keys() == expected.keys(), point
        for key in expected:
            assert got[key] == expected[key], f"{command} killed at call {point}: {key} differs"
        if point == points[0] and command != "vocab load":
            with Workspace.open(trial) as ws:
                answer = ws.ask(QUESTION)
                assert answer.text and answer.citations, answer.render()
        shutil.rmtree(trial)
    assert killed == POINTS, f"only {killed} of {POINTS} runs were killed (of {total} calls)"
    print(f"{command}: {POINTS} kill points of {total} calls, all identical after a re-run")
