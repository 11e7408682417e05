"""The workspace's parts, each built on first use and closed together: the graph
store, the embedder and vector indexes, the concept index and the extraction
engine's spaCy pipeline (``nlp``), the SAC-KG corpus, the LLM with its ledger,
the stage fingerprints and the tag tree. Stages receive a :class:`Components`
and take what they need."""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

from medkg.config import Settings
from medkg.errors import WorkspaceError
from medkg.fingerprints import LINK, SUMMARISE
from medkg.layout import IndexKind, WorkspaceLayout

if TYPE_CHECKING:
    from spacy.language import Language

    from medkg.extraction.extract import Relate
    from medkg.fingerprints import StageFingerprints
    from medkg.growth.corpus import SentenceCorpus
    from medkg.linking.embeddings import CachedEmbedder
    from medkg.linking.vectors import VectorIndex
    from medkg.llm.client import LLM
    from medkg.llm.ledger import Ledger
    from medkg.ontology.index import ConceptIndex
    from medkg.retrieval.lexical import LexicalIndex
    from medkg.retrieval.local import LocalRetriever
    from medkg.rulehub.outcomes import RuleLog
    from medkg.store.base import GraphStore
    from medkg.tagtree.tree import TagTree

log = logging.getLogger(__name__)


class Components:
    """``read_only``: another process writes this workspace; its parts are opened
    to read what it has committed, and nothing here writes (derived data that is
    out of line is corrected in memory, see :mod:`medkg.pipeline.reconcile`)."""

    def __init__(self, layout: WorkspaceLayout, settings: Settings, *,
                 read_only: bool = False) -> None:
        self.layout = layout
        self.settings = settings
        self.read_only = read_only
        self._store: GraphStore | None = None
        self._embedder: CachedEmbedder | None = None
        self._indexes: dict[str, VectorIndex] = {}
        self._lexical: LexicalIndex | None = None
        self._llm: LLM | None = None
        self._ledger: Ledger | None = None
        self._rule_log: RuleLog | None = None
        self._corpus: SentenceCorpus | None = None
        self._fingerprints: StageFingerprints | None = None
        self._tree: TagTree | None = None
        self._nlp: Language | None = None
        self.reconciled = False  # derived data checked against the graph (pipeline.reconcile)
        # (stamp, retriever): the question path's retriever, kept while nothing changed
        self.retriever_cache: tuple[str, LocalRetriever] | None = None
        # extraction.engine = "langchain": a LangChain chat model passed in Python
        # (medkg.integrations.langchain.use_chat_model), and whether it calls tools
        self.chat_model: object | None = None
        self.chat_model_tool_calling = True

    def close(self) -> None:
        for part in (self._store, self._embedder, self._corpus, self._fingerprints, self._llm,
                     self._ledger, self._rule_log, self._lexical):
            if part is not None:
                part.close()
        self._store = self._embedder = self._corpus = self._fingerprints = None
        self.retriever_cache = None
        self._llm = self._ledger = self._rule_log = self._lexical = None

    @property
    def store(self) -> GraphStore:
        if self._store is None:
            from medkg.store.registry import open_store

            self._check_backend()
            self._to_tables()
            self._store = open_store(self.settings.store, self.layout.graph,
                                     read_only=self.read_only)
            self._check_iri_scheme(self._store)
        return self._store

    def _to_tables(self) -> None:
        """A workspace made before the typed tables (its graph in Oxigraph, its
        settings saying so) moves its graph into them once, at its first writable
        open: every object copied through the store contract, the counts compared,
        then the settings switched and the old store removed. A crash before the
        switch leaves the old store whole, and the next open starts again; nothing
        is re-extracted (ids are the same, so vectors, indexes and decisions stay)."""
        import os
        import shutil

        from medkg.config import ENV_PREFIX, StoreConfig
        from medkg.errors import StoreError
        from medkg.fingerprints import STORE_BACKEND, STORE_TABLES
        from medkg.store.copy import copy_graph
        from medkg.store.registry import open_store

        if self.fingerprints.version(STORE_TABLES) is not None:
            return
        legacy = (self.settings.store.backend == "oxigraph" and self.layout.graph.is_dir()
                  and f"{ENV_PREFIX}STORE__BACKEND" not in os.environ)
        if self.read_only:
            return  # read as it is until a writer opens it
        if legacy:
            shutil.rmtree(self.layout.tables, ignore_errors=True)  # a copy cut short
            tables = StoreConfig(**{**self.settings.store.model_dump(), "backend": "sqlite"})
            source = open_store(self.settings.store, self.layout.graph)
            target = open_store(tables, self.layout.graph)
            try:
                report = copy_graph(source, target, by_objects=True)
            finally:
                source.close()
                target.close()
            if not report.verified:
                differ = ", ".join(f"{k} {a} vs {b}" for k, a, b in report.differences())
                raise StoreError(f"moving the graph into its tables lost rows: {differ}",
                                 hint="the old store is untouched; report this")
            self.settings.store = tables
            self.settings.save(self.layout.config)
            self.fingerprints.record(STORE_BACKEND, "sqlite")
            self.fingerprints.record(STORE_TABLES, "1")
            shutil.rmtree(self.layout.graph, ignore_errors=True)
            return
        self.fingerprints.record(STORE_TABLES, "1")

    def _check_iri_scheme(self, store: GraphStore) -> None:
        """Concept IRIs follow :mod:`medkg.identifiers`; a workspace made before
        (OBO PURLs for every prefix) has its concepts moved once, then recorded."""
        from medkg.fingerprints import IRI_SCHEME
        from medkg.identifiers import SCHEME

        if self.fingerprints.version(IRI_SCHEME) != SCHEME:
            if self.read_only:
                raise WorkspaceError(
                    "this workspace was made by an older medkg and needs a one-time "
                    "update of its concept IRIs, which a read-only open cannot do",
                    hint="run the command again when the process writing it has finished")
            store.migrate_concept_iris()
            self.fingerprints.record(IRI_SCHEME, SCHEME)

    def _check_backend(self) -> None:
        """One workspace, one graph: a store backend other than the one the
        workspace was made with (a one-off ``MEDKG_STORE__BACKEND=memory``) would
        write documents to another graph while the vectors beside it change."""
        from medkg.fingerprints import STORE_BACKEND

        backend = self.settings.store.backend
        recorded = self.fingerprints.version(STORE_BACKEND)
        if recorded is None and backend != "oxigraph" and self.layout.graph.exists() \
                and not self.layout.tables.exists():
            recorded = "oxigraph"  # made before the backend was recorded
        if recorded is None:
            if not self.read_only:
                self.fingerprints.record(STORE_BACKEND, backend)
        elif recorded != backend:
            raise WorkspaceError(
                f"this workspace keeps its graph in the {recorded} store, but store.backend "
                f"is {backend!r} (in {self.layout.config.name} or MEDKG_STORE__BACKEND): "
                "that would write to a different graph than the one its vectors and "
                "indexes follow", hint=f"unset MEDKG_STORE__BACKEND or set store.backend = "
                f"\"{recorded}\"; to move the graph: medkg store copy --to BACKEND --switch")
        self._check_base_iri()

    def _check_base_iri(self) -> None:
        """The graph's IRIs start with the base IRI it was made with: under another
        the whole graph would look empty. Recorded at the first open of the store
        (a workspace made before it was recorded: its medkg.toml's value), and a
        different one is refused, naming where it came from."""
        import os
        import tomllib

        from medkg.config import ENV_PREFIX, StoreConfig
        from medkg.errors import ConfigError
        from medkg.fingerprints import STORE_BASE_IRI

        current = self.settings.store.base_iri
        recorded = self.fingerprints.version(STORE_BASE_IRI)
        if recorded is None and self.layout.graph.exists():
            try:
                saved = tomllib.loads(self.layout.config.read_text(encoding="utf-8"))
            except (OSError, ValueError):
                saved = {}
            recorded = saved.get("store", {}).get("base_iri") or StoreConfig().base_iri
        if recorded is None:
            if not self.read_only:
                self.fingerprints.record(STORE_BASE_IRI, current)
            return
        if not self.read_only and self.fingerprints.version(STORE_BASE_IRI) is None:
            self.fingerprints.record(STORE_BASE_IRI, recorded)
        if recorded != current:
            env = f"{ENV_PREFIX}STORE__BASE_IRI"
            where = (f"the environment variable {env}" if env in os.environ
                     else str(self.layout.config))
            raise ConfigError(
                f"{where} sets store.base_iri to {current!r}, but this workspace's graph "
                f"was made with {recorded!r}: under another base IRI it would look empty",
                hint=f"unset {env}, or put {recorded!r} back in medkg.toml; a graph "
                "under other IRIs is a new workspace (or, on a server: medkg store copy "
                "--to sparql --base-iri IRI --switch)")

    @property
    def embedder(self) -> CachedEmbedder:
        if self._embedder is None:
            from medkg.linking.embeddings import CachedEmbedder, make_embedder

            inner = make_embedder(self.settings.embedding)
            self._check_encoder(inner.name)
            self._embedder = CachedEmbedder(inner, self.layout.embedding_cache,
                                            read_only=self.read_only)
        return self._embedder

    def _check_encoder(self, name: str) -> None:
        """Every vector of a workspace comes from one encoder (model and runtime):
        after a change a writer sets the derived vectors and the tag tree aside,
        and reconcile and the next build make them again with the new one; a
        reader is told to let a writer do that first."""
        import shutil

        from medkg.fingerprints import ENCODER, LINK

        recorded = self.fingerprints.version(ENCODER)
        if recorded == name:
            return
        if recorded is not None:
            if self.read_only:
                raise WorkspaceError(
                    f"this workspace's vectors come from the encoder {recorded!r}; the "
                    f"settings now give {name!r}, whose vectors differ",
                    hint="run `medkg build` (it re-embeds) when the process writing the "
                         "workspace has finished, or set the embedding settings back")
            log.warning("the encoder changed from %r to %r: the workspace's vectors and "
                        "tag tree are made again", recorded, name)
            for kind in ("chunks", "entities", "concepts"):
                self.layout.vector_index(kind).unlink(missing_ok=True)
            shutil.rmtree(self.layout.tag_tree, ignore_errors=True)
            self.fingerprints.forget(SUMMARISE)
            self.fingerprints.forget(LINK)  # the next build embeds and links the entities anew
        if not self.read_only:
            self.fingerprints.record(ENCODER, name)

    def index(self, kind: IndexKind) -> VectorIndex:
        """The persistent vector index of ``chunks``, ``entities`` or ``concepts``.

        It is derived data: a file that cannot be read (cut short, damaged, made
        by another embedding model) is set aside and the index starts empty; the
        ask and build stages then bring it back in line with the graph
        (:mod:`medkg.pipeline.reconcile`)."""
        if kind not in self._indexes:
            from medkg.errors import StoreError
            from medkg.linking.vectors import VectorIndex

            path = self.layout.vector_index(kind)
            dim, threshold = self.embedder.dim, self.settings.linking.ann_threshold
            try:
                self._indexes[kind] = VectorIndex(dim, path, ann_threshold=threshold)
            except StoreError as exc:
                if self.read_only:  # the writer's to repair; this view goes without
                    log.warning("%s; searched without it", exc)
                    self._indexes[kind] = VectorIndex(dim, None, ann_threshold=threshold)
                else:
                    log.warning("%s; it is rebuilt from the graph", exc)
                    path.replace(path.with_name(path.name + ".damaged"))
                    self._indexes[kind] = VectorIndex(dim, path, ann_threshold=threshold)
        return self._indexes[kind]

    @property
    def lexical(self) -> LexicalIndex:
        """The BM25 index of chunk text; derived like the vector indexes (a damaged
        file is set aside and the index refilled from the graph by reconcile)."""
        if self._lexical is None:
            from medkg.errors import StoreError
            from medkg.retrieval.lexical import LexicalIndex

            path = self.layout.lexical_index
            try:
                self._lexical = LexicalIndex(path)
            except StoreError as exc:
                if self.read_only:
                    log.warning("%s; searched without it", exc)
                    self._lexical = LexicalIndex(None)
                else:
                    log.warning("%s; it is rebuilt from the graph", exc)
                    path.replace(path.with_name(path.name + ".damaged"))
                    self._lexical = LexicalIndex(path)
        return self._lexical

    def concept_index(self, *, rebuild: bool = False) -> ConceptIndex:
        """All live concepts and their lookup index, saved beside the store.

        The saved copy is derived from the vocabulary graph: it is used only when
        its manifest matches its files and names the vocabulary version the stage
        state records (every vocabulary load makes a new one); otherwise it is
        rebuilt from the store.
        """
        from medkg.fingerprints import VOCABULARY
        from medkg.ontology.index import ConceptIndex

        saved = self.layout.concept_terms
        version = self.fingerprints.version(VOCABULARY)
        if not rebuild and version is not None and (
                cached := ConceptIndex.load(saved, version)) is not None:
            return cached
        index = ConceptIndex(self.store.concepts())
        if self.read_only:
            return index
        if version is None:  # none recorded (an older workspace): the store is the truth
            version = self.fingerprints.new_version(VOCABULARY)
        if len(index):
            index.save(saved, version)
        return index

    def nlp(self, index: ConceptIndex | None = None) -> Language:
        """The spaCy pipeline of the builtin extraction engine over ``index``
        (default: the workspace's concepts; that one is built once per open
        workspace)."""
        if index is None:
            if self._nlp is None:
                self._nlp = self.nlp(self.concept_index())
            return self._nlp
        from medkg.extraction.workers import builtin_pipeline

        if len(index) == 0:
            raise WorkspaceError(
                "this workspace has no vocabulary, and the builtin engine recognises "
                "entities by their vocabulary names",
                hint="load one: `medkg vocab load --default` (no licence needed) "
                "or `medkg vocab load FILE`",
            )
        return builtin_pipeline(index, self.settings.extraction)

    def vocabulary_changed(self) -> None:
        """After a vocabulary load: the pipeline is rebuilt, links are redone."""
        self._nlp = None
        self.fingerprints.forget(LINK)

    @property
    def corpus(self) -> SentenceCorpus:
        """The sentences, mentions and relation candidates the SAC-KG generator reads."""
        if self._corpus is None:
            from medkg.growth.corpus import SentenceCorpus

            self._corpus = SentenceCorpus(self.layout.corpus)
        return self._corpus

    @property
    def fingerprints(self) -> StageFingerprints:
        """Fingerprints of the whole-workspace stages."""
        if self._fingerprints is None:
            from medkg.fingerprints import StageFingerprints

            self._fingerprints = StageFingerprints(self.layout.state)
        return self._fingerprints

    @property
    def ledger(self) -> Ledger:
        """The LLM response cache, call ledger and failed items."""
        if self._ledger is None:
            from medkg.llm.ledger import Ledger

            self._ledger = Ledger(self.layout.ledger)
        return self._ledger

    @property
    def rule_log(self) -> RuleLog:
        """What the RuleHub rejected or restated, and why."""
        if self._rule_log is None:
            from medkg.rulehub.outcomes import RuleLog

            self._rule_log = RuleLog(self.layout.rule_log)
        return self._rule_log

    def llm(self) -> LLM:
        """The chat model the ``[llm]`` settings name, with cache and ledger."""
        if self._llm is None:
            from medkg.llm import trust
            from medkg.llm.client import LLM, open_backend
            from medkg.llm.port import GenerationParams

            cfg = self.settings.llm
            trust.check(self.layout.root, self.layout.config, cfg)
            params = GenerationParams(temperature=cfg.temperature, max_tokens=cfg.max_tokens,
                                      seed=cfg.seed)
            self._llm = LLM(open_backend(cfg), self.ledger, params)
        return self._llm

    def relation_model(self, index: ConceptIndex | None = None) -> Relate | None:
        """The learned relation classifier the settings ask for, as a ``relate`` hook."""
        from medkg.extraction.workers import builtin_relate

        if self.settings.extraction.relation_model == "none":
            return None
        return builtin_relate(index or self.concept_index(), self.settings.extraction)

    def tree(self) -> TagTree | None:
        """The saved tag tree (kept once read), or None before the first build."""
        if self._tree is None:
            from medkg.tagtree.tree import TagTree

            self._tree = TagTree.load(self.layout.tag_tree, finish=not self.read_only)
        return self._tree
