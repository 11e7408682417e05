"""Rule E001: an adverse-effect claim whose evidence states an indication, a
prevention or a contraindication is restated with the predicate the evidence states."""

from __future__ import annotations

import pytest

from medkg.model import Predicate
from medkg.rulehub.evidence import (
    condition_of_population,
    induced_by_another,
    negated,
    negated_in,
    restated,
    stated_instead,
    states,
)
from medkg.rulehub.verify import Verifier
from tests.rulehub.test_rulehub import E, tri


@pytest.mark.parametrize(("quote", "stated"), [
    ("Furosemide is used to manage oliguria in acute renal failure.", Predicate.TREATS),
    ("Metformin is indicated for type 2 diabetes.", Predicate.TREATS),
    ("Thiazides are contraindicated in hypokalemia.", Predicate.CONTRAINDICATED_IN),
    ("Aspirin should not be given to patients with peptic ulcer.",
     Predicate.CONTRAINDICATED_IN),
    ("Low-dose aspirin for the prevention of stroke.", Predicate.PREVENTS),
    ("Start amlodipine 5 mg daily for hypertension.", Predicate.TREATS),
    ("Aspirin 81 mg was prescribed for angina.", Predicate.TREATS),
    ("Amlodipine 5 mg daily for two weeks caused ankle edema.", None),
    ("Lisinopril-induced angioedema was reported.", None),
    ("Lithium, used to treat bipolar disorder, caused nephrogenic diabetes insipidus.", None),
    ("Amiodarone and thyroid disease in 40 patients.", None),
])
def test_what_a_quote_states(quote: str, stated: Predicate | None) -> None:
    assert states(quote) is stated


def test_only_causal_claims_are_checked_and_every_quote_must_agree() -> None:
    manage = "Furosemide is used to manage oliguria."
    harm = "Oliguria developed after furosemide."
    assert stated_instead(Predicate.HAS_ADVERSE_EFFECT, [manage]) is Predicate.TREATS
    assert stated_instead(Predicate.CAUSES, [manage, manage]) is Predicate.TREATS
    assert stated_instead(Predicate.HAS_ADVERSE_EFFECT, [manage, harm]) is None
    assert stated_instead(Predicate.TREATS, [harm]) is None


def test_the_verifier_reports_e001_with_the_stated_predicate() -> None:
    wrong = tri("metformin", Predicate.HAS_ADVERSE_EFFECT, "type 2 diabetes",
                "metformin is indicated for type 2 diabetes.")
    right = tri("metformin", Predicate.HAS_ADVERSE_EFFECT, "lactic acidosis",
                "metformin-induced lactic acidosis.")
    found = Verifier(min_triples=0).check([wrong, right], E)
    e001 = [v for v in found if v.rule == "E001"]
    assert [(v.triple_id, v.detail, v.hard) for v in e001] == [(wrong.id, "treats", True)]


def test_a_restated_triple_keeps_evidence_and_qualifiers_and_gets_a_new_id() -> None:
    t = tri("metformin", Predicate.HAS_ADVERSE_EFFECT, "type 2 diabetes",
            "metformin is indicated for type 2 diabetes.", population="adults")
    fixed = restated(t, Predicate.TREATS)
    assert fixed.predicate is Predicate.TREATS and fixed.id != t.id
    assert fixed.evidence == t.evidence and fixed.qualifiers == t.qualifiers
    assert fixed.method.endswith("+restated") and t.predicate is Predicate.HAS_ADVERSE_EFFECT
    assert not any(v.hard for v in Verifier(min_triples=0).check([fixed], E))


@pytest.mark.parametrize(("quote", "head", "inducer"), [
    ("Calcitonin potentiated haloperidol-induced catalepsy.", "calcitonin", "haloperidol"),
    ("Retinyl acetate (RA) on butylated hydroxyanisole (BHA)-induced rat forestomach "
     "catalepsy was examined.", "retinyl acetate", "BHA"),
    ("Ketanserin attenuated opiate-induced catalepsy.", "ketanserin", "opiate"),
    ("Haloperidol-induced catalepsy in rats.", "haloperidol", None),
    ("Catalepsy was not secondary to HAL-induced catalepsy.", "HAL", None),
    ("Haloperidol caused catalepsy.", "haloperidol", None),
])
def test_another_chemical_named_as_the_inducer(quote: str, head: str,
                                               inducer: str | None) -> None:
    assert induced_by_another([quote], {head}, {"catalepsy"}) == inducer


def test_e002_moves_the_claim_to_the_inducer_the_graph_has() -> None:
    from medkg.growth.generator import BuiltinGenerator
    from medkg.model import Entity, Layer
    from medkg.rulehub.rules import load_rules

    entities = {**E, "ent-haloperidol": Entity(id="ent-haloperidol", layer=Layer.LITERATURE,
                                               name="haloperidol", type="CHEM")}
    wrong = tri("metformin", Predicate.HAS_ADVERSE_EFFECT, "lactic acidosis",
                "metformin did not change haloperidol-induced lactic acidosis.")
    found = Verifier(min_triples=0).check([wrong], entities)
    assert [(v.rule, v.detail, v.error) for v in found] == [
        ("E002", "haloperidol", "head_entity_error")]
    generator = BuiltinGenerator(None, entities, load_rules())  # type: ignore[arg-type]
    [(source, fixed)] = generator.correct(None, {wrong.id: found},  # type: ignore[arg-type]
                                          {wrong.id: wrong})
    assert source == wrong.id and fixed.head == "ent-haloperidol"
    assert fixed.tail == wrong.tail and fixed.method.endswith("+reheaded")


@pytest.mark.parametrize(("quote", "expected"), [
    ("A 24-year-old male with a history of schizophrenia developed NMS after ziprasidone.",
     True),
    ("24 patients with either MDS or schizophrenia (n = 7) undergoing ziprasidone therapy.",
     True),
    ("Patients with schizophrenia developed NMS on ziprasidone.", True),
    ("In patients with ziprasidone-induced schizophrenia symptoms.", False),
    ("Patients with NMS developed schizophrenia on ziprasidone.", False),
    ("Ziprasidone caused schizophrenia in patients with NMS.", False),
])
def test_condition_of_the_population(quote: str, expected: bool) -> None:
    assert condition_of_population([quote], {"ziprasidone"}, {"schizophrenia"}) is expected


@pytest.mark.parametrize(("quote", "expected"), [
    ("Remifentanil reduced myoclonus without side effects such as sedation, apnea, or "
     "pruritus.", True),
    ("There was no apnea.", True),
    ("No apnea was seen, but apnea occurred later.", False),
    ("Remifentanil caused apnea.", False),
])
def test_condition_named_only_under_a_negation(quote: str, expected: bool) -> None:
    assert negated_in([quote], {"apnea"}) is expected


def test_e004_restates_as_negated_and_e003_as_an_association() -> None:
    affirmed = tri("metformin", Predicate.HAS_ADVERSE_EFFECT, "nausea",
                   "metformin was well tolerated without nausea.")
    population = tri("metformin", Predicate.HAS_ADVERSE_EFFECT, "type 2 diabetes",
                     "Patients with type 2 diabetes developed nausea on metformin.")
    found = Verifier(min_triples=0).check([affirmed, population], E)
    assert sorted((v.rule, v.triple_id == affirmed.id) for v in found) == [
        ("E003", False), ("E004", True)]
    fixed = negated(affirmed)
    assert fixed.qualifiers.negated and fixed.id != affirmed.id
    assert not Verifier(min_triples=0).check([fixed], E)


@pytest.mark.parametrize("quote", [
    "A case of combined levomepromazine-fluvoxamine treatment-induced catalepsy.",
    "Memory impairment caused by fluvoxamine-induced catalepsy in mice.",
])
def test_generic_or_passive_inducers_are_not_another_chemical(quote: str) -> None:
    assert induced_by_another([quote], {"fluvoxamine"}, {"catalepsy"}) is None
