"""Coverage-guided fuzzing of one reader with atheris (libFuzzer for Python):

    python -m tests.fuzz.fuzz_readers NAME [libFuzzer options] [CORPUS_DIR]

``NAME`` is a target of ``targets.py``; its seeds are written into CORPUS_DIR
(made if missing) before the run. An input that makes the reader raise anything
but a MedKGError naming its file is a crash: libFuzzer writes it out
(``-artifact_prefix``) and the exit status is not 0.
``tests/fuzz/test_readers_fuzz.py`` runs every target for a bounded time."""

from __future__ import annotations

import sys
from pathlib import Path

import atheris

# The readers are imported here, inside the instrumentation, so that libFuzzer
# sees their branches (the targets import them lazily).
with atheris.instrument_imports(include=["medkg", "pypdf", "tomllib"]):
    import pypdf  # noqa: F401

    from tests.fuzz.targets import TARGETS, run


def main() -> None:
    name, *options = sys.argv[1:]
    target = TARGETS[name]
    corpus = [o for o in options if not o.startswith("-")]
    for directory in corpus:
        Path(directory).mkdir(parents=True, exist_ok=True)
        for i, seed in enumerate(target.seeds):
            (Path(directory) / f"seed-{i}").write_bytes(seed)

    def one_input(data: bytes) -> None:
        run(target, data)

    atheris.Setup([sys.argv[0], *options], one_input)
    atheris.Fuzz()


if __name__ == "__main__":
    main()
