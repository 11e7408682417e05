"""U-Retrieval (MedGraphRAG): top-down through the tag tree, then bottom-up.

1. The question is summarised into tags (its entities, by category) and
   embedded together with its own text.
2. Top-down: the tag tree is searched level by level (a beam of the most
   similar nodes) down to the groups of chunks; their chunks are the scope.
3. Inside the scope the local retriever takes the entities most similar to
   the question, their triple neighbours across all three layers, and drafts
   an answer from the best sentences.
4. Bottom-up: from the group of the draft's best chunk, each ancestor's
   summary is compared with the question's tags and the draft's facts; an
   ancestor that shares terms with them widens the scope to its chunks, and
   the answer is drawn again from the wider scope.

The answer carries the path through the tree and every refinement step in
its trace.
"""

from __future__ import annotations

import numpy as np
from spacy.language import Language

from medkg.config import RetrievalConfig
from medkg.linking.embeddings import Embedder
from medkg.retrieval.answer import Answer
from medkg.retrieval.local import LocalRetriever
from medkg.retrieval.tags import TagSummary, category_of_group
from medkg.retrieval.tagtree import TagTree
from medkg.retrieval.trace import RefinementStep


def query_tags(question: str, nlp: Language) -> TagSummary:
    tags: dict[str, list[str]] = {}
    for ent in nlp(question).ents:
        category = category_of_group(ent.label_)
        if category is not None and ent.text not in tags.setdefault(category, []):
            tags[category].append(ent.text)
    return TagSummary(tags={c: t for c, t in tags.items() if t})


def u_retrieve(question: str, local: LocalRetriever, tree: TagTree, embedder: Embedder,
               nlp: Language, config: RetrievalConfig) -> Answer:
    """U-Retrieval with ``config.tree_beam`` nodes per level and the scope widened
    bottom-up to at most ``config.max_scope`` chunks."""
    tags = query_tags(question, nlp)
    texts = [question, tags.text()] if tags else [question]
    vectors = embedder.embed(texts)
    qvec = vectors[0]
    tree_query = np.mean(vectors, axis=0).astype(np.float32)
    leaves, path = tree.descend(tree_query, config.tree_beam)
    scope = set(leaves)
    draft = local.ask(question, mode="u-retrieval", scope=scope, qvec=qvec)
    terms = tags.terms() | {n.lower() for f in draft.facts for n in (f.head, f.tail)}
    steps: list[RefinementStep] = []
    ranked = [c for c in draft.trace.retrieved_chunks if c in tree.nodes]
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
    answer = draft
    if len(scope) > len(leaves):
        answer = local.ask(question, mode="u-retrieval", scope=scope, qvec=qvec)
    answer.trace = answer.trace.model_copy(update={
        "query_tags": tags.tags, "tree_path": path, "scope_chunks": len(scope),
        "refinement": steps, "draft_citations": [c.chunk_id for c in draft.citations]})
    return answer
