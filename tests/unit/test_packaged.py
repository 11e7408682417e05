"""The default vocabulary that installed packages ship."""

import pytest

from medkg.model import Concept
from medkg.ontology.packaged import attach_by_name, default_vocabulary, drugs, merge


def test_drugs_join_the_mesh_descriptor_of_the_same_name() -> None:
    mesh = [Concept(id="MESH:D008687", name="Metformin", source="mesh")]
    drug = [Concept(id="DRUGBANK:DB00331", name="metformin", synonyms=["glucophage"],
                    semantic_group="CHEM", source="drugs"),
            Concept(id="DRUGBANK:DB1", name="Unlisted", source="drugs")]
    [metformin, unlisted] = merge([*mesh, *attach_by_name(mesh, drug)])
    assert metformin.id == "MESH:D008687"
    assert metformin.synonyms == ["glucophage"] and metformin.xrefs == ["DRUGBANK:DB00331"]
    assert metformin.semantic_group == "CHEM" and metformin.source == "mesh + drugs"
    assert unlisted.id == "DRUGBANK:DB1"


def test_drug_synonyms_carry_no_wiki_markup() -> None:
    assert not [s for c in drugs() for s in c.synonyms if "&" in s or "{" in s]


@pytest.mark.slow
def test_default_vocabulary_covers_phenotypes_drugs_and_mesh() -> None:
    concepts = {c.id: c for c in default_vocabulary()}
    assert len(concepts) > 50_000
    assert concepts["HP:0001250"].definition  # HPO with definitions
    assert "glucophage" in concepts["MESH:D008687"].synonyms  # a drug joined its descriptor
    assert concepts["MESH:D008687"].semantic_group == "CHEM"
