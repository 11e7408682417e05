"""What a workspace holds, as typed rows: one shape for the CLI's tables, its
``--json`` and the HTTP API, so scripts never scrape a table.

``documents``, ``stats``, ``status``, ``vocabulary`` and ``merges`` read a
workspace's parts; ``rules`` reads the RuleHub.
"""

from __future__ import annotations

from collections import Counter
from typing import TYPE_CHECKING

from pydantic import BaseModel

from medkg.llm.ledger import StageSummary
from medkg.model import Layer
from medkg.rulehub.outcomes import RuleOutcome
from medkg.rulehub.rules import Rule

if TYPE_CHECKING:
    from medkg.components import Components


class DocumentInfo(BaseModel):
    id: str
    layer: Layer
    title: str
    source: str
    stages: list[str]
    revision_of: list[str] = []  # earlier versions of this document that it replaced


class LayerCount(BaseModel):
    documents: int
    chunks: int
    entities: int
    triples: int


class LLMFailure(BaseModel):
    stage: str
    item: str
    reason: str


class Stats(BaseModel):
    quads: int
    user: LayerCount
    literature: LayerCount
    concepts: int  # in the vocabulary
    links: int
    decisions: int  # curators' review decisions
    llm: list[StageSummary] = []  # the LLM ledger, per stage (none without LLM calls)
    llm_failures: list[LLMFailure] = []  # the latest 20
    rule_outcomes: dict[str, int] = {}  # statements the RuleHub rejected / restated


class Status(BaseModel):
    """What the next build will do (document ids in each list)."""

    current: list[str]
    new: list[str]  # never extracted (or unfinished)
    stale_settings: list[str]  # extraction settings or models changed
    stale_vocabulary: list[str]  # a vocabulary load touched them
    pending_deletes: int  # deletes cut short; the next command that writes finishes them
    links_current: bool  # False: the next build makes the cross-layer links again
    to_extract: int


class VocabularyGroup(BaseModel):
    source: str
    group: str  # the semantic group's code ("-": none)
    group_name: str
    concepts: int
    with_definition: int


class MergeInfo(BaseModel):
    source: str
    source_name: str
    target: str
    target_name: str
    score: float
    method: str
    source_mentions: int
    target_mentions: int
    documents: list[str]


class RuleSet(BaseModel):
    version: str
    rules: list[Rule]


def documents(parts: Components, layer: Layer | None = None) -> list[DocumentInfo]:
    store = parts.store
    out = []
    for lay in ([layer] if layer else [Layer.USER, Layer.LITERATURE]):
        for doc_id in store.document_ids(lay):
            doc = store.document(doc_id)
            out.append(DocumentInfo(id=doc.id, layer=doc.layer, title=doc.title,
                                    source=doc.source, revision_of=doc.revision_of,
                                    stages=sorted(s for s in store.stages(doc_id)
                                                  if "@" not in s)))
    return out


def stats(parts: Components) -> Stats:
    c = parts.store.counts()
    llm: list[StageSummary] = []
    failures: list[LLMFailure] = []
    if parts.layout.ledger.exists():
        cfg = parts.settings.llm
        llm = parts.ledger.summary(cfg.price_in_per_mtok, cfg.price_out_per_mtok)
        failures = [LLMFailure(stage=s, item=i, reason=r)
                    for s, i, r in parts.ledger.failures(20)]
    outcomes = parts.rule_log.counts() if parts.layout.rule_log.exists() else {}
    return Stats(quads=c.quads, user=LayerCount(**vars(c.user)),
                 literature=LayerCount(**vars(c.literature)), concepts=c.concepts,
                 links=c.links, decisions=c.decisions, llm=llm, llm_failures=failures,
                 rule_outcomes=outcomes)


def rule_outcomes(parts: Components, limit: int = 100) -> list[RuleOutcome]:
    """The RuleHub's latest outcomes, newest first."""
    return parts.rule_log.latest(limit) if parts.layout.rule_log.exists() else []


def status(parts: Components) -> Status:
    from medkg.pipeline.link import is_current
    from medkg.pipeline.reextract import extraction_status

    st = extraction_status(parts)
    return Status(current=st.current, new=st.new, stale_settings=st.stale_settings,
                  stale_vocabulary=st.stale_vocabulary,
                  pending_deletes=len(parts.fingerprints.pending_deletes()),
                  links_current=is_current(parts),
                  to_extract=len(st.new) + len(st.stale_settings) + len(st.stale_vocabulary))


def vocabulary(parts: Components) -> list[VocabularyGroup]:
    from medkg.ontology.semantic import GROUPS

    concepts = parts.store.concepts()
    counts = Counter((c.source, c.semantic_group or "-") for c in concepts)
    defined = Counter((c.source, c.semantic_group or "-") for c in concepts if c.definition)
    return [VocabularyGroup(source=source, group=group, group_name=GROUPS.get(group, ""),
                            concepts=n, with_definition=defined[(source, group)])
            for (source, group), n in sorted(counts.items())]


def merges(parts: Components) -> list[MergeInfo]:
    from medkg.pipeline.curate import merges as found

    out = []
    for link, source, target in found(parts):
        out.append(MergeInfo(
            source=source.id, source_name=source.name, target=target.id,
            target_name=target.name, score=link.score, method=link.method,
            source_mentions=len(source.mentions), target_mentions=len(target.mentions),
            documents=sorted({m.document_id for m in (*source.mentions, *target.mentions)})))
    return out


def rules() -> RuleSet:
    from medkg.rulehub.rules import load_rules

    ruleset = load_rules()
    return RuleSet(version=str(ruleset.version), rules=list(ruleset.rules))
