"""A workspace: a directory with a config file and the stores built from it.

The Python API's entry point::

    ws = Workspace.create("my-kg")            # or Workspace.open("my-kg")
    ws.load_vocabulary(Path("seed.obo"))
    ws.ingest([Path("notes/")], Layer.USER)
    ws.build()
    print(ws.ask("What treats hypertension?").render())

Layout: ``medkg.toml`` (settings), ``graph/`` (Oxigraph), ``vectors/`` (derived
vector indexes), ``cache/`` (embedding cache). Every stage records what it
finished per document, so an interrupted ingest or build resumes where it
stopped without duplicating anything.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from types import TracebackType
from typing import TYPE_CHECKING

from medkg.config import Settings
from medkg.errors import DocumentError, MedKGError, WorkspaceError
from medkg.model import Chunk, Document, Entity, Layer, Link, LinkKind, Triple

if TYPE_CHECKING:
    from spacy.language import Language

    from medkg.construction.corpus import SentenceCorpus
    from medkg.construction.extraction import ChunkExtraction, Relate
    from medkg.construction.growth import LevelStats
    from medkg.linking.embeddings import CachedEmbedder, Matrix
    from medkg.linking.vectors import VectorIndex
    from medkg.llm.client import LLM
    from medkg.llm.ledger import Ledger
    from medkg.ontology.index import ConceptIndex
    from medkg.ontology.loaders import VocabularyLoad
    from medkg.retrieval.answer import Answer
    from medkg.retrieval.local import LocalRetriever
    from medkg.retrieval.tags import TagSummary
    from medkg.retrieval.tagtree import TagTree
    from medkg.store.base import Deletion, GraphStore

CONFIG_FILE = "medkg.toml"
STAGE_INGESTED = "ingested"
STAGE_EXTRACTED = "extracted"
INDEX_SAVE_EVERY = 25
EMBED_BATCH = 512

Progress = Callable[[str, int, int], None]


def _no_progress(stage: str, done: int, total: int) -> None:
    return None


@dataclass
class IngestReport:
    documents: int = 0
    chunks: int = 0
    skipped: int = 0
    failed: dict[str, str] = field(default_factory=dict)


@dataclass
class BuildReport:
    """Documents processed by this build; entities, triples and links in the graph after it."""

    documents: int = 0
    entities: int = 0
    triples: int = 0
    links: int = 0
    rejected: int = 0  # triples the RuleHub's hard rules kept out of the graph
    levels: list[LevelStats] = field(default_factory=list)  # the SAC-KG loop, per level


@dataclass
class BuildEstimate:
    """What a build would cost in LLM calls, before any call is made."""

    documents: int = 0
    calls: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cost_usd: float = 0.0


def _expand(paths: Iterable[Path]) -> list[Path]:
    """Files as given, and the files inside directories (sorted, hidden ones skipped)."""
    out: list[Path] = []
    for path in paths:
        if path.is_dir():
            out.extend(sorted(p for p in path.rglob("*")
                              if p.is_file() and not p.name.startswith(".")))
        else:
            out.append(path)
    return out


class Workspace:
    def __init__(self, root: Path, settings: Settings) -> None:
        self.root = root
        self.settings = settings
        self._store: GraphStore | None = None
        self._embedder: CachedEmbedder | None = None
        self._indexes: dict[str, VectorIndex] = {}
        self._llm: LLM | None = None
        self._ledger: Ledger | None = None
        self._corpus: SentenceCorpus | None = None
        self._tree: TagTree | None = None
        self._nlp: Language | None = None

    # -- lifecycle ------------------------------------------------------------------

    @classmethod
    def create(cls, path: Path | str, *, exist_ok: bool = False) -> Workspace:
        root = Path(path)
        config = root / CONFIG_FILE
        if config.exists():
            if not exist_ok:
                raise WorkspaceError(f"{root} is already a medkg workspace")
            return cls.open(root)
        if root.exists() and any(root.iterdir()):
            raise WorkspaceError(
                f"{root} exists and is not empty", hint="choose a new or empty directory"
            )
        root.mkdir(parents=True, exist_ok=True)
        settings = Settings.load(config)
        settings.save(config)
        return cls(root, settings)

    @classmethod
    def open(cls, path: Path | str) -> Workspace:
        root = Path(path)
        config = root / CONFIG_FILE
        if not config.exists():
            raise WorkspaceError(
                f"{root} is not a medkg workspace (no {CONFIG_FILE})",
                hint=f"create one with `medkg init {root}`",
            )
        return cls(root, Settings.load(config))

    def save_settings(self) -> None:
        """Write the current settings to the workspace's ``medkg.toml``."""
        self.settings.save(self.root / CONFIG_FILE)

    def close(self) -> None:
        if self._store is not None:
            self._store.close()
            self._store = None
        if self._embedder is not None:
            self._embedder.close()
            self._embedder = None
        if self._corpus is not None:
            self._corpus.close()
            self._corpus = None
        if self._llm is not None:
            self._llm.close()
            self._llm = None
        if self._ledger is not None:
            self._ledger.close()
            self._ledger = None

    def __enter__(self) -> Workspace:
        return self

    def __exit__(
        self, t: type[BaseException] | None, e: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()

    # -- components (created on first use) ------------------------------------------

    @property
    def store(self) -> GraphStore:
        if self._store is None:
            from medkg.store.rdf import RDFGraphStore

            cfg = self.settings.store
            self._store = RDFGraphStore(
                self.root / "graph" if cfg.backend == "oxigraph" else None,
                base_iri=cfg.base_iri, backend=cfg.backend,
            )
        return self._store

    @property
    def embedder(self) -> CachedEmbedder:
        if self._embedder is None:
            from medkg.linking.embeddings import CachedEmbedder, SentenceTransformerEmbedder

            self._embedder = CachedEmbedder(
                SentenceTransformerEmbedder(self.settings.embedding),
                self.root / "cache" / "embeddings.sqlite",
            )
        return self._embedder

    def index(self, kind: str) -> VectorIndex:
        """The persistent vector index of ``chunks``, ``entities`` or ``concepts``."""
        if kind not in self._indexes:
            from medkg.linking.vectors import VectorIndex

            self._indexes[kind] = VectorIndex(
                self.embedder.dim, self.root / "vectors" / f"{kind}.npz",
                ann_threshold=self.settings.linking.ann_threshold,
            )
        return self._indexes[kind]

    def concept_index(self, *, rebuild: bool = False) -> ConceptIndex:
        """All live concepts and their lookup index, saved beside the store.

        The saved copy is derived from the vocabulary graph and rewritten by every
        vocabulary load, the only writer of concepts; delete it to force a rebuild.
        """
        from medkg.ontology.index import ConceptIndex

        saved = self.root / "vectors" / "concept-terms"
        if not rebuild and (cached := ConceptIndex.load(saved)) is not None:
            return cached
        index = ConceptIndex(self.store.concepts())
        if len(index):
            index.save(saved)
        return index

    def pipeline(self, index: ConceptIndex | None = None) -> Language:
        """The builtin extraction pipeline over ``index`` (default: the workspace's
        concepts; that one is built once per open workspace)."""
        if index is None:
            if self._nlp is None:
                self._nlp = self.pipeline(self.concept_index())
            return self._nlp
        from medkg.construction.lexicon import resolve_lexicon
        from medkg.construction.nlp import build_pipeline, resolve_ner_models

        if len(index) == 0:
            raise WorkspaceError(
                "this workspace has no vocabulary, and the builtin engine recognises "
                "entities by their vocabulary names",
                hint="load one: `medkg vocab load --default` (no licence needed) "
                "or `medkg vocab load FILE`",
            )
        cfg = self.settings.extraction
        return build_pipeline(index, cfg.min_term_chars, resolve_ner_models(cfg.ner_model),
                              resolve_lexicon(cfg.lexicon))

    @property
    def corpus(self) -> SentenceCorpus:
        """The sentences, mentions and relation candidates the SAC-KG generator reads."""
        from medkg.construction.corpus import SentenceCorpus

        if self._corpus is None:
            self._corpus = SentenceCorpus(self.root / "construction" / "corpus.sqlite")
        return self._corpus

    @property
    def ledger(self) -> Ledger:
        """The LLM response cache, call ledger and failed items (``llm/llm.sqlite``)."""
        from medkg.llm.ledger import Ledger

        if self._ledger is None:
            self._ledger = Ledger(self.root / "llm" / "llm.sqlite")
        return self._ledger

    def llm(self) -> LLM:
        """The chat model the ``[llm]`` settings name, with cache and ledger."""
        from medkg.llm.client import LLM, open_backend
        from medkg.llm.port import GenerationParams

        if self._llm is None:
            cfg = self.settings.llm
            params = GenerationParams(temperature=cfg.temperature, max_tokens=cfg.max_tokens,
                                      seed=cfg.seed)
            self._llm = LLM(open_backend(cfg), self.ledger, params)
        return self._llm

    def relation_model(self, index: ConceptIndex | None = None) -> Relate | None:
        """The learned relation classifier the settings ask for, as a ``relate`` hook."""
        from medkg.construction.relation_model import resolve_relation_model

        setting = self.settings.extraction.relation_model
        if setting == "none":
            return None
        index = index or self.concept_index()
        model = resolve_relation_model(setting, index.ancestors)
        return model.relations if model is not None else None

    # -- vocabulary -----------------------------------------------------------------

    def load_vocabulary(
        self, path: Path | None, progress: Progress = _no_progress
    ) -> VocabularyLoad:
        """Load a vocabulary: an OBO file, a UMLS META directory, a MeSH list or a
        TSV/CSV table; ``None`` loads the default vocabulary that installed
        packages ship (HPO with its genes, MeSH, MeSH diseases, drug names).

        The input is parsed completely before anything is stored, so a malformed
        file leaves the workspace as it was.
        """
        from medkg.ontology.loaders import load_default, load_file

        progress("parse", 0, 1)
        load = load_default() if path is None else load_file(path)
        progress("parse", 1, 1)
        self.store.add_concepts(load.concepts, load.source)
        self.concept_index(rebuild=True)
        self._nlp = None
        (self.root / "construction" / "linked").unlink(missing_ok=True)  # link again
        # Concept vectors are made when linking needs them (see _embed_concepts).
        self.index("concepts").delete([c.id for c in load.concepts])
        return load

    def _embed_concepts(
        self, concept_ids: Iterable[str], concepts: ConceptIndex, progress: Progress
    ) -> VectorIndex:
        """Make sure these concepts have vectors (content: name; group; definition)."""
        from medkg.linking.linker import concept_content

        index = self.index("concepts")
        todo = [c for cid in dict.fromkeys(concept_ids)
                if cid not in index and (c := concepts.get(cid)) is not None]
        for start in range(0, len(todo), EMBED_BATCH):
            progress("concepts", start, len(todo))
            batch = todo[start : start + EMBED_BATCH]
            index.upsert([c.id for c in batch],
                         self.embedder.embed([concept_content(c) for c in batch]))
        if todo:
            progress("concepts", len(todo), len(todo))
            index.save()
        return index

    # -- ingest ---------------------------------------------------------------------

    def ingest(
        self, paths: Sequence[Path], layer: Layer, progress: Progress = _no_progress
    ) -> IngestReport:
        """Read, chunk, store and index documents. Bad files are reported, not fatal."""
        from medkg.construction.chunking import chunk_document
        from medkg.construction.readers import read_documents

        if layer is Layer.VOCABULARY:
            raise WorkspaceError("use load_vocabulary for the vocabulary layer")
        report = IngestReport()
        files = _expand(paths)
        pending: list[str] = []
        index = self.index("chunks")
        for i, path in enumerate(files):
            progress("ingest", i, len(files))
            try:
                documents = read_documents(
                    path, layer, max_file_mb=self.settings.ingest.max_file_mb
                )
            except DocumentError as exc:
                report.failed[str(path)] = str(exc)
                continue
            for doc in documents:
                if STAGE_INGESTED in self._stages(doc):
                    report.skipped += 1
                    continue
                chunks = chunk_document(doc, self.embedder, self.settings.ingest)
                self.store.add_document(doc, chunks)
                index.upsert([c.id for c in chunks], self.embedder.embed([c.text for c in chunks]))
                pending.append(doc.id)
                report.documents += 1
                report.chunks += len(chunks)
            if len(pending) >= INDEX_SAVE_EVERY:
                self._commit_ingested(index, pending)
        self._commit_ingested(index, pending)
        progress("ingest", len(files), len(files))
        return report

    def _stages(self, doc: Document) -> set[str]:
        return self.store.stages(doc.id) if self.store.has_document(doc.id) else set()

    def _commit_ingested(self, index: VectorIndex, pending: list[str]) -> None:
        # The "ingested" mark comes after the vectors are on disk: a crash in
        # between only means the document is chunked and embedded again.
        index.save()
        for doc_id in pending:
            self.store.mark_stage(doc_id, STAGE_INGESTED)
        pending.clear()

    # -- build ----------------------------------------------------------------------

    def build(self, progress: Progress = _no_progress, *, grow: bool = True) -> BuildReport:
        """Extract entities and triples from new documents, then link the layers.

        With ``construction.levels`` > 0 the extracted relations are candidates
        for the SAC-KG loop (:meth:`grow`), which decides what enters the graph;
        ``grow=False`` leaves the loop for a later :meth:`grow` call.
        """
        from medkg.construction.extraction import assemble, extract

        report = BuildReport()
        concepts = self.concept_index()
        nlp = self.pipeline(concepts)
        todo = [
            (layer, doc_id)
            for layer in (Layer.LITERATURE, Layer.USER)
            for doc_id in self.store.document_ids(layer)
            if STAGE_EXTRACTED not in self.store.stages(doc_id)
            and STAGE_INGESTED in self.store.stages(doc_id)
        ]
        relate = self.relation_model(concepts)
        engine = self._llm_engine(concepts) if self.settings.extraction.engine == "llm" else None
        for i, (layer, doc_id) in enumerate(todo):
            progress("extract", i, len(todo))
            chunks = self.store.chunks(doc_id)
            extraction = list(engine(chunks) if engine is not None
                              else extract(chunks, nlp, relate=relate))
            entities, triples = assemble(
                layer, extraction, concepts, self.settings.extraction.context_chars,
            )
            sentences = sorted({(ex.chunk.id, *m.sentence) for ex in extraction
                                for m in ex.mentions})
            by_chunk = {ex.chunk.id: ex.chunk for ex in extraction}
            self.corpus.replace_document(
                doc_id, layer, [(c, s, e, by_chunk[c].text[s - by_chunk[c].start:
                                                          e - by_chunk[c].start])
                                for c, s, e in sentences], entities, triples)
            if self.settings.construction.levels:
                triples = []  # the SAC-KG loop decides which of them enter the graph
            elif self.settings.extraction.verify:
                triples, rejected = self._verify(entities, triples)
                report.rejected += rejected
            self.store.add_entities(entities)
            self.store.add_triples(triples)
            self.store.mark_stage(doc_id, STAGE_EXTRACTED)
            report.documents += 1
        progress("extract", len(todo), len(todo))
        if self.settings.construction.levels and grow:
            report.levels = self.grow(concepts, progress)
        # Links depend on the entities (new with every extraction or deletion, which
        # change the corpus version), the vocabulary and the linking settings.
        state = json.dumps([self.corpus.fingerprint(),
                            self.settings.linking.model_dump(mode="json")])
        marker = self.root / "construction" / "linked"
        if not marker.exists() or marker.read_text(encoding="utf-8") != state:
            self._link(concepts, progress)
            marker.write_text(state, encoding="utf-8")
        self.tag_tree(progress)
        counts = self.store.counts()
        report.links = counts["links"]
        report.entities = counts["user.entities"] + counts["literature.entities"]
        report.triples = counts["user.triples"] + counts["literature.triples"]
        return report

    def grow(self, concepts: ConceptIndex | None = None, progress: Progress = _no_progress
             ) -> list[LevelStats]:
        """Run the SAC-KG loop to ``construction.levels`` levels from the configured
        seeds; resumes an interrupted run. Returns what each level did."""

        from medkg.construction.corpus import node_of
        from medkg.construction.generator import BuiltinGenerator, LLMGenerator, example_triples
        from medkg.construction.growth import STAGE, Growth, GrowthState
        from medkg.construction.pruner import resolve_pruner
        from medkg.rulehub.rules import load_rules
        from medkg.rulehub.verify import Verifier

        cfg = self.settings.construction
        concepts = concepts or self.concept_index()
        layers = {Layer.USER: self.store.entities(Layer.USER),
                  Layer.LITERATURE: self.store.entities(Layer.LITERATURE)}
        entities = {e.id: e for group in layers.values() for e in group}
        seeds = _seed_nodes(cfg.seeds, layers)
        if not seeds:
            raise WorkspaceError(
                f"the SAC-KG loop has no seed entities (construction.seeds = {cfg.seeds!r})",
                hint="ingest user documents (`medkg ingest --layer user`) or set "
                "construction.seeds to 'all' or to entity names")
        rules = load_rules()
        use_llm = self.settings.extraction.engine == "llm"
        generator = (LLMGenerator(self.llm(), self.corpus, entities) if use_llm
                     else BuiltinGenerator(self.corpus, entities, rules))
        decide = None
        if cfg.prune:
            pruner = resolve_pruner(cfg.pruner)
            embedder = self.embedder

            def decide(found: Sequence[Entity]) -> list[bool]:
                return pruner.grow(embedder, [e.name for e in found], [e.type for e in found])

        growth = Growth(
            self.corpus, entities, generator,
            Verifier(rules, min_triples=cfg.min_triples) if cfg.verify else None, decide, cfg,
            store_triples=self.store.add_triples, existing=self.store.triples(),
            record=lambda item, reason: self.ledger.fail(STAGE, item, reason),
            examples=lambda head: example_triples(head, concepts, cfg.examples),
        )
        state = GrowthState(self.root / "construction" / "growth.sqlite")
        try:
            signature = json.dumps([self.corpus.fingerprint(), generator.name,
                                    cfg.model_dump(exclude={"max_heads_per_level"})])
            state.start(signature)
            return growth.run(state, sorted({node_of(e) for e in seeds}), progress)
        finally:
            state.close()

    def _verify(self, entities: list[Entity], triples: list[Triple]
                ) -> tuple[list[Triple], int]:
        """Keep the triples no hard rule of the RuleHub rejects; record each rejected
        one with the rule and its reason (``medkg stats`` lists them)."""
        from medkg.rulehub.verify import Verifier

        violations = Verifier(min_triples=0).check(triples, {e.id: e for e in entities})
        rejected: dict[str, list[str]] = {}
        for v in violations:
            if v.hard and v.triple_id is not None:
                rejected.setdefault(v.triple_id, []).append(
                    f"{v.rule} {v.message}" + (f" ({v.detail})" if v.detail else ""))
        for triple_id, reasons in rejected.items():
            self.ledger.fail("verify", triple_id, "; ".join(reasons))
        return [t for t in triples if t.id not in rejected], len(rejected)

    def _llm_engine(self, concepts: ConceptIndex
                    ) -> Callable[[list[Chunk]], Iterable[ChunkExtraction]]:
        from medkg.construction.lexicon import resolve_lexicon
        from medkg.construction.llm_extraction import llm_extract
        from medkg.construction.nlp import Normaliser

        llm = self.llm()
        normaliser = Normaliser(concepts, resolve_lexicon(self.settings.extraction.lexicon))
        return lambda chunks: llm_extract(chunks, llm, normaliser)

    def estimate_build(self) -> BuildEstimate:
        """What ``build`` would send to the LLM, without calling it: one extraction
        and one tag-summary call per new chunk, their prompt tokens counted with
        the backend's tokenizer where it has one, output tokens estimated from each
        prompt's few-shot example, and the cost at the configured prices. The
        SAC-KG loop's calls (``--levels``) depend on what it finds and are not
        counted."""
        from medkg.construction.llm_extraction import expected_output_tokens
        from medkg.llm.prompts import load_prompt

        cfg = self.settings.llm
        backend = self.llm().backend  # counts tokens; makes no call
        prompts = []
        for name in ("extract_entities", "tag_summary"):
            prompt = load_prompt(name)
            example_text, example_answer = prompt.examples[0]
            prompts.append((prompt, backend.count_tokens(example_answer)
                            / backend.count_tokens(example_text)))
        estimate = BuildEstimate()
        for layer in (Layer.LITERATURE, Layer.USER):
            for doc_id in self.store.document_ids(layer):
                stages = self.store.stages(doc_id)
                if STAGE_EXTRACTED in stages or STAGE_INGESTED not in stages:
                    continue
                estimate.documents += 1
                for chunk in self.store.chunks(doc_id):
                    for prompt, ratio in prompts:
                        messages = prompt.render(text=chunk.text)
                        estimate.calls += 1
                        estimate.prompt_tokens += sum(backend.count_tokens(m.content) + 4
                                                      for m in messages)
                        estimate.completion_tokens += expected_output_tokens(
                            backend.count_tokens(chunk.text), ratio, cfg.max_tokens)
        estimate.cost_usd = round((estimate.prompt_tokens * cfg.price_in_per_mtok
                                   + estimate.completion_tokens * cfg.price_out_per_mtok) / 1e6, 6)
        return estimate

    def _link(self, concepts: ConceptIndex, progress: Progress) -> int:
        from medkg.linking.linker import embed_entities, link_definitions, link_references

        progress("link", 0, 1)
        user = self.store.entities(Layer.USER)
        literature = self.store.entities(Layer.LITERATURE)
        user_vectors = embed_entities(self.embedder, user)
        lit_vectors = embed_entities(self.embedder, literature)
        index = self.index("entities")
        index.upsert([e.id for e in user], user_vectors)
        index.upsert([e.id for e in literature], lit_vectors)
        index.save()
        cfg = self.settings.linking
        by_id = {c.id: c for c in concepts.concepts()}
        entities = [*user, *literature]
        # Normalised entities need only their own concepts' vectors; entities without
        # a concept are matched against every concept, which then all need vectors.
        wanted = (by_id if any(not e.concept_ids for e in entities)
                  else [cid for e in entities for cid in e.concept_ids])
        concept_vectors = self._embed_concepts(wanted, concepts, progress)
        links = link_references(user, user_vectors, literature, index, cfg)
        links += link_definitions(user, user_vectors, by_id, concept_vectors, cfg)
        links += link_definitions(literature, lit_vectors, by_id, concept_vectors, cfg)
        if cfg.resolution:
            links += self._resolve(Layer.USER, user, user_vectors, index)
            links += self._resolve(Layer.LITERATURE, literature, lit_vectors, index)
        self.store.add_links(links)
        progress("link", 1, 1)
        return len(links)

    def _resolve(self, layer: Layer, entities: list[Entity], vectors: Matrix,
                 index: VectorIndex) -> list[Link]:
        """``same_as`` links for one layer; merges that no longer hold are removed,
        merges a curator undid (``different_from``) are never made again."""
        from medkg.abbreviations import find_abbreviations
        from medkg.linking.resolution import ResolutionSettings, resolve

        cfg = self.settings.linking
        abbreviations: dict[str, str] = {}
        for doc_id in self.store.document_ids(layer):
            abbreviations.update(find_abbreviations(self.store.document(doc_id).text))
        refused = [(x.source, x.target) for x in self.store.links(kind=LinkKind.DIFFERENT_FROM)]
        settings = ResolutionSettings(candidates=cfg.resolution_candidates,
                                      min_cosine=cfg.resolution_min_cosine,
                                      min_name_similarity=cfg.resolution_min_name_similarity)
        merges = resolve(entities, vectors, index, abbreviations, refused, settings)
        ids = {e.id for e in entities}
        stale = [x for x in self.store.links(kind=LinkKind.SAME_AS)
                 if x.source in ids and x not in merges]
        self.store.remove_links(stale)
        return merges

    def delete_document(self, document_id: str) -> Deletion:
        """Remove a document and what only it supported, from the graph and the
        vector indexes; what other documents also support stays."""
        gone = self.store.delete_document(document_id)
        self.corpus.delete_document(document_id)  # a new corpus version: links are redone
        for kind, ids in (("chunks", gone.chunks), ("entities", gone.entities)):
            index = self.index(kind)
            index.delete(ids)
            index.save()
        return gone

    def merges(self) -> list[tuple[Link, Entity, Entity]]:
        """Every entity-resolution merge with the two entities (their mentions say
        which documents they come from)."""
        out = []
        for link in self.store.links(kind=LinkKind.SAME_AS):
            out.append((link, self.store.entity(link.source), self.store.entity(link.target)))
        return out

    def undo_merge(self, entity_id: str) -> Link:
        """Split ``entity_id`` from the entity it was merged into, for good: the
        ``same_as`` link goes, a ``different_from`` link keeps later builds from
        merging them again."""
        found = [x for x in self.store.links(source=entity_id, kind=LinkKind.SAME_AS)]
        if not found:
            raise WorkspaceError(f"{entity_id} is not merged into another entity",
                                 hint="`medkg merges list` shows the merges")
        link = found[0]
        self.store.remove_links([link])
        refusal = Link(kind=LinkKind.DIFFERENT_FROM, source=link.source, target=link.target,
                       score=link.score, method="curator")
        self.store.add_links([refusal])
        return refusal

    # -- tag tree -------------------------------------------------------------------

    def tag_tree(self, progress: Progress = _no_progress) -> TagTree:
        """The tag tree over every chunk, brought up to date: summaries and leaves
        for new chunks, removed ones taken out; new settings rebuild it."""
        from medkg.retrieval.tagtree import TagTree, TreeSettings

        cfg = self.settings.retrieval
        settings = TreeSettings(levels=cfg.tree_levels, top_fraction=cfg.tree_top_fraction,
                                floor=cfg.tree_floor)
        directory = self.root / "retrieval"
        tree = TagTree.load(directory)
        if tree is None or tree.settings != settings:
            tree = TagTree(settings)
        chunks = {c.id: c for layer in (Layer.LITERATURE, Layer.USER)
                  for doc_id in self.store.document_ids(layer)
                  if STAGE_EXTRACTED in self.store.stages(doc_id)
                  for c in self.store.chunks(doc_id)}
        leaves = {n.id for n in tree.nodes.values() if n.level == 0}
        new = [c for cid, c in chunks.items() if cid not in leaves]
        gone = sorted(leaves - set(chunks))
        if not new and not gone:
            return tree
        progress("tag tree", 0, 1)
        tree.remove_leaves(gone)
        summaries = self._summaries(new)
        index = self.index("chunks")
        text_vectors = self.embedder.embed([s.text() or c.text[:200]
                                            for c, s in zip(new, summaries, strict=True)])
        own = [index.vector(c.id) for c in new]
        vectors = [tv if v is None else tv + v for tv, v in zip(text_vectors, own, strict=True)]
        tree.add_leaves([(c.id, s, v) for c, s, v in zip(new, summaries, vectors, strict=True)])
        tree.save(directory)
        progress("tag tree", 1, 1)
        return tree

    def _summaries(self, chunks: Sequence[Chunk]) -> list[TagSummary]:
        """Tag summaries of chunks: from their meta-graph (builtin engine) or written
        by the chat model (LLM engine; a failed answer falls back to the builtin)."""
        from medkg.retrieval.tags import TagSummary, summarise_chunk

        wanted = {c.id for c in chunks}
        by_chunk: dict[str, list[Entity]] = {}
        for layer in (Layer.LITERATURE, Layer.USER):
            for e in self.store.entities(layer):
                for cid in {m.chunk_id for m in e.mentions} & wanted:
                    mine = [m for m in e.mentions if m.chunk_id == cid]
                    by_chunk.setdefault(cid, []).append(e.model_copy(update={"mentions": mine}))
        triples: dict[str, list[Triple]] = {}
        for t in self.store.triples():
            for ev in t.evidence:
                if ev.chunk_id in wanted:
                    triples.setdefault(ev.chunk_id, []).append(t)
        out = [summarise_chunk(c.text, c.start, by_chunk.get(c.id, []), triples.get(c.id, []))
               for c in chunks]
        if self.settings.extraction.engine == "llm":
            from medkg.errors import LLMOutputError
            from medkg.llm.prompts import load_prompt
            from medkg.llm.schemas import TagSummaryAnswer

            prompt, llm = load_prompt("tag_summary"), self.llm()
            for i, c in enumerate(chunks):
                try:
                    answer = llm.structured("tag_summary", prompt.render(text=c.text),
                                            TagSummaryAnswer)
                except LLMOutputError as exc:
                    llm.ledger.fail("tag_summary", c.id, str(exc))
                    continue
                written = TagSummary(tags={k: v for k, v in answer.model_dump().items() if v})
                if written:
                    out[i] = written
        return out

    # -- ask / export ---------------------------------------------------------------

    def retriever(self) -> LocalRetriever:
        from medkg.retrieval.local import Indexes, LocalRetriever

        return LocalRetriever(
            self.store, self.embedder,
            Indexes(chunks=self.index("chunks"), entities=self.index("entities")),
            self.pipeline(), self.settings.retrieval,
        )

    def ask(self, question: str, mode: str | None = None,
            retriever: LocalRetriever | None = None) -> Answer:
        """Answer with numbered citations and definitions, by ``mode`` (default: the
        ``retrieval.mode`` setting; U-Retrieval falls back to local search in a
        workspace whose tag tree has not been built)."""
        from medkg.retrieval.tagtree import TagTree
        from medkg.retrieval.uretrieval import u_retrieve

        mode = mode or self.settings.retrieval.mode
        if mode not in ("u-retrieval", "local", "vector"):
            raise WorkspaceError(f"unknown retrieval mode {mode!r}",
                                 hint="use u-retrieval, local or vector")
        retriever = retriever or self.retriever()
        tree = None
        if mode == "u-retrieval":
            if self._tree is None:
                self._tree = TagTree.load(self.root / "retrieval")
            tree = self._tree
        if tree is not None:
            answer = u_retrieve(question, retriever, tree, self.embedder, self.pipeline(),
                                self.settings.retrieval)
        else:
            answer = retriever.ask(question, mode="local" if mode == "u-retrieval" else mode)
            if mode == "u-retrieval":
                answer.trace["note"] = "no tag tree yet (run `medkg build`): local search"
        if self.settings.retrieval.answer_engine == "llm":
            from medkg.retrieval.generate import generate_answer

            answer = generate_answer(answer, self.llm())
        return answer

    def export(self, path: Path, fmt: str) -> Path:
        self.store.export(path, fmt)
        return path


def _seed_nodes(setting: str, layers: dict[Layer, list[Entity]]) -> list[Entity]:
    """The seed entities the ``construction.seeds`` setting names."""
    from medkg.ontology.index import normalize_term

    if setting in ("user", "literature"):
        return list(layers[Layer(setting)])
    everything = [e for group in layers.values() for e in group]
    if setting == "all":
        return everything
    wanted = {normalize_term(x) for x in setting.split(",") if x.strip()}
    wanted |= {x.strip() for x in setting.split(",")}
    return [e for e in everything
            if normalize_term(e.name) in wanted or wanted & set(e.concept_ids)]


__all__ = ["BuildReport", "IngestReport", "MedKGError", "Workspace"]
