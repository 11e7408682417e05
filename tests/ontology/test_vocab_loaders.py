import shutil
from pathlib import Path

import pytest

from medkg.errors import VocabularyError
from medkg.model import Concept
from medkg.ontology.loaders import find_cycles, load_file
from medkg.ontology.rrf import RRFFilter, read_rrf
from medkg.ontology.semantic import assign_groups, group_of_tree_number
from tests.conftest import shared_path


def test_rrf_sample_release() -> None:
    directory = shared_path("vocab", "umls_rrf_sample")
    concepts = {c.id: c for c in read_rrf(directory)}
    c = concepts["UMLS:C0000039"]
    assert c.name == "1,2-Dipalmitoylphosphatidylcholine"
    assert c.definition and c.definition.startswith("Synthetic phospholipid")
    assert c.semantic_type == "T109" and c.semantic_group == "CHEM"
    assert "MESH:D015060" in c.xrefs
    assert concepts["UMLS:C0000005"].synonyms == ["(131)I-MAA"]


def test_rrf_filters_by_source(tmp_path: Path) -> None:
    directory = shared_path("vocab", "umls_rrf_sample")
    with pytest.raises(VocabularyError, match="no concept passed the filters"):
        read_rrf(directory, RRFFilter(sources=frozenset({"SNOMEDCT_US"})))


def test_rrf_wrong_column_count_names_file_and_line(tmp_path: Path) -> None:
    directory = shared_path("vocab", "umls_rrf_sample")
    copy = tmp_path / "META"
    shutil.copytree(directory, copy)
    lines = (copy / "MRSTY.RRF").read_text().splitlines()
    lines[1] = lines[1] + "extra|"
    (copy / "MRSTY.RRF").write_text("\n".join(lines) + "\n")
    with pytest.raises(VocabularyError) as err:
        read_rrf(copy)
    assert err.value.line == 2 and err.value.path.name == "MRSTY.RRF"
    assert "expected 6" in str(err.value)


def test_semantic_groups_agree_with_nlm_table() -> None:
    groups = shared_path("vocab", "umls_semantic_network", "SemGroups.txt")
    srdef = shared_path("vocab", "umls_semantic_network", "SRDEF_ae-lda.psv")
    stn = {r[1]: r[3] for r in (line.split("|") for line in srdef.read_text().splitlines())
           if r[0] == "STY"}
    pairs = [line.split("|") for line in groups.read_text().splitlines() if line.strip()]
    wrong = [(tui, g) for g, _, tui, _ in pairs if group_of_tree_number(stn[tui]) != g]
    assert wrong == []


def test_open_ontology_groups() -> None:
    concepts = assign_groups([
        Concept(id="HP:0000118", name="Phenotypic abnormality", source="hp"),
        Concept(id="HP:0001250", name="Seizure", parents=["HP:0000118"], source="hp"),
        Concept(id="HP:0000006", name="Autosomal dominant inheritance", source="hp"),
        Concept(id="DOID:1", name="disease", source="do"),
        Concept(id="X:1", name="thing", source="x", semantic_group="CHEM"),
    ])
    assert [c.semantic_group for c in concepts] == ["DISO", "DISO", "CONC", "DISO", "CHEM"]


def test_mesh_list_and_table(tmp_path: Path) -> None:
    mesh = tmp_path / "mesh.csv"
    mesh.write_text("id,scheme,subject\nhttps://id.nlm.nih.gov/mesh/D008687,MeSH,Metformin\n")
    [m] = load_file(mesh).concepts
    assert (m.id, m.name) == ("MESH:D008687", "Metformin")
    table = tmp_path / "v.tsv"
    table.write_text("id\tname\tsynonyms\tdefinition\tsemantic_group\n"
                     "X:1\tfoo\tbar|baz\tA foo.\tDISO\n")
    [t] = load_file(table).concepts
    assert t.synonyms == ["bar", "baz"] and t.definition == "A foo."


def test_table_with_bad_row_names_the_line(tmp_path: Path) -> None:
    table = tmp_path / "v.tsv"
    table.write_text("id\tname\nX:1\tfoo\nX:2\tbar\textra\n")
    with pytest.raises(VocabularyError) as err:
        load_file(table)
    assert err.value.line == 3


def test_cycles_are_reported(tmp_path: Path) -> None:
    obo = tmp_path / "c.obo"
    obo.write_text("[Term]\nid: X:1\nname: a\nis_a: X:2\n\n[Term]\nid: X:2\nname: b\nis_a: X:3\n\n"
                   "[Term]\nid: X:3\nname: c\nis_a: X:1\n\n[Term]\nid: X:4\nname: d\nis_a: X:1\n")
    load = load_file(obo)
    assert len(load.concepts) == 4
    assert load.warnings == ["is_a cycle: X:1 -> X:2 -> X:3 -> X:1"]
    assert find_cycles(load.concepts[3:]) == []
