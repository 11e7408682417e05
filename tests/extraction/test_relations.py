import pytest

from medkg.extraction.relations import match_pairs
from medkg.model import Predicate


def run(sentence: str, *mentions: tuple[str, str]) -> list[tuple[str, Predicate, str]]:
    """Mentions as (surface text, group), found left to right in the sentence."""
    spans, cursor = [], 0
    for text, group in mentions:
        start = sentence.index(text, cursor)
        spans.append((start, start + len(text), group))
        cursor = start + len(text)
    names = [m[0] for m in mentions]
    return [(names[m.head_index], m.predicate, names[m.tail_index])
            for m in match_pairs(sentence, spans)]


@pytest.mark.parametrize(("sentence", "mentions", "expected"), [
    ("Metformin is the first-line treatment for type 2 diabetes.",
     [("Metformin", "CHEM"), ("type 2 diabetes", "DISO")],
     [("Metformin", Predicate.TREATS, "type 2 diabetes")]),
    ("Hypertension treated with lisinopril since March.",
     [("Hypertension", "DISO"), ("lisinopril", "CHEM")],
     [("lisinopril", Predicate.TREATS, "Hypertension")]),
    ("Lisinopril can cause a dry cough.",
     [("Lisinopril", "CHEM"), ("dry cough", "DISO")],
     [("Lisinopril", Predicate.HAS_ADVERSE_EFFECT, "dry cough")]),
    ("Angioedema is a rare but serious side effect of lisinopril.",
     [("Angioedema", "DISO"), ("lisinopril", "CHEM")],
     [("lisinopril", Predicate.HAS_ADVERSE_EFFECT, "Angioedema")]),
    ("The dry cough is likely caused by lisinopril.",
     [("dry cough", "DISO"), ("lisinopril", "CHEM")],
     [("lisinopril", Predicate.HAS_ADVERSE_EFFECT, "dry cough")]),
    ("Metformin is contraindicated in patients with chronic kidney disease.",
     [("Metformin", "CHEM"), ("chronic kidney disease", "DISO")],
     [("Metformin", Predicate.CONTRAINDICATED_IN, "chronic kidney disease")]),
    ("Asthma is diagnosed by spirometry.",
     [("Asthma", "DISO"), ("spirometry", "PROC")],
     [("spirometry", Predicate.DIAGNOSES, "Asthma")]),
    ("Apixaban prevents stroke.",
     [("Apixaban", "CHEM"), ("stroke", "DISO")],
     [("Apixaban", Predicate.PREVENTS, "stroke")]),
    ("Pneumonia presents with fever, cough and shortness of breath.",
     [("Pneumonia", "DISO"), ("fever", "DISO"), ("cough", "DISO"),
      ("shortness of breath", "DISO")],
     [("Pneumonia", Predicate.HAS_SYMPTOM, "fever"),
      ("Pneumonia", Predicate.HAS_SYMPTOM, "cough"),
      ("Pneumonia", Predicate.HAS_SYMPTOM, "shortness of breath")]),
    ("Warfarin interacts with aspirin.",
     [("Warfarin", "CHEM"), ("aspirin", "CHEM")],
     [("Warfarin", Predicate.INTERACTS_WITH, "aspirin")]),
])
def test_patterns(sentence: str, mentions: list, expected: list) -> None:
    assert run(sentence, *mentions) == expected


def test_type_constraints_block_nonsense() -> None:
    # "treats" needs a treatment as head: a disease does not treat a drug.
    assert run("Asthma treats albuterol.", ("Asthma", "DISO"), ("albuterol", "CHEM")) == []


def test_unrelated_neighbours_give_nothing() -> None:
    assert run("Fever and metformin were noted.", ("Fever", "DISO"), ("metformin", "CHEM")) == []


def test_long_gaps_are_not_bridged() -> None:
    filler = "which many people take every day for years, " * 3
    sentence = f"Metformin, {filler}treats diabetes."
    assert run(sentence, ("Metformin", "CHEM"), ("diabetes", "DISO")) == []


def test_is_a_needs_one_known_group() -> None:
    assert run("Hypertension is a risk.", ("Hypertension", "DISO"), ("risk", "CONC")) == []
    assert run("Asthma is a lung disease.", ("Asthma", "DISO"), ("lung disease", "DISO")) == [
        ("Asthma", Predicate.IS_A, "lung disease")]


@pytest.mark.parametrize(("sentence", "head", "tail"), [
    ("Warfarin is a vitamin K antagonist.", "Warfarin", "vitamin K"),
    ("Apixaban is a factor Xa inhibitor.", "Apixaban", "factor Xa"),
    ("Lisinopril is an ACE-inhibitor.", "Lisinopril", "ACE"),
    ("Tamoxifen is an estrogen receptor modulator.", "Tamoxifen", "estrogen"),
])
def test_is_a_needs_the_tail_to_end_its_noun_phrase(sentence: str, head: str, tail: str
                                                    ) -> None:
    """'X is a Y antagonist' does not say X is a Y: Y modifies the noun after it."""
    assert run(sentence, (head, "CHEM"), (tail, "CHEM")) == []


def test_is_a_still_holds_for_a_whole_noun_phrase() -> None:
    assert run("Atorvastatin is a statin.", ("Atorvastatin", "CHEM"), ("statin", "CHEM")) == [
        ("Atorvastatin", Predicate.IS_A, "statin")]


def test_pattern_confidence_is_measured_where_the_training_splits_judge_it() -> None:
    import json

    from medkg.extraction.relations import CALIBRATION, PATTERNS, confidence_of

    measured = json.loads(CALIBRATION.read_text())["patterns"]
    by_name = {p.name: p for p in PATTERNS}
    assert set(measured) == set(by_name)
    for name, entry in measured.items():
        if "confidence" in entry:  # judged often enough: its smoothed precision
            assert entry["judged"] >= 10
            assert confidence_of(by_name[name]) == entry["confidence"]
            assert entry["confidence"] == round((entry["right"] + 1) / (entry["judged"] + 2), 3)
        else:  # never judged by a gold standard: the prior, said as such
            assert confidence_of(by_name[name]) == by_name[name].confidence
    assert "confidence" in measured["adverse"]
