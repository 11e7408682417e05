"""Sequence variants by rule (tmVar's notations) and their place in the pipeline."""

from __future__ import annotations

import pytest

from medkg.extraction.variants import VARIANT_GROUP, find_variants, variant_concept


@pytest.mark.parametrize("mention", [
    "c.1799T>A", "c.5266dupC", "g.3318-6T>A", "c.640_667del", "p.Val600Glu", "p.V600E",
    "p.Tyr65X", "p.Asp46_Gln48delinsGlu", "rs74805019", "V600E", "D90A", "Pro75Ala",
    "Pro75 Ala", "5382insC", "4153delA", "-930A>G", "IVS4+1G>A", "Y329fs", "1494del6",
])
def test_each_notation_is_one_whole_mention(mention: str) -> None:
    text = f"The {mention} variant was found."
    start = text.index(mention)
    assert find_variants(text) == [(start, start + len(mention))]


@pytest.mark.parametrize("text", [
    "Type 2 diabetes (T2D) and HbA1c.", "CYP3A4 and S100B levels.", "IL-6 and TNF-alpha.",
    "A dose of 25 mg was given on day 3.", "H2O and CO2.",
])
def test_names_and_numbers_are_not_variants(text: str) -> None:
    assert find_variants(text) == []


def test_rsids_normalise_to_dbsnp() -> None:
    assert variant_concept("rs121913529") == "dbSNP:rs121913529"
    assert variant_concept("V600E") == ""


def test_the_pipeline_labels_variants_and_keeps_their_concept(nlp: object) -> None:
    text = "The BRAF V600E mutation (rs113488022) was found in melanoma."
    doc = nlp(text)  # type: ignore[operator]
    variants = [(e.text, e.kb_id_) for e in doc.ents if e.label_ == VARIANT_GROUP]
    assert variants == [("V600E", ""), ("rs113488022", "dbSNP:rs113488022")]
