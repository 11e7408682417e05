import json
from pathlib import Path

import pytest

from medkg.errors import ConfigError
from medkg.extraction.extract import extract
from medkg.extraction.relation_model import (
    BUNDLED_RELATIONS,
    Head,
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
    names = {(p.head, p.tail) for p in features}
    assert ("MEDKG:0000047", "MEDKG:0000023") in names  # lisinopril, angioedema
    f = features[Pair("MEDKG:0000047", "MEDKG:0000023")]
    assert f["sent_gap=0"] == 1.0 and f["between:after"] == 1.0 and f["chem_top"] == 1.0


def head(name: str, predicate: Predicate, weights: dict[str, float], bias: float = -2.0,
         threshold: float = 0.5) -> Head:
    return Head(name, predicate, ("CHEM", "DISO"), weights, bias, threshold)


def test_model_scores_and_round_trips(nlp: object, tmp_path: Path) -> None:
    model = RelationModel([head("adverse", Predicate.HAS_ADVERSE_EFFECT,
                                {"between:after": 3.0, "sent_gap=0": 1.0})])
    [hit] = [r for r in model.relations(extraction(nlp)) if r.tail.text == "angioedema"]
    assert hit.predicate is Predicate.HAS_ADVERSE_EFFECT and hit.pattern == "classifier:adverse"
    assert 0.5 < hit.confidence < 1.0
    model.save(tmp_path / "m.json")
    again = RelationModel.load(tmp_path / "m.json")
    assert again.heads == model.heads


def test_one_relation_per_pair_the_head_with_the_widest_margin(nlp: object) -> None:
    adverse = head("adverse", Predicate.HAS_ADVERSE_EFFECT, {"between:after": 3.0}, 0.0, 0.9)
    treats = head("treats", Predicate.TREATS, {"sent_gap=0": 1.0}, 1.0, 0.5)
    hits = RelationModel([adverse, treats]).relations(extraction(nlp))
    pairs = [(h.head.text.lower(), h.tail.text) for h in hits]
    assert len(pairs) == len(set(pairs))
    [angio] = [h for h in hits if h.tail.text == "angioedema"]
    assert angio.predicate is Predicate.TREATS  # 0.88 - 0.5 beats 0.95 - 0.9


def test_a_first_format_file_loads_as_one_adverse_effect_head(tmp_path: Path) -> None:
    path = tmp_path / "cid.json"
    path.write_text(json.dumps({"weights": {"sent_gap=0": 1.0}, "bias": -1.0,
                                "threshold": 0.3, "about": "old"}))
    [h] = RelationModel.load(path).heads
    assert (h.predicate, h.groups, h.threshold) == (Predicate.HAS_ADVERSE_EFFECT,
                                                    ("CHEM", "DISO"), 0.3)
    path.write_text("{not json")
    with pytest.raises(ConfigError, match="not a relation model file"):
        RelationModel.load(path)


def test_bundled_model_loads() -> None:
    model = resolve_relation_model("bundled")
    assert model is not None and BUNDLED_RELATIONS.exists()
    names = {h.name for h in model.heads}
    assert {"adverse", "treats"} <= names and all(h.weights for h in model.heads)
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


def test_confidence_is_the_heads_calibrated_probability(nlp: object, tmp_path: Path) -> None:
    raw = head("adverse", Predicate.HAS_ADVERSE_EFFECT, {"between:after": 3.0, "sent_gap=0": 1.0})
    shifted = Head(raw.name, raw.predicate, raw.groups, raw.weights, raw.bias, raw.threshold,
                   calibration=(1.0, -1.0))  # the model says more than it is worth
    [before] = [r for r in RelationModel([raw]).relations(extraction(nlp))
                if r.tail.text == "angioedema"]
    [after] = [r for r in RelationModel([shifted]).relations(extraction(nlp))
               if r.tail.text == "angioedema"]
    p = before.confidence
    assert after.confidence == pytest.approx(1 / (1 + ((1 - p) / p) * 2.718281828), abs=2e-3)
    model = RelationModel([shifted])
    model.save(tmp_path / "m.json")
    assert RelationModel.load(tmp_path / "m.json").heads[0].calibration == (1.0, -1.0)


def test_the_bundled_heads_are_calibrated() -> None:
    model = resolve_relation_model("bundled")
    assert model is not None
    for h in model.heads:
        assert h.calibration is not None, h.name
        assert 0.0 < h.calibrated(0.5) < 1.0 and h.calibrated(0.9) > h.calibrated(0.3)


def sentence_extraction(nlp: object, text: str):  # type: ignore[no-untyped-def]
    doc = Document.create(layer=Layer.USER, title="t", source="s", media_type="text/plain",
                          text=text)
    [ex] = list(extract([Chunk.create(doc, 0, 0, len(text))], nlp))  # type: ignore[arg-type]
    return ex


@pytest.mark.parametrize("text, treats", [
    ("Angioedema induced by lisinopril was seen in two patients.", False),
    ("Angioedema was exacerbated by lisinopril.", False),
    ("Lisinopril was effective for hypertension.", True),
])
def test_a_treatment_the_sentence_contradicts_is_not_asserted(nlp: object, text: str,
                                                              treats: bool) -> None:
    eager = head("treats", Predicate.TREATS, {"sent_gap=0": 3.0}, 0.0, 0.5)
    hits = RelationModel([eager]).relations(sentence_extraction(nlp, text))
    assert bool(hits) is treats
    adverse = head("adverse", Predicate.HAS_ADVERSE_EFFECT, {"sent_gap=0": 1.0}, 0.0, 0.5)
    # where another head also clears its threshold, the pair gets that one instead
    both = RelationModel([eager, adverse]).relations(sentence_extraction(nlp, text))
    assert [h.predicate for h in both] == [Predicate.TREATS if treats
                                           else Predicate.HAS_ADVERSE_EFFECT]


def test_x_induced_y_is_harm_whatever_else_the_sentence_says(nlp: object) -> None:
    text = "Enalapril protected against lisinopril induced angioedema in rats."
    eager = head("treats", Predicate.TREATS, {"sent_gap=0": 3.0}, 0.0, 0.5)
    hits = RelationModel([eager]).relations(sentence_extraction(nlp, text))
    assert not any(h.head.text.lower() == "lisinopril" and h.tail.text == "angioedema"
                   for h in hits)


def test_a_disorder_named_by_the_chemical_is_not_treated_by_it() -> None:
    from medkg.extraction.extract import ChunkExtraction, MentionHit
    from medkg.extraction.relation_model import says_harm
    from medkg.model import Qualifiers

    text = "Iron overload was reduced. Iron was given."
    doc = Document.create(layer=Layer.USER, title="t", source="s", media_type="text/plain",
                          text=text)
    chunk = Chunk.create(doc, 0, 0, len(text))
    overload = MentionHit("D1", "DISO", 0, 13, "Iron overload", Qualifiers(), (0, 26))
    iron = MentionHit("C1", "CHEM", 27, 31, "Iron", Qualifiers(), (27, 42))
    ex = ChunkExtraction(chunk, [overload, iron])
    assert says_harm(ex, Pair("C1", "D1"), ("CHEM", "DISO"))
    other = MentionHit("C2", "CHEM", 27, 31, "Zinc", Qualifiers(), (27, 42))
    assert not says_harm(ChunkExtraction(chunk, [overload, other]), Pair("C2", "D1"),
                         ("CHEM", "DISO"))


def test_a_stated_harm_is_asserted_as_the_adverse_effect_it_is(nlp: object) -> None:
    text = "Angioedema induced by lisinopril was seen in two patients."
    eager = head("treats", Predicate.TREATS, {"sent_gap=0": 3.0}, 0.0, 0.5)
    shy = head("adverse", Predicate.HAS_ADVERSE_EFFECT, {"sent_gap=0": 1.0}, 0.0, 0.99)
    [hit] = RelationModel([eager, shy]).relations(sentence_extraction(nlp, text))
    # the adverse head did not clear its threshold: its own low probability is kept
    assert hit.predicate is Predicate.HAS_ADVERSE_EFFECT and hit.confidence < 0.99
    assert hit.pattern == "classifier:adverse"
