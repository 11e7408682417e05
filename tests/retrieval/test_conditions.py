"""The conditions an answer holds under: qualifiers, harms of a therapy it names,
conflicting evidence; each cited, none invented."""

from __future__ import annotations

from medkg.model import Evidence, Layer, Predicate, Qualifiers, Triple
from medkg.retrieval.conditions import conditions


def _t(head: str, predicate: Predicate, tail: str, n: int, **q: object) -> Triple:
    qualifiers = Qualifiers.model_validate(q)
    return Triple(id=Triple.key_for(Layer.LITERATURE, head, predicate, tail, qualifiers),
                  layer=Layer.LITERATURE, head=head, predicate=predicate, tail=tail,
                  qualifiers=qualifiers, confidence=0.8,
                  evidence=[Evidence(chunk_id=f"c{n}", document_id="d", start=n, end=n + 1,
                                     quote="q")])


def _cite(t: Triple) -> list[int]:
    return [ev.start for ev in t.evidence]


TREATS = _t("metformin", Predicate.TREATS, "diabetes", 1)
CONTRA = _t("metformin", Predicate.CONTRAINDICATED_IN, "severe CKD", 2)
HARM = _t("metformin", Predicate.HAS_ADVERSE_EFFECT, "lactic acidosis", 3)
OTHER_HARM = _t("warfarin", Predicate.HAS_ADVERSE_EFFECT, "bleeding", 4)


def test_a_therapy_brings_its_contraindications_and_harms() -> None:
    out = conditions([TREATS], [TREATS, CONTRA, HARM, OTHER_HARM], [], str, _cite, 10)
    kinds = [(c.kind, c.citations) for c in out]
    assert kinds == [("contraindication", [2]), ("adverse effect", [3])]
    assert out[0].text == "avoid metformin in severe CKD"
    assert out[0].triple_ids == [CONTRA.id]


def test_a_drug_asked_about_is_a_therapy_without_a_treats_fact() -> None:
    out = conditions([], [OTHER_HARM], ["warfarin"], str, _cite, 10)
    assert [c.kind for c in out] == ["adverse effect"] and "bleeding" in out[0].text


def test_harms_are_the_answer_not_a_condition_when_the_question_asks_for_them() -> None:
    asked = [Predicate.HAS_ADVERSE_EFFECT, Predicate.CONTRAINDICATED_IN]
    out = conditions([TREATS], [TREATS, CONTRA, HARM], [], str, _cite, 10, asked)
    assert [c.kind for c in out] == ["contraindication"]


def test_qualifiers_of_the_facts_used_are_conditions() -> None:
    negated = _t("aspirin", Predicate.PREVENTS, "stroke", 5, negated=True)
    children = _t("ibuprofen", Predicate.TREATS, "fever", 6, population="children")
    maybe = _t("drug x", Predicate.CAUSES, "rash", 7, uncertain=True, hypothetical=True)
    out = {c.kind: c for c in conditions([negated, children, maybe], [], [], str, _cite, 10)}
    assert out["negated"].text.startswith("aspirin prevents stroke: the source states")
    assert out["population"].text == "ibuprofen treats fever: holds for children"
    assert out["population"].citations == [6]
    assert {"uncertain", "hypothetical"} <= set(out)


def test_conflicting_evidence_is_shown_both_sides_cited() -> None:
    against = _t("metformin", Predicate.TREATS, "diabetes", 8, negated=True)
    out = conditions([TREATS], [TREATS, against], [], str, _cite, 10)
    conflict = [c for c in out if c.kind == "conflicting evidence"]
    assert len(conflict) == 1 and conflict[0].citations == [1, 8]
    assert "metformin treats diabetes, but not: metformin treats diabetes" in conflict[0].text
    helps_and_harms = _t("metformin", Predicate.CAUSES, "diabetes", 9)
    out = conditions([], [TREATS, helps_and_harms], [], str, _cite, 10)
    assert [c.kind for c in out] == ["conflicting evidence"]


def test_no_citation_no_condition_and_the_limit_holds() -> None:
    bare = TREATS.model_copy(update={"evidence": []})
    assert conditions([bare], [bare, CONTRA.model_copy(update={"evidence": []})], [], str,
                      _cite, 10) == []
    assert len(conditions([TREATS], [TREATS, CONTRA, HARM], [], str, _cite, 1)) == 1
