from pathlib import Path

from medkg.model import Concept
from medkg.ontology.index import ConceptIndex

CONCEPTS = [
    Concept(id="X:1", name="heart failure", synonyms=["CHF", "cardiac failure"],
            semantic_group="DISO", source="t"),
    Concept(id="X:2", name="hypertension", synonyms=["high blood pressure"], source="t"),
    Concept(id="X:3", name="hypotension", source="t"),
    Concept(id="X:4", name="community-acquired pneumonia", synonyms=["CAP"], source="t"),
]


def test_exact_then_approximate_candidates() -> None:
    index = ConceptIndex(CONCEPTS)
    [best, *_] = index.search("Cardiac  failure")
    assert (best.concept.id, best.method, best.score) == ("X:1", "exact", 1.0)
    cands = index.search("hypertensoin", k=2)  # a typo
    assert cands[0].concept.id == "X:2" and cands[0].method == "approximate"
    assert 0 < cands[0].score < 1
    assert cands[0].score > cands[1].score


def test_abbreviations_match_by_case() -> None:
    index = ConceptIndex(CONCEPTS)
    assert [c.id for c in index.lookup("CHF")] == ["X:1"]
    assert index.lookup("cap") == []
    assert index.search("CAP", k=1)[0].method == "abbreviation"


def test_saved_index_loads_and_agrees(tmp_path: Path) -> None:
    index = ConceptIndex(CONCEPTS)
    expected = [(c.concept.id, round(c.score, 5)) for c in index.search("pnemonia", k=3)]
    index.save(tmp_path / "idx")
    again = ConceptIndex(CONCEPTS)
    assert again.load_approximate(tmp_path / "idx")
    assert [(c.concept.id, round(c.score, 5)) for c in again.search("pnemonia", k=3)] == expected


def test_stale_saved_index_is_not_used(tmp_path: Path) -> None:
    ConceptIndex(CONCEPTS).save(tmp_path / "idx")
    assert not ConceptIndex(CONCEPTS[:2]).load_approximate(tmp_path / "idx")


def test_find_in_running_text() -> None:
    index = ConceptIndex(CONCEPTS)
    text = "Known CHF and high blood pressures; no cap needed. Hypotension."
    found = [(text[m.start:m.end], m.concept.id) for m in index.find_in(text)]
    assert found == [("CHF", "X:1"), ("high blood pressures", "X:2"), ("Hypotension", "X:3")]
    assert index.find_in("hypotension", stop_words=frozenset({"hypotension"})) == []


def test_find_in_skips_groups_but_keeps_what_shares_their_terms() -> None:
    gene = Concept(id="NCBIGene:3630", name="INS", synonyms=["insulin"], semantic_group="GENE",
                   source="t")
    hormone = Concept(id="MESH:D007328", name="Insulin", semantic_group="CHEM", source="t")
    index = ConceptIndex([gene, hormone])
    text = "Insulin was given."
    assert {m.concept.id for m in index.find_in(text)} <= {"NCBIGene:3630", "MESH:D007328"}
    [match] = index.find_in(text, skip_groups=frozenset({"GENE"}))
    assert match.concept.id == "MESH:D007328"
    assert index.find_in("INS", skip_groups=frozenset({"GENE"})) == []
