"""The default vocabulary that installed packages ship."""

import pytest

from medkg.model import Concept
from medkg.ontology.merge import merge_equivalents
from medkg.ontology.packaged import default_vocabulary, drugs


def test_drugs_join_the_mesh_descriptor_of_the_same_name() -> None:
    concepts = [
        Concept(id="MESH:D008687", name="Metformin", source="mesh"),
        Concept(id="DRUGBANK:DB00331", name="metformin", synonyms=["glucophage"],
                semantic_group="CHEM", source="drugs"),
        Concept(id="DRUGBANK:DB1", name="Unlisted", source="drugs"),
    ]
    [metformin, unlisted] = sorted(merge_equivalents(concepts), key=lambda c: c.id)[::-1]
    assert metformin.id == "MESH:D008687"
    assert metformin.synonyms == ["glucophage"] and metformin.xrefs == ["DRUGBANK:DB00331"]
    assert metformin.semantic_group == "CHEM" and metformin.source == "mesh + drugs"
    assert unlisted.id == "DRUGBANK:DB1"


def test_xrefs_and_names_merge_but_groups_must_agree() -> None:
    concepts = [
        Concept(id="MESH:D006333", name="Heart Failure", semantic_group="DISO", source="m"),
        Concept(id="DOID:6000", name="congestive heart failure", xrefs=["MESH:D006333"],
                definition="A heart disease.", source="d"),
        Concept(id="HP:0001635", name="Congestive heart failure", parents=["HP:1"],
                semantic_group="DISO", source="h"),
        Concept(id="HP:1", name="Abnormal heart", semantic_group="DISO", source="h"),
        Concept(id="X:1", name="heart failure", semantic_group="CHEM", source="x"),
    ]
    merged = {c.id: c for c in merge_equivalents(concepts)}
    assert set(merged) == {"MESH:D006333", "HP:1", "X:1"}
    hf = merged["MESH:D006333"]
    assert set(hf.xrefs) == {"DOID:6000", "HP:0001635"}
    assert hf.definition == "A heart disease." and hf.parents == ["HP:1"]


def test_drug_synonyms_carry_no_wiki_markup() -> None:
    assert not [s for c in drugs() for s in c.synonyms if "&" in s or "{" in s]


@pytest.mark.slow
def test_default_vocabulary_covers_phenotypes_drugs_and_mesh() -> None:
    concepts = {c.id: c for c in default_vocabulary()}
    assert len(concepts) > 50_000
    seizure = next(c for c in concepts.values() if "HP:0001250" in c.xrefs)
    assert seizure.id == "MESH:D012640"  # HPO "Seizure" joined MeSH "Seizures"
    assert seizure.definition  # and brought its definition
    assert "glucophage" in concepts["MESH:D008687"].synonyms  # a drug joined its descriptor
    assert concepts["MESH:D008687"].semantic_group == "CHEM"
