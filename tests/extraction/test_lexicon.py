"""The learned normalisation lexicon and its place in the vocabulary matcher."""

from pathlib import Path

import pytest

from medkg.errors import ConfigError
from medkg.extraction.extract import extract
from medkg.extraction.lexicon import BUNDLED_LEXICON, Lexicon, resolve_lexicon
from medkg.extraction.nlp import build_pipeline
from medkg.model import Chunk, Concept, Document, Layer
from medkg.ontology.index import ConceptIndex


def test_majority_kept_only_when_consistent() -> None:
    votes = [("Toxicity", "MESH:D064420")] * 4 + [("toxicity", "MESH:D1")]  # 80% agree
    votes += [("seizure", "MESH:D2"), ("seizures", "MESH:D3")]  # one key, 50/50
    votes += [("PAN", "MESH:D4")]  # an acronym seen once
    votes += [("VPA", "MESH:D5"), ("VPA", "MESH:D5")]
    lexicon = Lexicon.learn(votes)
    assert lexicon.get("Toxicity ") == "MESH:D064420"  # normalised like the vocabulary
    assert lexicon.get("seizure") is None and lexicon.get("PAN") is None
    assert lexicon.get("VPA") == "MESH:D5" and lexicon.get("vpa") is None


def test_round_trip_and_bad_file(tmp_path: Path) -> None:
    lexicon = Lexicon({"toxicity": "MESH:D064420"}, about="test")
    lexicon.save(tmp_path / "l.json")
    assert Lexicon.load(tmp_path / "l.json").entries == lexicon.entries
    (tmp_path / "bad.json").write_text("{not json", encoding="utf-8")
    with pytest.raises(ConfigError, match="normalisation lexicon"):
        resolve_lexicon(str(tmp_path / "bad.json"))
    assert resolve_lexicon("none") is None


def test_bundled_lexicon_is_small_and_loads() -> None:
    assert BUNDLED_LEXICON.stat().st_size < 500_000
    lexicon = resolve_lexicon("bundled")
    assert lexicon is not None and len(lexicon) > 1000


def test_matcher_prefers_the_lexicon_when_the_vocabulary_has_the_concept() -> None:
    index = ConceptIndex([
        Concept(id="MESH:D064420", name="Drug-Related Side Effects and Adverse Reactions",
                semantic_group="DISO", source="t"),
        Concept(id="MESH:D018675", name="Toxicity Tests", synonyms=["toxicity"],
                semantic_group="PROC", source="t"),
        Concept(id="MESH:D002220", name="Carbamazepine", semantic_group="CHEM", source="t"),
    ])
    lexicon = Lexicon({"toxicity": "MESH:D064420", "carbamazepine": "MESH:D999"})
    text = "Carbamazepine toxicity was suspected."
    doc = Document.create(layer=Layer.USER, title="t", source="s", media_type="text/plain",
                          text=text)
    [ex] = list(extract([Chunk.create(doc, 0, 0, len(text))], build_pipeline(index, 3,
                                                                           lexicon=lexicon)))
    found = {m.text: m.concept_id for m in ex.mentions}
    assert found["toxicity"] == "MESH:D064420"
    assert found["Carbamazepine"] == "MESH:D002220"  # the lexicon's id is unknown here
