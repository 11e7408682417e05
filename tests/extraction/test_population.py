from __future__ import annotations

import pytest

from medkg.extraction.population import population_of


@pytest.mark.parametrize(("text", "population"), [
    ("Metformin is contraindicated in patients with severe CKD.", "patients with severe CKD"),
    ("Aspirin can cause Reye syndrome in children.", "children"),
    ("Falls rose among elderly women on sedatives.", "elderly women on sedatives"),
    ("Studied in 40 patients with hypertension who received it.", "patients with hypertension"),
    ("Doses for adults aged over 65 years and children.", "adults aged over 65 years"),
    ("It was studied in patients.", None),
    ("Lisinopril causes angioedema.", None),
])
def test_population_of(text: str, population: str | None) -> None:
    assert population_of(text) == population
