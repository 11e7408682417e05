from pathlib import Path

import pytest

from medkg.errors import VocabularyError
from medkg.ontology.index import ConceptIndex, normalize_term
from medkg.ontology.obo import read_obo
from tests.conftest import SEED_OBO

GOOD = """format-version: 1.2
data-version: 2026-01-01
ontology: test

[Term]
id: T:1
name: diabetes mellitus
def: "A \\"sugar\\" disease." [src:1]
synonym: "diabetes" EXACT []
synonym: "sugar" BROAD []
xref: MESH:D003920
property_value: semantic_group "DISO" xsd:string

[Term]
id: T:2
name: type 2 diabetes mellitus
is_a: T:1 ! diabetes mellitus

[Typedef]
id: part_of
name: part of

[Term]
id: T:3
name: old term
is_obsolete: true
replaced_by: T:2
"""


def write(tmp_path: Path, text: str | bytes) -> Path:
    path = tmp_path / "v.obo"
    if isinstance(text, bytes):
        path.write_bytes(text)
    else:
        path.write_text(text, encoding="utf-8")
    return path


def test_reads_terms_with_definitions_synonyms_and_parents(tmp_path: Path) -> None:
    header, concepts = read_obo(write(tmp_path, GOOD))
    assert header["ontology"] == "test"
    by_id = {c.id: c for c in concepts}
    assert set(by_id) == {"T:1", "T:2", "T:3"}  # the Typedef is not a concept
    dm = by_id["T:1"]
    assert dm.definition == 'A "sugar" disease.'
    assert dm.synonyms == ["diabetes"]  # BROAD synonyms name something wider
    assert dm.xrefs == ["MESH:D003920"]
    assert dm.semantic_group == "DISO"
    assert dm.source == "test@2026-01-01"
    assert by_id["T:2"].parents == ["T:1"]
    assert by_id["T:3"].obsolete and by_id["T:3"].replaced_by == "T:2"


def test_index_lookup_normalises_and_skips_obsolete(tmp_path: Path) -> None:
    _, concepts = read_obo(write(tmp_path, GOOD))
    index = ConceptIndex(concepts)
    assert [c.id for c in index.lookup("Type-2  Diabetes Mellitus")] == ["T:2"]
    assert [c.id for c in index.lookup("DIABETES")] == ["T:1"]
    assert index.lookup("old term") == []
    assert "T:3" not in index


def test_normalize_term_strips_simple_plurals() -> None:
    assert normalize_term("Headaches") == "headache"
    assert normalize_term("diabetes mellitus") == "diabetes mellitus"  # "-us" is not a plural
    assert normalize_term("abscess") == "abscess"
    assert normalize_term("pneumonia") == "pneumonia"


def test_bad_tag_line_names_file_and_line(tmp_path: Path) -> None:
    path = write(tmp_path, GOOD.replace("name: type 2", "this line has no tag"))
    with pytest.raises(VocabularyError) as err:
        read_obo(path)
    assert err.value.line == 16
    assert str(path) in str(err.value)


def test_unterminated_definition_is_an_error(tmp_path: Path) -> None:
    with pytest.raises(VocabularyError, match="quoted string"):
        read_obo(write(tmp_path, GOOD.replace('"A \\"sugar\\" disease."', '"A sugar')))


def test_non_utf8_bytes_are_an_error(tmp_path: Path) -> None:
    data = GOOD.encode().replace(b"old term", b"old \xff term")
    with pytest.raises(VocabularyError, match="UTF-8"):
        read_obo(write(tmp_path, data))


def test_file_without_terms_is_an_error(tmp_path: Path) -> None:
    with pytest.raises(VocabularyError, match="no \\[Term\\]"):
        read_obo(write(tmp_path, "format-version: 1.2\n"))


def test_term_without_name_is_an_error(tmp_path: Path) -> None:
    with pytest.raises(VocabularyError, match="has no name"):
        read_obo(write(tmp_path, "[Term]\nid: X:1\n"))


def test_seed_vocabulary_is_complete() -> None:
    _, concepts = read_obo(SEED_OBO)
    assert len(concepts) >= 70
    assert all(c.definition and c.semantic_group for c in concepts)
