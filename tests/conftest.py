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
    from medkg.extraction.nlp import build_pipeline
    from medkg.ontology.index import ConceptIndex

    return build_pipeline(ConceptIndex(seed_concepts), 3)  # type: ignore[arg-type]


@pytest.fixture(scope="session")
def sparql_url() -> Iterator[str]:
    """A SPARQL 1.1 server for the sparql backend: ``MEDKG_TEST_SPARQL_URL`` (query and
    update endpoint, anonymous updates allowed), else a private Virtuoso this session
    starts and stops (tests/servers/virtuoso.py). Without either the tests skip,
    unless ``MEDKG_REQUIRE_SPARQL=1`` (CI) makes that an error."""
    url = os.environ.get("MEDKG_TEST_SPARQL_URL")
    if url:
        yield url
        return
    from tests.servers.virtuoso import available, virtuoso

    why = available()
    if why:
        if os.environ.get("MEDKG_REQUIRE_SPARQL") == "1":
            pytest.fail(f"MEDKG_REQUIRE_SPARQL=1 but no SPARQL server: {why}")
        pytest.skip(f"sparql backend not tested: {why}; or set MEDKG_TEST_SPARQL_URL")
    with virtuoso() as server:
        yield server.url


@pytest.fixture(scope="session")
def postgres_server() -> Iterator[object]:
    """A private PostgreSQL cluster for the postgres backend (tests/servers/postgres.py),
    for the whole session. Without PostgreSQL the tests skip, unless
    ``MEDKG_REQUIRE_POSTGRES=1`` (CI) makes that an error."""
    from tests.servers.postgres import PASSWORD, available, postgres

    why = available()
    if why:
        if os.environ.get("MEDKG_REQUIRE_POSTGRES") == "1":
            pytest.fail(f"MEDKG_REQUIRE_POSTGRES=1 but no PostgreSQL: {why}")
        pytest.skip(f"postgres backend not tested: {why}")
    os.environ["MEDKG_TEST_PG_PASSWORD"] = PASSWORD
    with postgres() as server:
        yield server


def graph_store_url(sparql_url: str) -> str:
    """The Graph Store Protocol endpoint beside a test SPARQL endpoint
    (``MEDKG_TEST_SPARQL_GSP_URL``, else Virtuoso's ``/sparql-graph-crud``)."""
    return os.environ.get("MEDKG_TEST_SPARQL_GSP_URL") or (
        sparql_url.removesuffix("sparql") + "sparql-graph-crud")


def store_config(backend: str, request: pytest.FixtureRequest,
                 base_iri: str = "https://example.org/kg/", *, bulk: bool = False) -> object:
    """The settings that open ``backend`` for one test; on a server, under a base IRI
    of its own, so tests sharing the server never see each other's graph (``bulk``:
    inserts through the Graph Store Protocol)."""
    from uuid import uuid4

    from medkg.config import StoreConfig

    if backend == "neo4j":
        uri = os.environ.get("MEDKG_TEST_NEO4J_URI")
        if not uri:
            pytest.skip("neo4j backend not tested: no Neo4j server installs from the reachable "
                        "registries; set MEDKG_TEST_NEO4J_URI to a throwaway database (each "
                        "test empties it), with MEDKG_TEST_NEO4J_USER and "
                        "MEDKG_TEST_NEO4J_PASSWORD")
        from neo4j import GraphDatabase

        auth = (os.environ.get("MEDKG_TEST_NEO4J_USER", "neo4j"),
                os.environ.get("MEDKG_TEST_NEO4J_PASSWORD", ""))
        with GraphDatabase.driver(uri, auth=auth) as driver:
            driver.execute_query("MATCH (n) DETACH DELETE n")
        return StoreConfig(backend="neo4j", url=uri, user=auth[0],
                           password_env="MEDKG_TEST_NEO4J_PASSWORD", base_iri=base_iri)
    if backend == "sparql":
        url = request.getfixturevalue("sparql_url")
        return StoreConfig(backend="sparql", url=url,
                           graph_store_url=graph_store_url(url) if bulk else "",
                           base_iri=f"{base_iri.rstrip('/')}/{uuid4().hex[:12]}/")
    if backend == "postgres":
        server = request.getfixturevalue("postgres_server")
        return StoreConfig(backend="postgres", url=server.url, base_iri=base_iri,
                           schema_name=f"t_{uuid4().hex[:12]}",
                           password_env="MEDKG_TEST_PG_PASSWORD")
    return StoreConfig(backend=backend, base_iri=base_iri)  # type: ignore[arg-type]


@pytest.fixture(params=["sqlite", "postgres"])
def tables_config(request: pytest.FixtureRequest) -> object:
    """The settings of each engine under the typed tables (SQLite, PostgreSQL)."""
    return store_config(request.param, request)


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


HOSTILE_NOTE = (
    "Clinic note <script>window.__pwned = 1</script>.\n"
    "Metformin treats type 2 diabetes <img src=x onerror=\"window.__pwned = 2\"> in this "
    "patient.\nLisinopril causes a dry cough [/ref] {see addendum}.\n")


@pytest.fixture(scope="session")
def built_workspace(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A small workspace, built once per run: the seed vocabulary, three literature
    documents, two clinical notes and one note full of markup. Tests copy it
    (:func:`copy_workspace`) and never change it."""
    from medkg.model import Layer
    from medkg.workspace import Workspace

    root = tmp_path_factory.mktemp("built") / "ws"
    notes = tmp_path_factory.mktemp("notes")
    hostile = notes / "note-hostile.txt"
    hostile.write_text(HOSTILE_NOTE, encoding="utf-8")
    with Workspace.create(root) as ws:
        ws.load_vocabulary(SEED_OBO)
        ws.ingest([EXAMPLES / "literature" / n for n in
                   ("01-type2-diabetes.md", "02-hypertension.md", "03-heart-failure.md")],
                  Layer.LITERATURE)
        ws.ingest([EXAMPLES / "user" / "note-01-diabetes-followup.txt",
                   EXAMPLES / "user" / "note-02-cough-on-lisinopril.txt", hostile], Layer.USER)
        ws.build()
    return root


def copy_workspace(source: Path, target: Path) -> Path:
    """A copy of a closed workspace (its graph store included) to change freely."""
    import shutil

    shutil.copytree(source, target)
    return target
