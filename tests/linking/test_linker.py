import numpy as np

from medkg.config import LinkingConfig
from medkg.linking.linker import (
    compatible,
    lexical_candidates,
    link_definitions,
    link_references,
)
from medkg.linking.vectors import VectorIndex
from medkg.model import Concept, Entity, Layer, LinkKind
from medkg.ontology.index import ConceptIndex


def unit(*xs: float) -> np.ndarray:
    v = np.array(xs, dtype=np.float32)
    return v / np.linalg.norm(v)


def ent(eid: str, layer: Layer, group: str, concepts: list[str] | None = None) -> Entity:
    return Entity(id=eid, layer=layer, name=eid, type=group, concept_ids=concepts or [])


CFG = LinkingConfig(reference_threshold=0.8, definition_threshold=0.8)


def test_reference_links_by_concept_and_by_similarity() -> None:
    lit = [ent("l-htn", Layer.LITERATURE, "DISO", ["C:htn"]),
           ent("l-hypo", Layer.LITERATURE, "DISO", ["C:hypo"]),
           ent("l-drug", Layer.LITERATURE, "CHEM")]
    index = VectorIndex(3)
    index.upsert([e.id for e in lit], np.stack([unit(1, 0, 0), unit(0.9, 0.3, 0), unit(0, 0, 1)]))
    user = [ent("u-htn", Layer.USER, "DISO", ["C:htn"]), ent("u-new", Layer.USER, "CHEM")]
    links = link_references(user, np.stack([unit(1, 0.1, 0), unit(0, 0.1, 1)]), lit, index, CFG)
    got = {(link.source, link.target, link.method) for link in links}
    assert ("u-htn", "l-htn", "concept+embedding") in got
    assert ("u-new", "l-drug", "embedding") in got
    # l-hypo is similar to u-htn but a different concept of the same type; it links only
    # by similarity above the threshold, and every link records its score.
    assert all(0 < link.score <= 1 and link.kind is LinkKind.REFERENCE_OF for link in links)


def test_similar_entities_of_incompatible_types_do_not_link() -> None:
    lit = [ent("l-drug", Layer.LITERATURE, "CHEM")]
    index = VectorIndex(2)
    index.upsert(["l-drug"], np.stack([unit(1, 0)]))
    user = [ent("u-dis", Layer.USER, "DISO")]
    assert link_references(user, np.stack([unit(1, 0)]), lit, index, CFG) == []


def test_definitions_prefer_the_normalised_concept() -> None:
    concepts = {"C:1": Concept(id="C:1", name="asthma", semantic_group="DISO", source="s"),
                "C:2": Concept(id="C:2", name="aspirin", semantic_group="CHEM", source="s")}
    index = VectorIndex(2)
    index.upsert(["C:1", "C:2"], np.stack([unit(1, 0), unit(0, 1)]))
    entities = [ent("e-norm", Layer.LITERATURE, "DISO", ["C:1"]),
                ent("e-free", Layer.LITERATURE, "CHEM"),
                ent("e-far", Layer.LITERATURE, "DISO")]
    vectors = np.stack([unit(0.2, 1), unit(0.1, 1), unit(1, 1)])
    links = link_definitions(entities, vectors, concepts, index, CFG)
    got = {(link.source, link.target, link.method) for link in links}
    assert got == {("e-norm", "C:1", "normalisation+embedding"), ("e-free", "C:2", "embedding")}


def test_definitions_among_lexical_candidates_only() -> None:
    """With candidates, an entity without a concept is compared with its own
    candidates only: the best of them above the threshold, or no link at all."""
    concepts = {"C:1": Concept(id="C:1", name="asthma", semantic_group="DISO", source="s"),
                "C:2": Concept(id="C:2", name="asthmatic bronchitis", semantic_group="DISO",
                               source="s")}
    index = VectorIndex(2)
    index.upsert(["C:1", "C:2"], np.stack([unit(1, 0), unit(1, 0.3)]))
    entities = [ent("e-a", Layer.LITERATURE, "DISO"), ent("e-b", Layer.LITERATURE, "DISO"),
                ent("e-c", Layer.LITERATURE, "DISO")]
    vectors = np.stack([unit(1, 0), unit(1, 0), unit(1, 0)])
    unrestricted = link_definitions(entities, vectors, concepts, index, CFG)
    assert {(x.source, x.target) for x in unrestricted} == {
        ("e-a", "C:1"), ("e-b", "C:1"), ("e-c", "C:1")}
    candidates = {"e-a": ["C:1", "C:2"], "e-b": ["C:2"], "e-c": []}
    links = link_definitions(entities, vectors, concepts, index, CFG, candidates)
    assert {(x.source, x.target) for x in links} == {("e-a", "C:1"), ("e-b", "C:2")}


def test_lexical_candidates_of_entities_without_a_concept() -> None:
    vocabulary = ConceptIndex([
        Concept(id="C:1", name="hypertension", synonyms=["HTN", "high blood pressure"],
                source="s"),
        Concept(id="C:2", name="hypotension", source="s"),
        Concept(id="C:3", name="metformin", source="s")])
    entities = [Entity(id="e-1", layer=Layer.USER, name="HTN", type="DISO"),
                Entity(id="e-2", layer=Layer.USER, name="hypertensive", type="DISO"),
                Entity(id="e-3", layer=Layer.USER, name="metformin", type="CHEM",
                       concept_ids=["C:3"])]
    found = lexical_candidates(entities, vocabulary, 2)
    assert set(found) == {"e-1", "e-2"}  # a normalised entity needs none
    assert found["e-1"][0] == "C:1"  # the abbreviation first
    assert found["e-2"][0] == "C:1" and len(found["e-2"]) <= 2


def test_compatible_types() -> None:
    assert compatible("DISO", "DISO") and compatible("CONC", "CHEM") and compatible(None, "X")
    assert not compatible("DISO", "CHEM")
