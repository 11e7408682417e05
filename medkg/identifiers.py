"""CURIE <-> IRI through the Bioregistry's prefix map (``curies`` + ``bioregistry``).

Every concept IRI the store writes and every IRI an exporter writes comes from
here, so ``NCBIGene:3630`` is ``https://www.ncbi.nlm.nih.gov/gene/3630`` (the
registry's), not an OBO PURL that does not exist. The map is the Bioregistry's
default converter (its preferred URI prefix for each resource, with every
prefix synonym it knows: ``MESH``, ``MeSH`` and ``mesh`` expand alike).

Building that converter from the ``bioregistry`` package takes seconds, so its
extended prefix map is kept as derived data in the user's cache directory,
keyed by the package's version, and read from there (a few hundred
milliseconds); a file that does not load is rebuilt, never trusted.

CURIEs whose prefix the registry does not know (a user's own vocabulary,
``MEDKG:`` concepts of the sample vocabulary) get no IRI here: the store mints
them under the workspace's base IRI (:class:`medkg.store.vocab.IRIs`).
"""

from __future__ import annotations

import functools
import importlib.metadata
import json
import os
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING

from medkg import files

if TYPE_CHECKING:
    import curies

SCHEME = "bioregistry-default"  # recorded per workspace: the scheme its concept IRIs follow


def registry_version() -> str:
    return importlib.metadata.version("bioregistry")


@functools.cache
def converter() -> curies.Converter:
    """The Bioregistry's default converter, from the cache when it is there."""
    path = files.user_cache_dir() / f"bioregistry-{registry_version()}.epm.json"
    cached = _read_cache(path)
    if cached is not None:
        return cached
    import bioregistry

    built: curies.Converter = bioregistry.manager.get_converter()
    _write_cache(path, [r.model_dump(exclude_defaults=True) for r in built.records])
    return built


def _read_cache(path: Path) -> curies.Converter | None:
    """The cached converter, or None when there is none or it does not load."""
    import curies

    try:
        rows = json.loads(path.read_text(encoding="utf-8"))
        # The registry checked its records for clashes; re-checking (strict) takes
        # tens of seconds on two cores.
        return curies.Converter([curies.Record(**row) for row in rows], strict=False)
    except (OSError, ValueError, TypeError, KeyError):
        return None


def _write_cache(path: Path, rows: list[dict[str, object]]) -> bool:
    """Keep the registry's records for the next process (temp file, then rename);
    False where the cache directory cannot be written (the converter is then built
    from the package again next time)."""
    tmp: str | None = None
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=path.parent, suffix=".tmp")
        with os.fdopen(fd, "w", encoding="utf-8") as out:
            json.dump(rows, out)
        os.replace(tmp, path)
        return True
    except OSError:
        if tmp is not None:
            Path(tmp).unlink(missing_ok=True)
        return False


def expand(curie: str) -> str | None:
    """The registry's IRI for ``curie``, or None when its prefix is unknown."""
    prefix, sep, local = curie.partition(":")
    if not sep or not prefix or not local:
        return None
    base = uri_prefix(prefix)
    return base + local if base else None


def compress(iri: str) -> str | None:
    """The registry's CURIE for ``iri`` (its canonical prefix), or None."""
    return converter().compress(iri)


def standard_prefix(prefix: str) -> str | None:
    """The registry's canonical spelling of ``prefix`` (``MESH`` -> ``mesh``), or None."""
    return converter().standardize_prefix(prefix)


@functools.cache
def uri_prefix(prefix: str) -> str | None:
    """The IRI a CURIE with ``prefix`` expands to, less its local id (``MESH`` ->
    ``https://meshb.nlm.nih.gov/record/ui?ui=``), or None. Kept per prefix: the
    converter's own ``expand`` resolves a prefix synonym by a search that took
    6 ms a CURIE (six minutes for the default vocabulary)."""
    conv = converter()
    std = conv.standardize_prefix(prefix)
    return conv.prefix_map.get(std) if std else None
