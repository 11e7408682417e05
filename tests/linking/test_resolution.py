"""Entity resolution: near-miss guards, abbreviations, embeddings + names."""

from __future__ import annotations

import pytest

from medkg.linking.resolution import near_miss, resolve
from medkg.linking.vectors import VectorIndex
from medkg.model import Entity, Layer, LinkKind

# Pairs that look alike but name different things: none may merge.
NEAR_MISSES = [
    ("hypertension", "hypotension"), ("hyperkalemia", "hypokalemia"),
    ("hyperglycemia", "hypoglycemia"), ("hyperthyroidism", "hypothyroidism"),
    ("hypernatremia", "hyponatremia"), ("hypercalcemia", "hypocalcemia"),
    ("hyperlipidemia", "hypolipidemia"), ("tachycardia", "bradycardia"),
    ("type 1 diabetes", "type 2 diabetes"), ("stage II breast cancer", "stage III breast cancer"),
    ("left ventricular failure", "right ventricular failure"),
    ("acute kidney injury", "chronic kidney injury"), ("benign tumor", "malignant tumor"),
    ("microcytic anemia", "macrocytic anemia"),
    ("small cell lung cancer", "non-small cell lung cancer"),
    ("upper GI bleeding", "lower GI bleeding"),
    ("systolic heart failure", "diastolic heart failure"),
    ("primary hyperparathyroidism", "secondary hyperparathyroidism"),
    ("polyuria", "oliguria"), ("typical angina", "atypical angina"),
    ("hepatitis B", "hepatitis C"), ("COX-1", "COX-2"), ("IL-6", "IL-8"),
    ("preeclampsia", "postpartum preeclampsia"),
]
SAME = [("myocardial infarction", "myocardial infarctions"), ("T2DM", "T2DM"),
        ("heart failure", "congestive heart failure"), ("metformin", "metformin hydrochloride")]


@pytest.mark.parametrize(("a", "b"), NEAR_MISSES)
def test_near_misses_are_caught(a: str, b: str) -> None:
    assert near_miss(a, b) is not None


@pytest.mark.parametrize(("a", "b"), SAME)
def test_close_names_pass_the_guards(a: str, b: str) -> None:
    assert near_miss(a, b) is None


def _entity(name: str, type_: str = "DISO", concept: str | None = None) -> Entity:
    return Entity(id=Entity.key_for(Layer.USER, name, type_, concept), layer=Layer.USER,
                  name=name, type=type_, context=f"The patient has {name}.",
                  concept_ids=[concept] if concept else [])


def test_resolution_merges_variants_not_near_misses(embedder: object) -> None:
    names = ["hypertension", "hypotension", "Hypertension, essential", "essential hypertension",
             "type 1 diabetes", "type 2 diabetes", "T2DM", "congestive heart failure",
             "congestive heart failures"]
    entities = [_entity(n) for n in names]
    entities.append(_entity("metformin", "CHEM", "MESH:D008687"))
    entities.append(_entity("glucophage", "CHEM", "MESH:D999"))  # another concept: never merged
    vectors = embedder.embed([e.content() for e in entities])  # type: ignore[attr-defined]
    index = VectorIndex(vectors.shape[1])
    index.upsert([e.id for e in entities], vectors)
    links = resolve(entities, vectors, index, abbreviations={"T2DM": "type 2 diabetes"})
    by_name = {e.id: e.name for e in entities}
    pairs = {frozenset((by_name[x.source], by_name[x.target])) for x in links}
    assert all(x.kind is LinkKind.SAME_AS for x in links)
    assert frozenset(("T2DM", "type 2 diabetes")) in pairs
    assert frozenset(("congestive heart failure", "congestive heart failures")) in pairs
    merged = {n for p in pairs for n in p}
    assert not {"hypotension", "type 1 diabetes", "glucophage"} & merged
    refused = [(x.source, x.target) for x in links]
    assert resolve(entities, vectors, index, {"T2DM": "type 2 diabetes"}, refused) == []
