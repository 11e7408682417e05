"""No source file over 500 lines without a reason written at its top (in its first
twelve lines: "Over 500 lines because ...")."""

from __future__ import annotations

from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1] / "medkg"
LIMIT = 500


def test_long_files_say_why() -> None:
    unexplained = []
    for path in sorted([*PACKAGE.rglob("*.py"), *PACKAGE.rglob("*.js")]):
        lines = path.read_text(encoding="utf-8").splitlines()
        if len(lines) > LIMIT and not any("Over 500 lines because" in line
                                          for line in lines[:12]):
            unexplained.append(f"{path.relative_to(PACKAGE.parent)}: {len(lines)} lines")
    assert not unexplained, "\n".join(unexplained)


def test_retrieval_files_stay_under_400_lines() -> None:
    long = [f"{p.name}: {n}" for p in sorted((PACKAGE / "retrieval").glob("*.py"))
            if (n := len(p.read_text(encoding="utf-8").splitlines())) > 400]
    assert not long, long
