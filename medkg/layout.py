"""Every path inside a workspace, named once.

A workspace is a directory: ``medkg.toml`` (settings), ``tables/`` (the graph's
typed tables: the source of truth), ``rdf/`` (their RDF projection in Oxigraph:
derived, safe to delete), ``graph/`` (the RDF store of a workspace kept in
Oxigraph, and of those made before the tables), ``vectors/`` (derived vector
indexes and the concept catalogue: safe to delete), ``cache/`` (embedding cache),
``construction/`` (the SAC-KG corpus and loop progress), ``llm/`` (LLM cache and
ledger), ``retrieval/`` (the tag tree) and ``state.sqlite`` (what each
whole-workspace stage last did, by fingerprint).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Literal

IndexKind = Literal["chunks", "entities", "concepts"]


@dataclass(frozen=True)
class WorkspaceLayout:
    root: Path

    @property
    def config(self) -> Path:
        return self.root / "medkg.toml"

    @property
    def graph(self) -> Path:
        return self.root / "graph"

    @property
    def tables(self) -> Path:
        """The graph's typed tables (``store.backend = "sqlite"``)."""
        return self.root / "tables"

    @property
    def rdf(self) -> Path:
        """The RDF projection of the tables (Oxigraph; derived, rebuilt when stale)."""
        return self.root / "rdf"

    @property
    def vectors(self) -> Path:
        return self.root / "vectors"

    def vector_index(self, kind: IndexKind) -> Path:
        return self.vectors / f"{kind}.npz"

    @property
    def lexical_index(self) -> Path:
        """The BM25 index of chunk text (SQLite FTS5; derived from the graph)."""
        return self.vectors / "lexical.sqlite"

    @property
    def concept_terms(self) -> Path:
        """The saved concept lookup index (derived from the vocabulary graph)."""
        return self.vectors / "concept-terms"

    @property
    def embedding_cache(self) -> Path:
        return self.root / "cache" / "embeddings.sqlite"

    @property
    def corpus(self) -> Path:
        """Sentences, mentions and candidate triples of the SAC-KG loop."""
        return self.root / "construction" / "corpus.sqlite"

    @property
    def growth(self) -> Path:
        """The SAC-KG loop's progress, head by head."""
        return self.root / "construction" / "growth.sqlite"

    @property
    def ledger(self) -> Path:
        """The LLM response cache, call ledger and failed items."""
        return self.root / "llm" / "llm.sqlite"

    @property
    def rule_log(self) -> Path:
        """What the RuleHub rejected or restated, and why."""
        return self.root / "rulehub" / "outcomes.sqlite"

    @property
    def tag_tree(self) -> Path:
        """The directory of the tag tree (``tagtree.json`` + vectors)."""
        return self.root / "retrieval"

    @property
    def state(self) -> Path:
        """Fingerprints of what each whole-workspace stage last did."""
        return self.root / "state.sqlite"

    @property
    def tokens(self) -> Path:
        """Digests of the HTTP API's bearer tokens and whose they are (mode 0600)."""
        return self.root / "tokens.json"

    @property
    def server(self) -> Path:
        """Written while ``medkg serve`` owns the workspace: its URL and process id."""
        return self.root / "server.json"

    @property
    def writer_lock(self) -> Path:
        """Locked by the one process that writes the workspace, which names itself in it."""
        return self.root / "writer.lock"

    @property
    def dataset(self) -> Path:
        """An evaluation dataset's texts as JSONL (``medkg eval qa``)."""
        return self.root / "dataset.jsonl"

    @property
    def publish(self) -> Path:
        """What each publish target acknowledged (``medkg publish``), a journal each."""
        return self.root / "publish"

    def owned(self) -> list[Path]:
        """Every file and directory the workspace keeps (nothing may be written over them)."""
        return [self.config, self.graph, self.tables, self.rdf, self.vectors,
                self.embedding_cache.parent,
                self.corpus.parent, self.ledger.parent, self.rule_log.parent, self.tag_tree,
                self.state,
                self.dataset, self.tokens, self.server, self.writer_lock, self.publish]
