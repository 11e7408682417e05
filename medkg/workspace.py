"""A workspace: a directory with a config file and the stores built from it.

The Python API's entry point::

    ws = Workspace.create("my-kg")            # or Workspace.open("my-kg")
    ws.load_vocabulary(Path("seed.obo"))
    ws.ingest([Path("notes/")], Layer.USER)
    ws.build()
    print(ws.ask("What treats hypertension?").render())

The workspace is a facade: its parts are built on first use by
:class:`medkg.components.Components`, the build is the ordered stage list in
:mod:`medkg.pipeline.stages`, and every path inside the directory is named in
:class:`medkg.layout.WorkspaceLayout`. Every stage records what it finished,
so an interrupted ingest or build resumes where it stopped without
duplicating anything.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from types import TracebackType
from typing import TYPE_CHECKING, Any, Literal

from medkg.components import Components
from medkg.config import Settings, StoreConfig
from medkg.errors import WorkspaceError
from medkg.layout import IndexKind, WorkspaceLayout
from medkg.lock import Holder, WorkspaceBusyError, WriterLock
from medkg.model import Decision, Entity, Layer, Link
from medkg.pipeline import ask as asking
from medkg.pipeline import curate, estimate, stages, summarise
from medkg.pipeline import grow as growing
from medkg.pipeline import ingest as ingesting
from medkg.pipeline import review as reviewing
from medkg.pipeline.context import BuildReport
from medkg.pipeline.estimate import BuildEstimate
from medkg.pipeline.ingest import IngestReport, SyncPlan
from medkg.pipeline.progress import Progress, no_progress
from medkg.pipeline.review import Recorded, Request

if TYPE_CHECKING:
    from spacy.language import Language

    from medkg.export.view import ExportFilter, ExportReport, Reviewed
    from medkg.extraction.extract import Relate
    from medkg.growth.corpus import SentenceCorpus
    from medkg.growth.loop import LevelStats
    from medkg.linking.embeddings import CachedEmbedder
    from medkg.linking.vectors import VectorIndex
    from medkg.llm.client import LLM
    from medkg.llm.ledger import Ledger
    from medkg.ontology.index import ConceptIndex
    from medkg.ontology.loaders import VocabularyLoad
    from medkg.pipeline.importing import ImportReport
    from medkg.pipeline.reextract import ExtractionStatus
    from medkg.publish import PublishReport
    from medkg.retrieval.answer import Answer
    from medkg.retrieval.evidence import Retrieval
    from medkg.retrieval.local import LocalRetriever
    from medkg.review.queue import QueueFilter, QueueItem
    from medkg.store.base import Deletion, GraphStore
    from medkg.store.copy import CopyReport
    from medkg.store.tables import TableStore
    from medkg.tagtree.tree import TagTree

__all__ = ["Access", "BuildEstimate", "BuildReport", "IngestReport", "Workspace"]

# How a workspace is opened: ``write`` takes the workspace's one writer lock (a
# second writer is told who holds it); ``read`` takes no lock and opens the graph
# read-only, seeing what the writer has committed; ``auto`` writes when no other
# process does, and reads otherwise (the commands that only read: ask, stats,
# documents, export).
Access = Literal["write", "read", "auto"]


class Workspace:
    def __init__(self, root: Path, settings: Settings, *, lock: WriterLock | None = None,
                 busy: Holder | None = None, read_only: bool = False) -> None:
        self.root = root
        self.layout = WorkspaceLayout(root)
        self.settings = settings
        self.read_only = read_only
        self.busy = busy  # who was writing when this one opened read-only (if known)
        self.served_by: str | None = None  # the URL of the server that owns it, if one does
        self._lock = lock
        self.parts = Components(self.layout, settings, read_only=read_only)

    # -- lifecycle ------------------------------------------------------------------

    @classmethod
    def create(cls, path: Path | str, *, exist_ok: bool = False) -> Workspace:
        layout = WorkspaceLayout(Path(path))
        if layout.root.exists() and not layout.root.is_dir():
            raise WorkspaceError(f"{layout.root} is a file, not a directory",
                                 hint="a workspace is a directory: choose a new name")
        if layout.config.exists():
            if not exist_ok:
                raise WorkspaceError(f"{layout.root} is already a medkg workspace")
            return cls.open(layout.root)
        if layout.root.exists() and any(layout.root.iterdir()):
            raise WorkspaceError(
                f"{layout.root} exists and is not empty", hint="choose a new or empty directory"
            )
        layout.root.mkdir(parents=True, exist_ok=True)
        layout.root.chmod(0o700)  # clinical notes and the LLM cache: the owner's alone
        lock = WriterLock.acquire(layout.writer_lock)
        settings = Settings.load(layout.config)
        settings.save(layout.config)
        return cls(layout.root, settings, lock=lock)

    @classmethod
    def open(cls, path: Path | str, *, access: Access = "write") -> Workspace:
        """Open a workspace to write it (the default; one process at a time) or to
        read it (see :data:`Access`)."""
        layout = WorkspaceLayout(Path(path))
        if layout.root.is_file():
            raise WorkspaceError(f"{layout.root} is a file, not a workspace directory",
                                 hint="pass the directory: -w DIR")
        if not layout.config.exists():
            raise WorkspaceError(
                f"{layout.root} is not a medkg workspace (no {layout.config.name})",
                hint=f"create one with `medkg init {layout.root}`",
            )
        from medkg.lock import check_not_served, running_server

        if access == "write":
            check_not_served(layout)  # one writer: the server
        settings = Settings.load(layout.config)
        served_by = running_server(layout)
        if served_by is not None:  # a reader beside the server: what it has committed
            ws = cls(layout.root, settings, read_only=True)
            ws.served_by = served_by
            return ws
        if access == "read":
            return cls(layout.root, settings, read_only=True)
        try:
            lock = WriterLock.acquire(layout.writer_lock)
        except WorkspaceBusyError as busy:
            if access == "write":
                raise
            return cls(layout.root, settings, busy=busy.holder, read_only=True)
        return cls(layout.root, settings, lock=lock)

    def save_settings(self) -> None:
        """Write the current settings to the workspace's ``medkg.toml`` (an LLM
        endpoint in it still needs :meth:`trust_endpoint`, see :mod:`medkg.llm.trust`)."""
        self.settings.save(self.layout.config)

    def trust_endpoint(self) -> None:
        """Confirm the LLM endpoint this workspace's file names (``medkg trust``)."""
        from medkg.llm import trust

        trust.trust(self.root, self.settings.llm)

    def _writable(self) -> None:
        if self.read_only:
            who = self.busy.describe() if self.busy is not None else "another process"
            raise WorkspaceError(f"this workspace was opened read-only ({who} writes it)",
                                 hint="run the command again when it has finished")

    def close(self) -> None:
        self.parts.close()
        if self._lock is not None:
            self._lock.release()  # after the store: its own lock goes first
            self._lock = None

    def __enter__(self) -> Workspace:
        return self

    def __exit__(
        self, t: type[BaseException] | None, e: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()

    # -- parts (built on first use) -------------------------------------------------

    @property
    def store(self) -> GraphStore:
        return self.parts.store

    @property
    def embedder(self) -> CachedEmbedder:
        return self.parts.embedder

    def index(self, kind: IndexKind) -> VectorIndex:
        return self.parts.index(kind)

    def concept_index(self, *, rebuild: bool = False) -> ConceptIndex:
        return self.parts.concept_index(rebuild=rebuild)

    def nlp(self, index: ConceptIndex | None = None) -> Language:
        return self.parts.nlp(index)

    @property
    def corpus(self) -> SentenceCorpus:
        return self.parts.corpus

    @property
    def ledger(self) -> Ledger:
        return self.parts.ledger

    def llm(self) -> LLM:
        return self.parts.llm()

    def relation_model(self, index: ConceptIndex | None = None) -> Relate | None:
        return self.parts.relation_model(index)

    # -- the stages -----------------------------------------------------------------

    def load_vocabulary(self, path: Path | None, progress: Progress = no_progress
                        ) -> VocabularyLoad:
        """Load a vocabulary file or directory (``None``: the packaged default)."""
        self._writable()
        return ingesting.load_vocabulary(self.parts, path, progress)

    def ingest(self, paths: Sequence[Path], layer: Layer, progress: Progress = no_progress,
               *, sync: bool = False, names: Mapping[Path, str] | None = None
               ) -> IngestReport:
        """Read, chunk, store and index documents; an edited file replaces its
        earlier version; ``sync``: documents of files gone from the directories
        given are deleted (see :func:`medkg.pipeline.ingest.ingest`). Bad files are
        reported, not fatal."""
        self._writable()
        return ingesting.ingest(self.parts, paths, layer, progress, sync=sync, names=names)

    def plan_sync(self, paths: Sequence[Path], layer: Layer) -> SyncPlan:
        """What ``ingest(paths, layer, sync=True)`` would add, change and remove."""
        return ingesting.plan_sync(self.parts, paths, layer)

    def build(self, progress: Progress = no_progress, *, grow: bool = True,
              reextract: bool = False) -> BuildReport:
        """Extract entities and triples from new documents, grow (``--levels``), link
        the layers and update the tag tree; ``grow=False`` leaves the SAC-KG loop
        for a later :meth:`grow` call."""
        self._writable()
        return stages.build(self.parts, progress, skip=frozenset() if grow else frozenset({"grow"}),
                            reextract=reextract)

    def extraction_status(self) -> ExtractionStatus:
        """Which documents are extracted with the inputs the workspace has now, and
        which the next build extracts (again) and why."""
        from medkg.pipeline.reextract import extraction_status

        return extraction_status(self.parts)

    def links_current(self) -> bool:
        """Whether the cross-layer links were made from what the workspace has now."""
        from medkg.pipeline.link import is_current

        return is_current(self.parts)

    def grow(self, concepts: ConceptIndex | None = None, progress: Progress = no_progress
             ) -> list[LevelStats]:
        """Run (or resume) the SAC-KG loop to ``construction.levels`` levels."""
        self._writable()
        return growing.grow(self.parts, concepts, progress)

    def estimate_build(self) -> BuildEstimate:
        """What ``build`` would send to the LLM, without calling it."""
        return estimate.estimate_build(self.parts)

    def tag_tree(self, progress: Progress = no_progress) -> TagTree:
        """The tag tree over every chunk, brought up to date."""
        return summarise.update_tag_tree(self.parts, progress)

    # -- curation -------------------------------------------------------------------

    def delete_document(self, document_id: str) -> Deletion:
        """Remove a document and what only it supported."""
        self._writable()
        return curate.delete_document(self.parts, document_id)

    def merges(self) -> list[tuple[Link, Entity, Entity]]:
        return curate.merges(self.parts)

    # -- review ---------------------------------------------------------------------

    def review(self, request: Request, reviewer: str) -> Decision:
        """Record one curator's decision and apply it (see :mod:`medkg.pipeline.review`)."""
        self._writable()
        return reviewing.decide(self.parts, request, reviewer)

    def review_many(self, requests: list[Request], reviewer: str) -> Recorded:
        """Several decisions: all checked first, then recorded together."""
        self._writable()
        return reviewing.record(self.parts, requests, reviewer)

    def review_queue(self, flt: QueueFilter | None = None) -> list[QueueItem]:
        from medkg.review.queue import QueueFilter

        return reviewing.queue(self.parts, flt or QueueFilter())

    def review_log(self, target: str | None = None) -> list[Decision]:
        return reviewing.history(self.parts, target)

    def import_decisions(self, path: Path, reviewer: str | None = None) -> Recorded:
        self._writable()
        return reviewing.import_file(self.parts, path, reviewer)

    def export_decisions(self, path: Path, *, overwrite: bool = False) -> int:
        return reviewing.export_file(self.parts, path, overwrite=overwrite)

    # -- ask / export ---------------------------------------------------------------

    def retriever(self) -> LocalRetriever:
        return asking.retriever(self.parts)

    def ask(self, question: str, mode: str | None = None,
            retriever: LocalRetriever | None = None, show_proposed: bool | None = None
            ) -> Answer:
        """Answer with numbered citations and definitions (see :mod:`medkg.pipeline.ask`)."""
        return asking.ask(self.parts, question, mode, retriever, show_proposed)

    def retrieve(self, question: str, mode: str | None = None, top: int = 8,
                 retriever: LocalRetriever | None = None, show_proposed: bool | None = None
                 ) -> Retrieval:
        """The evidence for a question, for an LLM of your own: ranked passages,
        facts, conditions, definitions and a context block citing them (see
        :func:`medkg.pipeline.ask.retrieve`)."""
        return asking.retrieve(self.parts, question, mode, top, retriever, show_proposed)

    def import_graph(self, paths: Sequence[Path], layer: Layer,
                     progress: Progress = no_progress) -> ImportReport:
        """A curated KGX graph into ``layer`` (see :mod:`medkg.pipeline.importing`)."""
        self._writable()
        from medkg.pipeline.importing import import_kgx

        return import_kgx(self.parts, paths, layer, progress)

    def copy_graph(self, to: StoreConfig, *, replace: bool = False, switch: bool = False,
                   progress: Callable[[int], None] | None = None) -> CopyReport:
        """Copy the graph into the store ``to`` names (see :mod:`medkg.store.copy`);
        ``switch``: once the counts agree, the workspace keeps its graph there (its
        ``medkg.toml`` says so; vectors and indexes stay, the ids being the same)."""
        self._writable()
        from medkg.errors import StoreError
        from medkg.fingerprints import STORE_BACKEND, STORE_BASE_IRI
        from medkg.store.copy import copy_graph
        from medkg.store.registry import open_store

        here = self.settings.store
        if to.backend == "memory":
            raise WorkspaceError("a memory store ends with its process: nothing to copy to")
        if to.backend == here.backend and (to.backend in ("oxigraph", "sqlite") or (
                to.url, to.base_iri, to.database, to.schema_name)
                == (here.url, here.base_iri, here.database, here.schema_name)):
            raise WorkspaceError(f"the graph is already in that {to.backend} store")
        target = open_store(to, self.layout.graph)
        try:
            report = copy_graph(self.store, target, replace=replace,
                                batch_size=to.batch_size, progress=progress)
            add_vectors = getattr(target, "add_entity_vectors", None)
            if add_vectors is not None:  # a property graph with a vector index (Neo4j)
                entities = self.index("entities")
                add_vectors((i, v.tolist()) for i in entities.ids()
                            if (v := entities.vector(i)) is not None)
        finally:
            target.close()
        if not report.verified:
            differ = ", ".join(f"{k} {a} vs {b}" for k, a, b in report.differences())
            raise StoreError(f"the copy's counts differ from the graph's: {differ}",
                             hint="run the copy again with --replace")
        if switch:
            self.parts.close()
            self.settings.store = to
            self.save_settings()
            self.parts = Components(self.layout, self.settings)
            self.parts.fingerprints.record(STORE_BACKEND, to.backend)
            self.parts.fingerprints.record(STORE_BASE_IRI, to.base_iri)  # the copy's IRIs
        return report

    def _tables(self) -> TableStore:
        from medkg.store.tables import TableStore

        store = self.store
        if not isinstance(store, TableStore):
            raise WorkspaceError(
                f"this workspace keeps its graph in the {self.settings.store.backend} store, "
                "which is RDF already: it has no projection to make",
                hint="query that store directly (a SPARQL server's own endpoint), or move "
                     "the graph into the tables: medkg store copy --to sqlite --switch")
        return store

    def rebuild_rdf(self) -> int:
        """Make the RDF projection of the graph's tables again (``medkg rdf rebuild``);
        how many quads it holds."""
        self._writable()
        from medkg.store.projection import RDFProjection

        return RDFProjection(self.layout.rdf).rebuild(self._tables())

    def publish(self, target: str, *, update_url: str = "", graph_store_url: str = "",
                user: str = "", password_env: str = "", auth: str = "basic",
                batch_size: int = 2000, verify: bool = True, replace: bool = False,
                database: str = "neo4j",
                progress: Callable[[str, int], None] | None = None) -> PublishReport:
        """Send what changed in the graph since the last publish to ``target``: its
        RDF projection to a SPARQL server (``sparql+http(s)://HOST/.../sparql``; see
        :mod:`medkg.publish`) or its property graph to Neo4j database ``database``
        (``neo4j://HOST:7687``, also ``neo4j+s``, ``bolt``, ``bolt+s``; see
        :mod:`medkg.publish_neo4j`)."""
        self._writable()
        from medkg.errors import ConfigError
        from medkg.publish import journal_path, publish_sparql
        from medkg.store.sparql import Endpoint

        base = self.settings.store.base_iri
        if target.startswith(("neo4j://", "neo4j+s://", "bolt://", "bolt+s://")):
            return self._publish_neo4j(target, database, user, password_env,
                                       journal_path(self.layout.publish,
                                                    f"{target}#{database}", base),
                                       batch_size=batch_size, verify=verify, replace=replace,
                                       progress=progress)
        if not target.startswith(("sparql+http://", "sparql+https://")):
            raise ConfigError(f"cannot publish to {target!r}",
                              hint="--to sparql+http://HOST:8890/sparql (a SPARQL 1.1 "
                                   "server) or --to neo4j://HOST:7687 (Neo4j)")
        url = target.removeprefix("sparql+")
        endpoint = Endpoint(query_url=url, update_url=update_url or url, user=user,
                            password_env=password_env, auth=auth,
                            graph_store_url=graph_store_url)
        return publish_sparql(self._tables(), endpoint,
                              journal_path(self.layout.publish, url, base), target=url,
                              batch_size=batch_size, verify=verify, replace=replace,
                              progress=progress)

    def _publish_neo4j(self, uri: str, database: str, user: str, password_env: str,
                       journal: Path, **options: Any) -> PublishReport:
        """The property graph (the neo4j-csv export's mapping and filter) to Neo4j."""
        from medkg.errors import StoreError
        from medkg.export.formats import export_format
        from medkg.export.view import ExportFilter, GraphView
        from medkg.publish_neo4j import Neo4jTarget, connect, publish_neo4j
        from medkg.store.vocab import IRIs

        base = self.settings.store.base_iri
        flt = ExportFilter(include_negated=export_format("neo4j-csv").negated_by_default)
        view = GraphView(self.store, IRIs(base), flt)
        driver = connect(uri, user, password_env)  # a clear error without the package
        import neo4j

        try:
            return publish_neo4j(view, Neo4jTarget(driver, database, base), journal,
                                 name=f"{uri} ({database})", **options)
        except (neo4j.exceptions.DriverError, neo4j.exceptions.Neo4jError) as exc:
            raise StoreError(f"Neo4j at {uri} (database {database}): {exc}",
                             hint="check the address, --database, --user and the password "
                                  "in --password-env; what was sent is kept and the next "
                                  "publish goes on from there") from exc
        finally:
            driver.close()

    def sparql(self, query: str, fmt: str | None = None) -> tuple[str, bytes]:
        """A read-only SPARQL 1.1 query on the live graph (its RDF projection, made
        again first when the tables have changed since): (media type, the answer)."""
        from medkg.store.projection import RDFProjection, run_query

        projection = RDFProjection(self.layout.rdf).open(self._tables(),
                                                         may_rebuild=not self.read_only)
        return run_query(projection, query, fmt)

    def export(self, path: Path, fmt: str, *, overwrite: bool = False,
               reviewed: Reviewed = "not-rejected",
               flt: ExportFilter | None = None) -> ExportReport:
        """The graph in ``fmt`` (see ``medkg.export.formats.FORMATS``: RDF, KGX, OWL,
        GraphML, Neo4j CSV, SSSOM); never over the workspace's own files, and over
        another file only with ``overwrite``. ``flt`` chooses layers, review state,
        minimum confidence and negated/uncertain statements; without it, ``reviewed``
        (``not-rejected``: what no curator rejected, ``accepted`` or ``all``) and
        the format's own default for negated statements."""
        from medkg.export.formats import export_format
        from medkg.export.view import ExportFilter, GraphView
        from medkg.store.vocab import IRIs

        spec = export_format(fmt)
        target = path.resolve()
        owned = [p.resolve() for p in self.layout.owned()]
        # a directory format replaces its target whole: never one that holds the workspace
        if any(target.is_relative_to(p) or (spec.directory and p.is_relative_to(target))
               for p in owned):
            raise WorkspaceError(f"{path} is one of the workspace's own files",
                                 hint="export to another file name")
        flt = flt or ExportFilter(reviewed=reviewed, include_negated=spec.negated_by_default)
        view = GraphView(self.store, IRIs(self.settings.store.base_iri), flt)
        return spec.write(view, path, overwrite)
