"""Coverage-guided fuzzing (atheris) of every reader for a bounded time each
(``FUZZ_SECONDS``, default 8): no input may make a reader raise anything but a
MedKGError naming its file. A crash leaves the input under the test's tmp dir."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import REPO
from tests.fuzz.targets import TARGETS

pytest.importorskip("atheris", reason="atheris is not installed (make install-dev)")
SECONDS = int(os.environ.get("FUZZ_SECONDS", "8"))


@pytest.mark.parametrize("name", sorted(TARGETS))
def test_fuzzing_finds_no_escaping_exception(name: str, tmp_path: Path) -> None:
    artifacts = tmp_path / "crashes"
    artifacts.mkdir()
    done = subprocess.run(
        [sys.executable, "-m", "tests.fuzz.fuzz_readers", name, f"-max_total_time={SECONDS}",
         "-seed=1", "-rss_limit_mb=4096", f"-artifact_prefix={artifacts}/",
         str(tmp_path / "corpus")],
        cwd=REPO, capture_output=True, text=True, errors="replace", timeout=SECONDS * 10 + 120,
        env={**os.environ, "HF_HUB_OFFLINE": "1"})
    tail = done.stderr[-3000:]
    assert done.returncode == 0, f"{name}: {sorted(p.name for p in artifacts.iterdir())}\n{tail}"
    runs = re.search(r"Done (\d+) runs", done.stderr)
    assert runs is not None and int(runs.group(1)) > 0, tail
