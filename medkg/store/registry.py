"""The one place a graph-store backend is chosen.

Backends register a factory under a name (rdflib's plugin style); the
workspace opens its store with :func:`open_store` from the ``[store]``
settings, and the store contract suite in ``tests/store`` runs over every
registered name, so a new backend inherits every test.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from medkg.config import StoreConfig
from medkg.errors import ConfigError
from medkg.store.base import GraphStore

StoreFactory = Callable[[StoreConfig, Path, bool], GraphStore]
_BACKENDS: dict[str, StoreFactory] = {}


def register_backend(name: str, factory: StoreFactory) -> None:
    """Make ``store.backend = name`` open a store with ``factory(settings, directory,
    read_only)`` (``directory``: where a persistent backend keeps its files;
    ``read_only``: open it to read what another process has committed)."""
    _BACKENDS[name] = factory


def backend_names() -> list[str]:
    return sorted(_BACKENDS)


def open_store(cfg: StoreConfig, directory: Path, *, read_only: bool = False) -> GraphStore:
    """The store the settings name, at ``directory`` for a persistent backend;
    ``read_only``: its last committed state, while another process may write it."""
    factory = _BACKENDS.get(cfg.backend)
    if factory is None:
        raise ConfigError(f"unknown store backend {cfg.backend!r}",
                          hint=f"store.backend is one of {', '.join(backend_names())}")
    return factory(cfg, directory, read_only)


def _sqlite(cfg: StoreConfig, directory: Path, read_only: bool) -> GraphStore:
    from medkg.store.tables import open_tables

    # Beside the directory the RDF backends use (``graph/``): a workspace whose
    # graph moves between the two (``medkg store copy``, the one-time migration)
    # keeps both apart. WorkspaceLayout.tables names the same place.
    return open_tables(directory.with_name("tables"), base_iri=cfg.base_iri,
                       read_only=read_only)


def _postgres(cfg: StoreConfig, directory: Path, read_only: bool) -> GraphStore:
    from medkg.store.sql import PostgresEngine
    from medkg.store.tables import TableStore

    if not cfg.url:
        raise ConfigError("store.backend is \"postgres\" but store.url is not set",
                          hint="set store.url, e.g. postgresql://medkg@db.example.org/medkg")
    engine = PostgresEngine(cfg.url, schema=cfg.schema_name, password_env=cfg.password_env,
                            password_file=cfg.password_file, connect_timeout=cfg.timeout)
    return TableStore(engine, base_iri=cfg.base_iri, read_only=read_only)


def _oxigraph(cfg: StoreConfig, directory: Path, read_only: bool) -> GraphStore:
    from medkg.store.rdf import RDFGraphStore

    return RDFGraphStore(directory, base_iri=cfg.base_iri, backend="oxigraph",
                         read_only=read_only)


def _memory(cfg: StoreConfig, directory: Path, read_only: bool) -> GraphStore:
    from medkg.store.rdf import RDFGraphStore

    # Nothing to share: a memory store lives and dies with its process.
    return RDFGraphStore(None, base_iri=cfg.base_iri, backend="memory")


def _sparql(cfg: StoreConfig, directory: Path, read_only: bool) -> GraphStore:
    from medkg.store.rdf import RDFGraphStore
    from medkg.store.sparql import Endpoint

    if not cfg.url:
        raise ConfigError("store.backend is \"sparql\" but store.url is not set",
                          hint="set store.url to the server's SPARQL query endpoint")
    endpoint = Endpoint(query_url=cfg.url, update_url=cfg.update_url or cfg.url,
                        user=cfg.user, password_env=cfg.password_env, auth=cfg.auth,
                        timeout=cfg.timeout, graph_store_url=cfg.graph_store_url)
    return RDFGraphStore(None, base_iri=cfg.base_iri, backend="sparql", read_only=read_only,
                         endpoint=endpoint, batch_size=cfg.batch_size)


def _neo4j(cfg: StoreConfig, directory: Path, read_only: bool) -> GraphStore:
    try:
        from medkg.store.neo4j import Neo4jGraphStore
    except ImportError as exc:  # pragma: no cover - depends on the install
        raise ConfigError("store.backend is \"neo4j\" but the neo4j driver is not installed",
                          hint="pip install 'medkg[neo4j]'") from exc
    if not cfg.url:
        raise ConfigError("store.backend is \"neo4j\" but store.url is not set",
                          hint="set store.url to the server, e.g. neo4j://localhost:7687")
    return Neo4jGraphStore(cfg.url, database=cfg.database, user=cfg.user,
                           password_env=cfg.password_env, base_iri=cfg.base_iri,
                           batch_size=cfg.batch_size, read_only=read_only)


register_backend("sqlite", _sqlite)
register_backend("postgres", _postgres)
register_backend("oxigraph", _oxigraph)
register_backend("neo4j", _neo4j)
register_backend("sparql", _sparql)
register_backend("memory", _memory)
