"""U-Retrieval (MedGraphRAG): top-down through the tag tree, then bottom-up.

1. The question is summarised into tags (its entities, by category) and
   embedded together with its own text.
2. Top-down: the tag tree is searched level by level (a beam of the most
   similar nodes) down to the groups of chunks; their chunks are the scope.
3. The scope is a prior, not a filter: its chunks, most similar first, are one
   more vote in the hybrid fusion (lexical, dense and graph candidates), so a
   gold chunk outside the chosen groups can still be ranked. The fused
   ranking is the draft.
4. Bottom-up: from the group of the draft's best chunk, each ancestor's
   summary is compared with the question's tags and the facts' names; an
   ancestor that shares terms with them widens the scope to its chunks, and
   the answer is drawn with the wider scope as the prior.

The answer carries the path through the tree and every refinement step in
its trace.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from spacy.tokens import Doc

from medkg.config import RetrievalConfig
from medkg.linking.embeddings import Embedder, Matrix
from medkg.retrieval.answer import Answer
from medkg.retrieval.candidates import Prepared
from medkg.retrieval.local import LocalRetriever
from medkg.retrieval.trace import RefinementStep, TreeLevel
from medkg.tagtree.tags import TagSummary, category_of_group
from medkg.tagtree.tree import TagTree


def query_tags(doc: Doc) -> TagSummary:
    """The question's tags: its entities (of the parsed question ``doc``) by category."""
    tags: dict[str, list[str]] = {}
    for ent in doc.ents:
        category = category_of_group(ent.label_)
        if category is not None and ent.text not in tags.setdefault(category, []):
            tags[category].append(ent.text)
    return TagSummary(tags={c: t for c, t in tags.items() if t})


@dataclass(frozen=True)
class Descent:
    """What the top-down pass found for a question."""

    tags: TagSummary
    qvec: Matrix  # the question's own vector
    query: Matrix  # the question with its tags: what the tree is searched with
    leaves: list[str]  # the chunks under the chosen groups
    path: list[TreeLevel]


def descend(question: str, doc: Doc, tree: TagTree, embedder: Embedder,
            config: RetrievalConfig) -> Descent:
    """The top-down pass for a question (``doc``: the question parsed)."""
    tags = query_tags(doc)
    texts = [question, tags.text()] if tags else [question]
    vectors = embedder.embed_query(texts)  # both are asked with
    query = np.mean(vectors, axis=0).astype(np.float32)
    leaves, path = tree.descend(query, config.tree_beam)
    return Descent(tags, vectors[0], query, leaves, path)


def prior(tree: TagTree, chunk_ids: set[str], query: Matrix) -> list[str]:
    """The scope's chunks, most similar to the question first (by their leaf vectors):
    the tree's vote in the fusion."""
    q = query / (np.linalg.norm(query) or 1.0)
    score = {c: float(tree.vectors[c] @ q) for c in chunk_ids if c in tree.vectors}
    return sorted(score, key=lambda c: (-score[c], c))


@dataclass(frozen=True)
class Plan:
    """U-Retrieval up to the answer: the prepared question, the tree's prior after
    the bottom-up refinement, and what the trace reports of both passes."""

    descent: Descent
    prepared: Prepared
    prior: list[str]
    scope: int
    steps: list[RefinementStep]
    draft: list[str]


def plan(question: str, local: LocalRetriever, tree: TagTree, embedder: Embedder,
         config: RetrievalConfig) -> Plan:
    """Top-down, then bottom-up. The question is prepared once (graph context,
    lexical and dense candidates); the draft is the fused ranking with the first
    scope as the prior; ancestors of its best chunk that share terms with the
    question's tags or the facts' names widen the scope (to at most
    ``config.max_scope`` chunks)."""
    d = descend(question, local.parse(question), tree, embedder, config)
    prepared = local.prepare(question, mode="u-retrieval", qvec=d.qvec)
    scope = set(d.leaves)
    draft = [c for c, _ in local.fuse(prepared, prior(tree, scope, d.query))]
    terms = d.tags.terms() | local.fact_names(prepared)
    steps: list[RefinementStep] = []
    ranked = [c for c in draft if c in tree.nodes]
    if ranked:
        for ancestor in tree.ancestors(ranked[0]):
            node = tree.nodes[ancestor]
            shared = sorted(terms & node.summary.terms())
            under = set(tree.leaves_under(ancestor))
            step = RefinementStep(node=ancestor, level=node.level,
                                  summary=node.summary.text()[:300], shared_terms=shared[:10])
            if shared and len(scope | under) <= config.max_scope:
                step.added_chunks = len(under - scope)
                scope |= under
            steps.append(step)
    return Plan(d, prepared, prior(tree, scope, d.query), len(scope), steps,
                draft[: config.top_chunks])


def u_retrieve(question: str, local: LocalRetriever, tree: TagTree, embedder: Embedder,
               config: RetrievalConfig) -> Answer:
    """U-Retrieval with ``config.tree_beam`` nodes per level: the plan, then the
    answer drawn once with the refined scope as the prior."""
    p = plan(question, local, tree, embedder, config)
    answer = local.answer(p.prepared, p.prior)
    answer.trace = answer.trace.model_copy(update={
        "query_tags": p.descent.tags.tags, "tree_path": p.descent.path,
        "scope_chunks": p.scope, "refinement": p.steps, "draft_ranking": p.draft})
    return answer
