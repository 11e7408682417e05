
from medkg.model import (
    Chunk,
    Document,
    Entity,
    Evidence,
    Layer,
    Predicate,
    Qualifiers,
    Triple,
    stable_id,
)


def test_stable_ids_depend_on_content_only() -> None:
    a = Document.create(layer=Layer.USER, title="a", source="x.txt", media_type="text/plain",
                        text="Same text.")
    b = Document.create(layer=Layer.USER, title="b", source="y.txt", media_type="text/plain",
                        text="Same text.")
    c = Document.create(layer=Layer.LITERATURE, title="a", source="x.txt",
                        media_type="text/plain", text="Same text.")
    assert a.id == b.id
    assert a.id != c.id  # the layer is part of a document's identity
    assert stable_id("x", 1, "a") == stable_id("x", 1, "a") != stable_id("x", "1a")


def test_chunk_text_is_the_document_slice() -> None:
    doc = Document.create(layer=Layer.USER, title="t", source="s", media_type="text/plain",
                          text="One. Two three.")
    chunk = Chunk.create(doc, 0, 5, 15)
    assert chunk.text == "Two three."
    assert chunk.id == Chunk.create(doc, 0, 5, 15).id


def test_negated_triple_is_a_different_fact() -> None:
    plain = Triple.key_for(Layer.USER, "h", Predicate.TREATS, "t", Qualifiers())
    negated = Triple.key_for(Layer.USER, "h", Predicate.TREATS, "t", Qualifiers(negated=True))
    assert plain != negated


def test_entity_key_prefers_the_concept() -> None:
    by_concept = Entity.key_for(Layer.USER, "High blood pressure", "DISO", "MEDKG:1")
    same = Entity.key_for(Layer.USER, "hypertension", "DISO", "MEDKG:1")
    by_name = Entity.key_for(Layer.USER, "Hypertension ", "DISO", None)
    assert by_concept == same
    assert by_name == Entity.key_for(Layer.USER, "hypertension", "DISO", None)


def test_entity_content_is_name_type_context() -> None:
    e = Entity(id="e", layer=Layer.USER, name="asthma", type="DISO", context="Wheezing.")
    assert e.content() == "asthma; DISO; Wheezing."


def test_evidence_id_is_stable() -> None:
    ev = Evidence(chunk_id="c", document_id="d", start=1, end=4, quote="abc")
    assert ev.id == Evidence(chunk_id="c", document_id="d", start=1, end=4, quote="abc").id


def test_every_predicate_maps_to_biolink() -> None:
    assert {p.biolink for p in Predicate}  # every member has a mapping (KeyError otherwise)
    assert Predicate.TREATS.biolink == "treats"
