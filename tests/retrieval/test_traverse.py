"""The traverse mode: the search on its own over a small in-memory graph (depth,
pruning, clue entities, links, stopping rules), then the mode on a built
workspace (paths in the trace, citations that hold, conditions)."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from pathlib import Path as FilePath

import numpy as np
import pytest

from medkg.config import RetrievalConfig
from medkg.linking.embeddings import Matrix
from medkg.model import EntityBrief, Evidence, Layer, Predicate, Qualifiers, Triple
from medkg.retrieval.traverse import (
    Candidate,
    Path,
    TraversalGraph,
    ranked_chunks,
    traverse,
)
from medkg.workspace import Workspace
from tests.conftest import EXAMPLES, SEED_OBO


def _triple(head: str, predicate: Predicate, tail: str, chunk: str = "c",
            negated: bool = False) -> Triple:
    q = Qualifiers(negated=negated)
    return Triple(id=Triple.key_for(Layer.LITERATURE, head, predicate, tail, q),
                  layer=Layer.LITERATURE, head=head, predicate=predicate, tail=tail,
                  qualifiers=q, confidence=0.8,
                  evidence=[Evidence(chunk_id=chunk, document_id="d", start=0, end=1,
                                     quote="x")])


class Graph:
    """A graph held in lists: what the retriever gives a traversal, without a store."""

    def __init__(self, triples: list[Triple], links: dict[str, set[str]] | None = None
                 ) -> None:
        self.triples = triples
        self.links = links or {}
        self.reads: list[list[str]] = []

    def triples_of(self, entity_ids: Sequence[str]) -> list[Triple]:
        self.reads.append(list(entity_ids))
        ids = set(entity_ids)
        return [t for t in self.triples if t.head in ids or t.tail in ids]

    def briefs(self, entity_ids: Iterable[str]) -> dict[str, EntityBrief]:
        return {e: EntityBrief(id=e, layer=Layer.LITERATURE, name=e, type="x")
                for e in entity_ids}

    def linked(self, entity_id: str) -> set[str]:
        return self.links.get(entity_id, set())

    def entity_vector(self, entity_id: str) -> Matrix | None:
        return np.array([1.0 if entity_id.startswith("clue") else 0.1], dtype=np.float32)


class TableGuide:
    """Scores a triple by a table (what the test says is relevant), and its evidence
    by another (by default the same)."""

    name = "table"

    def __init__(self, relevant: dict[str, float],
                 evidence: dict[str, float] | None = None) -> None:
        self.relevant = relevant
        self.answers = relevant if evidence is None else evidence

    def score(self, question: str, qvec: Matrix, candidates: Sequence[Candidate],
              entities: dict[str, EntityBrief]) -> list[float]:
        return [self.relevant.get(f"{c.triple.head}>{c.triple.tail}", 0.0)
                for c in candidates]

    def evidence(self, question: str, qvec: Matrix, candidates: Sequence[Candidate],
                 entities: dict[str, EntityBrief]) -> list[float]:
        return [self.answers.get(f"{c.triple.head}>{c.triple.tail}", 0.0)
                for c in candidates]

    def clues(self, question: str, qvec: Matrix, candidates: Sequence[EntityBrief],
              graph: TraversalGraph, n: int) -> list[str]:
        def near(e: EntityBrief) -> float:
            vec = graph.entity_vector(e.id)
            return float(vec @ qvec) if vec is not None else 0.0

        return [e.id for e in sorted(candidates, key=lambda e: -near(e))[:n]]


QVEC = np.array([1.0], dtype=np.float32)
CHAIN = [
    _triple("gene", Predicate.ASSOCIATED_WITH, "disease", "c1"),
    _triple("drug", Predicate.TREATS, "disease", "c2"),
    _triple("drug", Predicate.HAS_ADVERSE_EFFECT, "harm", "c3"),
    _triple("gene", Predicate.INTERACTS_WITH, "noise", "c4"),
]
RELEVANT = {"gene>disease": 0.9, "drug>disease": 0.8, "drug>harm": 0.5}


def test_two_hops_reach_the_answer_and_record_the_path() -> None:
    config = RetrievalConfig(max_depth=2, traverse_min_keep=0.2, traverse_min_kept=1)
    t = traverse("q", QVEC, ["gene"], Graph(CHAIN), TableGuide(RELEVANT), config)
    path = t.paths["drug"]
    assert [h.target for h in path.hops] == ["disease", "drug"]
    assert [h.depth for h in path.hops] == [1, 2]
    assert "noise" not in t.paths  # pruned: scored under traverse_min_keep
    assert "harm" not in t.paths  # a third hop: past max_depth
    assert t.steps[-1].stop == "depth limit"
    # The evidence most likely to name the answer first, then the topic entities'
    # own chunks.
    assert ranked_chunks(t, {"gene": ["c1", "c7"]}) == ["c1", "c2", "c7"]
    # The guide's evidence score ranks, not the hop's score: the second hop's
    # evidence names what the question could not.
    chained = traverse("Which drugs treat the diseases the gene is associated with?", QVEC,
                       ["gene"], Graph(CHAIN), TableGuide(RELEVANT, {"drug>disease": 0.7,
                                                                     "gene>disease": 0.1}),
                       config)
    assert ranked_chunks(chained, {})[:2] == ["c2", "c1"]


def test_depth_and_beam_bound_the_search() -> None:
    graph = Graph(CHAIN)
    one = traverse("q", QVEC, ["gene"], graph, TableGuide(RELEVANT),
                   RetrievalConfig(max_depth=1, traverse_clues=0))
    assert set(one.paths) == {"gene", "disease"} and len(graph.reads) == 1
    deep = traverse("q", QVEC, ["gene"], Graph(CHAIN), TableGuide(RELEVANT),
                    RetrievalConfig(max_depth=4, traverse_beam=1, traverse_clues=0))
    # one triple per hop: gene>disease, drug>disease, drug>harm; then nothing new
    assert len(deep.triples) == 3 and "harm" in deep.paths
    assert deep.steps[-1].stop == "nothing new to follow"


def test_the_search_stops_when_the_context_suffices() -> None:
    t = traverse("q", QVEC, ["gene"], Graph(CHAIN), TableGuide(RELEVANT),
                 RetrievalConfig(max_depth=4, traverse_max_triples=1, traverse_clues=0))
    assert len(t.triples) == 1 and t.steps[-1].stop == "the context suffices"


def test_a_poor_hop_asks_for_clue_entities() -> None:
    triples = [_triple("start", Predicate.ASSOCIATED_WITH, "other"),
               _triple("start", Predicate.ASSOCIATED_WITH, "clue-a"),
               _triple("clue-a", Predicate.TREATS, "answer", "c9")]
    relevant = {"clue-a>answer": 0.9}  # nothing at depth 1 is relevant enough
    t = traverse("q", QVEC, ["start"], Graph(triples), TableGuide(relevant),
                 RetrievalConfig(max_depth=2, traverse_min_kept=1, traverse_clues=1))
    assert t.steps[0].clues == ("clue-a",)
    assert [h.target for h in t.paths["answer"].hops] == ["clue-a", "answer"]
    no_clues = traverse("q", QVEC, ["start"], Graph(triples), TableGuide(relevant),
                        RetrievalConfig(max_depth=2, traverse_clues=0))
    assert "answer" not in no_clues.paths


def test_links_join_the_frontier_and_rejected_triples_are_not_followed() -> None:
    rejected = _triple("twin", Predicate.TREATS, "rejected").model_copy(
        update={"review": "rejected"})
    triples = [_triple("twin", Predicate.TREATS, "target"), rejected]
    t = traverse("q", QVEC, ["user-entity"], Graph(triples, {"user-entity": {"twin"}}),
                 TableGuide({"twin>target": 1.0, "twin>rejected": 1.0}), RetrievalConfig())
    assert "target" in t.paths and "rejected" not in t.paths


def test_a_better_path_replaces_a_worse_one() -> None:
    p = Path(())
    assert p.hops == () and traverse(
        "q", QVEC, [], Graph([]), TableGuide({}), RetrievalConfig()).steps[0].stop


@pytest.mark.slow
def test_traverse_mode_answers_with_paths_and_conditions(small_ws: Workspace) -> None:
    retriever = small_ws.retriever()
    answer = retriever.ask("What are the adverse effects of the drugs that treat "
                           "hypertension?", mode="traverse")
    assert answer.mode == "traverse"
    trace = answer.trace
    assert trace.traversal and trace.paths
    assert any("hypertension" in p for p in trace.paths)
    assert trace.ranking and len(trace.ranking) == len(set(trace.ranking))
    for c in answer.citations:
        assert small_ws.store.document(c.document_id).text[c.start:c.end] == c.quote
    rendered = answer.render_trace()
    assert "hop 1:" in rendered and "path:" in rendered
    topic = [line for line in rendered.splitlines() if "topic entity:" in line]
    assert topic and all("named 'hypertension'" in line for line in topic), rendered
    assert answer.trace.fallback is None
    # The side effects are this answer, not its conditions; a question about a use is
    # answered with the harms that limit it, each cited.
    assert not any(c.kind == "adverse effect" for c in answer.conditions)
    use = retriever.ask("What is lisinopril used to treat, and when should it be avoided?",
                        mode="traverse")
    numbers = {c.n for c in use.citations}
    for cond in use.conditions:
        assert cond.citations and set(cond.citations) <= numbers
    assert any(cond.kind == "adverse effect" and "lisinopril" in cond.text.lower()
               for cond in use.conditions)
    assert "Conditions (when this holds):" in use.render()


@pytest.mark.slow
def test_no_path_falls_back_to_hybrid_evidence_and_says_so(small_ws: Workspace) -> None:
    retriever = small_ws.retriever()
    question = "Which proteins does zebrafish fin regeneration involve?"
    answer = retriever.ask(question, mode="traverse")
    assert answer.trace.fallback and "no path" in answer.trace.fallback
    assert "hybrid" in answer.trace.fallback
    assert answer.render().splitlines()[2].startswith("Note: traverse found no path")
    hybrid = retriever.ask(question, mode="hybrid")
    assert answer.trace.ranking == hybrid.trace.ranking  # hybrid's evidence, as said


def test_a_negated_triple_is_kept_but_not_followed() -> None:
    triples = [_triple("drug", Predicate.TREATS, "disease", "c1", negated=True),
               _triple("disease", Predicate.ASSOCIATED_WITH, "gene", "c2")]
    t = traverse("q", QVEC, ["drug"], Graph(triples),
                 TableGuide({"drug>disease": 0.9, "disease>gene": 0.9}),
                 RetrievalConfig(max_depth=3, traverse_clues=0))
    assert triples[0].id in t.triples  # a condition of the answer
    assert "gene" not in t.paths  # "drug does not treat disease" leads nowhere


def test_answer_groups_read_which_x() -> None:
    from medkg.retrieval.intent import answer_groups

    assert answer_groups("Which drugs treat the conditions that cisplatin can cause?") == {
        "CHEM"}
    assert answer_groups("What adverse effects can the drugs used to treat gout cause?") == {
        "DISO"}
    assert answer_groups("Which genes are associated with asthma?") == {"GENE"}
    assert answer_groups("Is metformin safe in pregnancy?") == set()


def test_class_words_are_kinds_of_answer_not_topics() -> None:
    from medkg.retrieval.intent import class_word

    assert all(class_word(w) for w in ("genes", "the diseases", "Drugs", "condition"))
    assert not any(class_word(w) for w in ("metformin", "gene therapy", "BRCA1"))


@pytest.mark.slow
def test_the_builtin_guide_asks_for_a_new_predicate_past_the_first_hop(
        embedder: object) -> None:
    from medkg.retrieval.guide import BuiltinGuide
    from medkg.retrieval.traverse import Candidate

    guide = BuiltinGuide(embedder)  # type: ignore[arg-type]
    question = "Which drugs treat the conditions that cisplatin can cause?"
    qvec = embedder.embed([question])[0]  # type: ignore[attr-defined]
    entities = {e: EntityBrief(id=e, layer=Layer.LITERATURE, name=e, type=g) for e, g in (
        ("amifostine", "CHEM"), ("nephrotoxicity", "DISO"), ("gentamicin", "CHEM"))}
    treats = _triple("amifostine", Predicate.TREATS, "nephrotoxicity")
    harms = _triple("gentamicin", Predicate.HAS_ADVERSE_EFFECT, "nephrotoxicity")
    came_by = Predicate.HAS_ADVERSE_EFFECT  # cisplatin -has_adverse_effect-> nephrotoxicity
    scores = guide.score(question, qvec, [
        Candidate(treats, "nephrotoxicity", "amifostine", came_by),
        Candidate(harms, "nephrotoxicity", "gentamicin", came_by)], entities)
    assert scores[0] > scores[1]  # the second relation asked for, and a drug
    evidence = guide.evidence(question, qvec, [
        Candidate(treats, "nephrotoxicity", "amifostine", came_by, depth=2),
        Candidate(harms, "nephrotoxicity", "gentamicin", came_by, depth=2)], entities)
    assert evidence[0] > evidence[1]


def test_topic_entities_come_from_what_the_question_names() -> None:
    from medkg.retrieval.traverse import topic_entities

    class Embed:
        def embed(self, texts: list[str]) -> Matrix:
            return np.ones((len(texts), 1), dtype=np.float32)

    def search(query: Matrix, k: int) -> list[tuple[str, float]]:
        return [("flurbiprofen", 0.93)]  # whatever is asked, the nearest entity

    config = RetrievalConfig(traverse_partial_min=0.7)
    named = topic_entities([("ibuprofen", "named 'ibuprofen' (MESH:D007052)")], [], [], QVEC,
                           search, Embed(), config)  # type: ignore[arg-type]
    # a look-alike drug is not a topic entity when the question's span matched
    assert [(t.id, t.how) for t in named] == [("ibuprofen", "named")]
    assert "MESH:D007052" in named[0].because
    partial = topic_entities([("ibuprofen", "named")], [], ["ibuprophen tablets"], QVEC,
                             search, Embed(), config)  # type: ignore[arg-type]
    # a span nothing matched gets its nearest entity, saying why
    assert [(t.id, t.how) for t in partial] == [("ibuprofen", "named"),
                                                ("flurbiprofen", "similar")]
    assert partial[1].because == "nearest to 'ibuprophen tablets' (cosine 0.93)"
    nothing = topic_entities([], [], [], QVEC, search, Embed(), config)  # type: ignore[arg-type]
    assert [t.how for t in nothing] == ["question"]
    assert not topic_entities([], [], [], QVEC, search, Embed(),  # type: ignore[arg-type]
                              RetrievalConfig(traverse_partial_min=0.95))


@pytest.mark.slow
def test_a_chained_question_on_a_users_notes(tmp_path: FilePath) -> None:
    """examples/chains: ibuprofen caused bronchospasm (a user's note and the
    literature); salbutamol (albuterol in the seed vocabulary) treats it (the
    literature); a note about flurbiprofen eye drops is a look-alike, not a topic."""
    chains = EXAMPLES / "chains"
    with Workspace.create(tmp_path / "ws") as ws:
        ws.load_vocabulary(SEED_OBO)
        ws.ingest([chains / "literature"], Layer.LITERATURE)
        ws.ingest([chains / "user"], Layer.USER)
        ws.build()
        answer = ws.ask("Which drugs treat what ibuprofen causes in asthma?", mode="traverse")
    trace = answer.trace
    assert trace.topic and not any("flurbiprofen" in t.lower() for t in trace.topic)
    assert any("ibuprofen" in p and "bronchospasm" in p and "albuterol" in p
               for p in trace.paths or []), trace.paths
    assert trace.fallback is None
    cited = " ".join(c.quote for c in answer.citations)
    assert "Salbutamol relieves bronchospasm" in cited and "ibuprofen caused bronchospasm" in cited


def test_a_threshold_saved_on_the_old_scale_is_dropped() -> None:
    # medkg.toml files written before the fitted guide hold traverse_min_score = 0.2
    old = RetrievalConfig.model_validate({"traverse_min_score": 0.2})
    assert old.traverse_min_keep == RetrievalConfig().traverse_min_keep
