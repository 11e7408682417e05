"""A workspace whose vocabulary uses real registry CURIEs (MONDO, HP, DRUGBANK,
NCBIGene), built once, and the way to run each format's own checker."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import EXAMPLES, REPO

INTEROP_PYTHON = REPO / ".venv-interop" / "bin" / "python"
CHECK = REPO / "tests" / "interop" / "check.py"

# Ids of public vocabularies with the plain names of their terms (no definitions copied).
VOCABULARY = """id\tname\tsynonyms\tsemantic_group\tsemantic_type
MONDO:0005148\ttype 2 diabetes mellitus\ttype 2 diabetes|T2DM\tDISO\tT047
MONDO:0005044\thypertension\thigh blood pressure\tDISO\tT047
MONDO:0005252\theart failure\tcardiac failure\tDISO\tT047
MONDO:0005300\tchronic kidney disease\tCKD\tDISO\tT047
HP:0002018\tnausea\t\tDISO\tT184
HP:0003128\tlactic acidosis\t\tDISO\t
HP:0012735\tcough\t\tDISO\tT184
HP:0012378\tfatigue\t\tDISO\tT184
DRUGBANK:DB00331\tmetformin\t\tCHEM\t
DRUGBANK:DB00722\tlisinopril\t\tCHEM\t
DRUGBANK:DB09038\tempagliflozin\t\tCHEM\t
NCBIGene:3630\tINS\tinsulin gene\tGENE\t
"""


def interop(*args: str) -> dict[str, Any]:
    """Run one check of tests/interop/check.py in the tools' own venv."""
    if not INTEROP_PYTHON.exists():
        pytest.skip(f"{INTEROP_PYTHON} is missing: `make install-dev` makes it")
    done = subprocess.run([str(INTEROP_PYTHON), str(CHECK), *args], capture_output=True,
                          text=True, timeout=600, check=False)
    assert done.returncode == 0, done.stderr[-3000:]
    result: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


@pytest.fixture(scope="session")
def registry_vocabulary(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("vocab") / "terms.tsv"
    path.write_text(VOCABULARY, encoding="utf-8")
    return path


@pytest.fixture(scope="session")
def registry_workspace(tmp_path_factory: pytest.TempPathFactory,
                       registry_vocabulary: Path) -> Path:
    """Three literature documents and two notes over a vocabulary of real CURIEs."""
    from medkg.model import Layer
    from medkg.workspace import Workspace

    root = tmp_path_factory.mktemp("registry") / "ws"
    with Workspace.create(root) as ws:
        ws.load_vocabulary(registry_vocabulary)
        ws.ingest([EXAMPLES / "literature" / n for n in
                   ("01-type2-diabetes.md", "02-hypertension.md", "03-heart-failure.md")],
                  Layer.LITERATURE)
        ws.ingest([EXAMPLES / "user" / "note-01-diabetes-followup.txt",
                   EXAMPLES / "user" / "note-02-cough-on-lisinopril.txt"], Layer.USER)
        ws.build()
    return root
