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

StoreFactory = Callable[[StoreConfig, Path], GraphStore]
_BACKENDS: dict[str, StoreFactory] = {}


def register_backend(name: str, factory: StoreFactory) -> None:
    """Make ``store.backend = name`` open a store with ``factory(settings, directory)``
    (``directory``: where a persistent backend keeps its files)."""
    _BACKENDS[name] = factory


def backend_names() -> list[str]:
    return sorted(_BACKENDS)


def open_store(cfg: StoreConfig, directory: Path) -> GraphStore:
    """The store the settings name, at ``directory`` for a persistent backend."""
    factory = _BACKENDS.get(cfg.backend)
    if factory is None:
        raise ConfigError(f"unknown store backend {cfg.backend!r}",
                          hint=f"store.backend is one of {', '.join(backend_names())}")
    return factory(cfg, directory)


def _oxigraph(cfg: StoreConfig, directory: Path) -> GraphStore:
    from medkg.store.rdf import RDFGraphStore

    return RDFGraphStore(directory, base_iri=cfg.base_iri, backend="oxigraph")


def _memory(cfg: StoreConfig, directory: Path) -> GraphStore:
    from medkg.store.rdf import RDFGraphStore

    return RDFGraphStore(None, base_iri=cfg.base_iri, backend="memory")


register_backend("oxigraph", _oxigraph)
register_backend("memory", _memory)
