"""A set of derived files replaced as one step (``files.commit_files``): a crash
at any point leaves the old set or the new one, never a mix its manifest does not
vouch for."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from medkg import files

NAMES = ["a.json", "b.bin"]


def _stage(directory: Path, version: str) -> None:
    for name in NAMES:
        (directory / f"{name}.next").write_text(f"{name} {version}", encoding="utf-8")


def _read(directory: Path) -> list[str]:
    return [(directory / n).read_text(encoding="utf-8") for n in NAMES]


@pytest.fixture
def old(tmp_path: Path) -> Path:
    _stage(tmp_path, "old")
    files.commit_files(tmp_path, NAMES, "test")
    assert files.manifest_matches(tmp_path) and _read(tmp_path) == ["a.json old", "b.bin old"]
    return tmp_path


def test_a_crash_before_the_commit_point_leaves_the_old_set(old: Path) -> None:
    _stage(old, "new")  # written, not committed
    assert not files.finish_commit(old)
    assert files.manifest_matches(old) and _read(old) == ["a.json old", "b.bin old"]


@pytest.mark.parametrize("renamed", [0, 1, 2])
def test_a_crash_after_the_commit_point_is_finished(old: Path, renamed: int) -> None:
    _stage(old, "new")
    entries = {n: files.digest(old / f"{n}.next") for n in NAMES}
    files.write_text(old / files.PENDING,
                     json.dumps({"derived_from": "test", "files": entries}, sort_keys=True))
    for name in NAMES[:renamed]:  # the crash came after this many renames
        os.replace(old / f"{name}.next", old / name)
    assert files.finish_commit(old)
    assert files.manifest_matches(old) and _read(old) == ["a.json new", "b.bin new"]
    assert not (old / files.PENDING).exists()
    assert not files.finish_commit(old)  # nothing left to finish
