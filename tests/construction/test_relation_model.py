from pathlib import Path

from medkg.construction.extraction import extract
from medkg.construction.relation_model import (
    BUNDLED_RELATIONS,
    Pair,
    RelationModel,
    pair_features,
    resolve_relation_model,
)
from medkg.model import Chunk, Document, Layer, Predicate

TEXT = ("Lisinopril was started for hypertension. Two weeks later angioedema developed "
        "after the first doses of lisinopril.")


def extraction(nlp: object):  # type: ignore[no-untyped-def]
    doc = Document.create(layer=Layer.USER, title="t", source="s", media_type="text/plain",
                          text=TEXT)
    [ex] = list(extract([Chunk.create(doc, 0, 0, len(TEXT))], nlp))  # type: ignore[arg-type]
    return ex


def test_pairs_and_their_features(nlp: object) -> None:
    features = pair_features(extraction(nlp))
    names = {(p.chemical, p.disease) for p in features}
    assert ("MEDKG:0000047", "MEDKG:0000023") in names  # lisinopril, angioedema
    f = features[Pair("MEDKG:0000047", "MEDKG:0000023")]
    assert f["sent_gap=0"] == 1.0 and f["between:after"] == 1.0 and f["chem_top"] == 1.0


def test_model_scores_and_round_trips(nlp: object, tmp_path: Path) -> None:
    model = RelationModel({"between:after": 3.0, "sent_gap=0": 1.0}, bias=-2.0, threshold=0.5)
    [hit] = [r for r in model.relations(extraction(nlp)) if r.tail.text == "angioedema"]
    assert hit.predicate is Predicate.HAS_ADVERSE_EFFECT and hit.pattern == "classifier:cid"
    assert 0.5 < hit.confidence < 1.0
    model.save(tmp_path / "m.json")
    again = RelationModel.load(tmp_path / "m.json")
    assert again.weights == model.weights and again.threshold == 0.5


def test_bundled_model_loads() -> None:
    model = resolve_relation_model("bundled")
    assert model is not None and model.weights and BUNDLED_RELATIONS.exists()
    assert resolve_relation_model("none") is None


def test_hierarchy_features_mark_broader_and_narrower_diseases(nlp: object) -> None:
    parents = {"MEDKG:0000023": {"MEDKG:0000099"}}  # pretend angioedema sits under X

    def ancestors(concept_id: str) -> set[str]:
        return parents.get(concept_id, set())

    features = pair_features(extraction(nlp), ancestors)
    f = features[Pair("MEDKG:0000047", "MEDKG:0000023")]
    assert f["dis_has_broader"] == 0.0 and f["dis_has_narrower"] == 0.0
    assert "dis_has_broader" not in pair_features(extraction(nlp))[
        Pair("MEDKG:0000047", "MEDKG:0000023")]
