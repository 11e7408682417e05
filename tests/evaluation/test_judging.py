"""The rule that says whether an asserted relation is right by a corpus's gold."""

from medkg.evaluation.judging import (
    confusion,
    expected_calibration_error,
    gold_types,
    is_right,
    judgeable,
)
from medkg.model import Predicate

BC5CDR = frozenset({"CID"})
BIORED = frozenset({"Association", "Positive_Correlation", "Negative_Correlation", "Bind"})


def test_a_predicate_is_judged_only_where_the_file_can_say_it_is_wrong() -> None:
    chem_dis = ("CHEM", "DISO")
    assert judgeable(Predicate.HAS_ADVERSE_EFFECT, chem_dis, BC5CDR)
    assert not judgeable(Predicate.TREATS, chem_dis, BC5CDR)  # BC5CDR has no treatments
    assert judgeable(Predicate.TREATS, chem_dis, BIORED)
    assert not judgeable(Predicate.ASSOCIATED_WITH, chem_dis, BC5CDR)
    assert judgeable(Predicate.ASSOCIATED_WITH, ("GENE", "DISO"), BIORED)
    assert not judgeable(Predicate.CAUSES, ("DISO", "DISO"), BIORED)  # never a gold pair
    assert not judgeable(Predicate.HAS_SYMPTOM, ("DISO", "DISO"), BIORED)
    assert not judgeable(Predicate.TREATS, ("PROC", "DISO"), BIORED)


def test_the_predicate_must_say_what_the_gold_says() -> None:
    assert is_right(Predicate.TREATS, {"Negative_Correlation"})
    assert not is_right(Predicate.TREATS, {"Positive_Correlation"})
    assert is_right(Predicate.HAS_ADVERSE_EFFECT, {"CID"})
    assert is_right(Predicate.CAUSES, {"Positive_Correlation"})
    assert not is_right(Predicate.HAS_ADVERSE_EFFECT, {"Negative_Correlation"})
    assert is_right(Predicate.ASSOCIATED_WITH, {"Bind"})
    assert not is_right(Predicate.ASSOCIATED_WITH, set())  # not a gold pair at all


def test_treats_where_the_gold_says_causes_is_a_confusion() -> None:
    assert confusion(Predicate.TREATS, {"Positive_Correlation"})
    assert not confusion(Predicate.TREATS, {"Positive_Correlation", "Negative_Correlation"})
    assert confusion(Predicate.HAS_ADVERSE_EFFECT, {"Negative_Correlation"})
    assert not confusion(Predicate.HAS_ADVERSE_EFFECT, {"CID"})
    assert not confusion(Predicate.ASSOCIATED_WITH, {"Positive_Correlation"})


def test_gold_pairs_collect_their_types_in_either_order() -> None:
    pairs = gold_types([("Positive_Correlation", "a", "b"), ("Association", "b", "a")])
    assert pairs == {frozenset(("a", "b")): {"Positive_Correlation", "Association"}}


def test_expected_calibration_error() -> None:
    assert expected_calibration_error([]) == 0.0
    # 0.85 said, 0.8 right: off by 0.05 in one bin
    said = [(0.85, True)] * 8 + [(0.85, False)] * 2
    assert expected_calibration_error(said) == 0.05
    # two bins, each exact
    exact = [(0.25, True), (0.25, False), (0.25, False), (0.25, False), (1.0, True)]
    assert expected_calibration_error(exact) == 0.0
