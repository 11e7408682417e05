"""Shared fixtures. The real embedding model loads once per session."""

from __future__ import annotations

import os
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
# Endpoint confirmations (medkg trust) go to a directory of the test run's own,
# never the user's ~/.config; child processes inherit it.
os.environ["XDG_CONFIG_HOME"] = tempfile.mkdtemp(prefix="medkg-tests-config-")

REPO = Path(__file__).resolve().parents[1]
EXAMPLES = REPO / "examples"
SEED_OBO = EXAMPLES / "vocabulary" / "medkg-seed.obo"
SHARED = REPO.parent / "shared" / "data"


@pytest.fixture(scope="session")
def embedder() -> Iterator[object]:
    from medkg.config import EmbeddingConfig
    from medkg.linking.embeddings import SentenceTransformerEmbedder

    yield SentenceTransformerEmbedder(EmbeddingConfig())


@pytest.fixture(scope="session")
def seed_concepts() -> list[object]:
    from medkg.ontology.obo import read_obo

    return list(read_obo(SEED_OBO)[1])


@pytest.fixture(scope="session")
def nlp(seed_concepts: list[object]) -> object:
    from medkg.construction.nlp import build_pipeline
    from medkg.ontology.index import ConceptIndex

    return build_pipeline(ConceptIndex(seed_concepts), 3)  # type: ignore[arg-type]


def shared_path(*parts: str) -> Path:
    """A path under ../shared/data, or skip the test with a clear reason."""
    path = SHARED.joinpath(*parts)
    if not path.exists():
        pytest.skip(f"reference data not available: {path} (the ../shared checkout is absent)")
    return path


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    """Which CPU the run had: llama.cpp's kernels (the local-model tests) depend on it."""
    from medkg.llm.gguf_backend import cpu_flags

    name, flags = cpu_flags()
    amx = sorted(f for f in flags if f.startswith("amx"))
    simd = [f for f in ("avx2", "avx512f", "avx512_vnni", "avx_vnni") if f in flags]
    terminalreporter.write_line(
        f"CPU: {name or 'unknown'}; AMX: {', '.join(amx) or 'none'}; "
        f"SIMD: {', '.join(simd) or 'none'}")
