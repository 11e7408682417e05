"""A verdict for "can I give X with Y?" only where a statement or sentence says one."""

from __future__ import annotations

from medkg.model import Layer, Predicate, Qualifiers, ReviewState, Triple
from medkg.retrieval.verdict import Named, Passage, asks_for_verdict, decide

METFORMIN = Named("e-met", "metformin", ("metformin", "Metformin"), "CHEM")
CKD = Named("e-ckd", "chronic kidney disease", ("chronic kidney disease", "CKD"), "DISO")
CKD_PASSAGE = ("Metformin in chronic kidney disease. Metformin is contraindicated in patients "
               "with an eGFR below 30. Between 30 and 45 the dose should be reduced.")


def _passages(*texts: str, passage: str = CKD_PASSAGE) -> list[Passage]:
    cited: list[str] = []

    def cite(text: str):  # type: ignore[no-untyped-def]
        def n() -> int:
            cited.append(text)
            return len(cited)
        return n

    return [Passage(t, passage, cite(t)) for t in texts]


def _triple(confidence: float, negated: bool = False,
            review: ReviewState = ReviewState.PROPOSED) -> Triple:
    return Triple(id=f"tri-{confidence}-{negated}", layer=Layer.LITERATURE, head="e-met",
                  predicate=Predicate.CONTRAINDICATED_IN, tail="e-ckd", confidence=confidence,
                  qualifiers=Qualifiers(negated=negated), review=review)


def _is_fact(t: Triple) -> bool:
    return t.review is ReviewState.ACCEPTED or t.confidence >= 0.8


def test_which_questions_ask_for_a_verdict() -> None:
    assert asks_for_verdict("Can I give metformin in CKD stage 4?")
    assert asks_for_verdict("Is it safe to use ibuprofen in asthma?")
    assert asks_for_verdict("Should we start apixaban in this patient?")
    assert not asks_for_verdict("What are the side effects of metformin?")


def test_a_statement_of_contraindication_decides_and_is_cited() -> None:
    v = decide([METFORMIN], [CKD], [_triple(0.9)], _is_fact, lambda t: [3], [])
    assert v is not None and v.kind == "contraindicated" and v.citations == [3]
    assert not v.unreviewed
    low = decide([METFORMIN], [CKD], [_triple(0.5)], _is_fact, lambda t: [3], [])
    assert low is not None and low.kind == "contraindicated" and low.unreviewed
    negated = decide([METFORMIN], [CKD], [_triple(0.9, negated=True)], _is_fact,
                     lambda t: [3], [])
    assert negated is not None and negated.kind == "no evidence found"


def test_a_sentence_in_a_passage_about_the_condition_decides() -> None:
    said = "Metformin is contraindicated in patients with an eGFR below 30."
    v = decide([METFORMIN], [CKD], [], _is_fact, lambda t: [],
               _passages("Metformin is the first-line treatment.", said))
    assert v is not None and v.kind == "contraindicated" and said in v.text
    assert v.citations == [1]  # only the sentence used is cited
    caution = decide([METFORMIN], [CKD], [], _is_fact, lambda t: [],
                     _passages("For metformin the dose should be reduced between 30 and 45."))
    assert caution is not None and caution.kind == "caution"


def test_no_evidence_is_said_as_such() -> None:
    elsewhere = _passages("Metformin is contraindicated in severe liver failure.",
                          passage="Metformin and the liver.")
    v = decide([METFORMIN], [CKD], [], _is_fact, lambda t: [], elsewhere)
    assert v is not None and v.kind == "no evidence found" and v.citations == []
    assert "No statement or sentence in this workspace" in v.text
    assert decide([], [CKD], [], _is_fact, lambda t: [], elsewhere) is None


def test_a_sentence_saying_the_drug_harms_in_the_condition_is_a_caution() -> None:
    ibuprofen = Named("e-ibu", "ibuprofen", ("ibuprofen",), "CHEM")
    asthma = Named("e-ast", "asthma", ("asthma",), "DISO")
    said = "In some adults with asthma, NSAIDs such as ibuprofen cause bronchospasm."
    v = decide([ibuprofen], [asthma], [], _is_fact, lambda t: [],
               _passages(said, passage=said))
    assert v is not None and v.kind == "caution" and said in v.text
    # harm said of the drug in a passage where the condition is only nearby: no verdict
    apart = _passages("Ibuprofen can cause bleeding.", passage="Asthma. Ibuprofen can "
                      "cause bleeding.")
    assert decide([ibuprofen], [asthma], [], _is_fact, lambda t: [], apart).kind == \
        "no evidence found"  # type: ignore[union-attr]
