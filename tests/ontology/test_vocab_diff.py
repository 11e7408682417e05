from pathlib import Path

from typer.testing import CliRunner

from medkg.cli import app
from medkg.model import Concept
from medkg.ontology.diff import diff
from medkg.ontology.index import ConceptIndex

OLD = """format-version: 1.2
data-version: v1
ontology: t

[Term]
id: T:1
name: kidney disease

[Term]
id: T:2
name: renal failure

[Term]
id: T:3
name: gone soon
"""
NEW = """format-version: 1.2
data-version: v2
ontology: t

[Term]
id: T:1
name: kidney disorder

[Term]
id: T:2
name: renal failure
is_obsolete: true
replaced_by: T:4

[Term]
id: T:4
name: kidney failure
"""


def test_diff_lists_every_kind_of_change(tmp_path: Path) -> None:
    (tmp_path / "old.obo").write_text(OLD)
    (tmp_path / "new.obo").write_text(NEW)
    result = CliRunner().invoke(app, ["vocab", "diff", str(tmp_path / "old.obo"),
                                      str(tmp_path / "new.obo"), "--json"])
    assert result.exit_code == 0, result.output
    from medkg.ontology.diff import VocabularyDiff

    d = VocabularyDiff.model_validate_json(result.stdout)
    assert (d.old_source, d.new_source) == ("t@v1", "t@v2")
    assert d.added == ["T:4"] and d.removed == ["T:3"]
    assert [(r.id, r.old, r.new) for r in d.renamed] == [("T:1", "kidney disease",
                                                          "kidney disorder")]
    assert [(o.id, o.replaced_by) for o in d.obsoleted] == [("T:2", "T:4")]


def test_obsolete_ids_follow_replaced_by() -> None:
    index = ConceptIndex([
        Concept(id="T:2", name="renal failure", obsolete=True, replaced_by="T:4", source="t"),
        Concept(id="T:4", name="kidney failure", source="t"),
    ])
    resolved = index.resolve("T:2")
    assert index.get("T:2") is None and resolved is not None and resolved.id == "T:4"


def test_diff_of_identical_releases_is_empty() -> None:
    same = [Concept(id="X:1", name="a", source="s")]
    d = diff(same, same)
    assert not (d.added or d.removed or d.renamed or d.obsoleted)


def test_merged_ids_resolve_to_their_concept() -> None:
    index = ConceptIndex([
        Concept(id="MESH:D012640", name="Seizures", xrefs=["HP:0001250"], source="m"),
    ])
    found = index.resolve("HP:0001250")
    assert found is not None and found.id == "MESH:D012640"
    assert index.resolve("HP:9999999") is None
