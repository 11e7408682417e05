import pytest

from medkg.extraction.extract import assemble, extract
from medkg.model import Chunk, Document, Layer, Predicate
from medkg.ontology.index import ConceptIndex, is_acronym


def ents(nlp: object, text: str) -> list[tuple[str, str]]:
    return [(e.text, e.label_) for e in nlp(text).ents]  # type: ignore[operator]


def test_vocabulary_terms_synonyms_and_plurals(nlp: object) -> None:
    found = ents(nlp, "High blood pressure and headaches; started Metformin.")
    assert found == [("High blood pressure", "DISO"), ("headaches", "DISO"),
                     ("Metformin", "CHEM")]


def test_longest_match_wins(nlp: object) -> None:
    assert ents(nlp, "Type 2 diabetes mellitus.") == [("Type 2 diabetes mellitus", "DISO")]


def test_acronyms_match_only_in_capitals(nlp: object) -> None:
    assert ents(nlp, "ECG normal.") == [("ECG", "PROC")]
    assert ents(nlp, "ecg normal.") == []
    assert is_acronym("CHF") and is_acronym("AFib") and not is_acronym("asthma")


def test_context_qualifiers(nlp: object) -> None:
    doc = nlp("Denies chest pain. Possible pneumonia. Mother has asthma. History of stroke.")  # type: ignore[operator]
    flags = {e.text: (e._.is_negated, e._.is_uncertain, e._.is_family, e._.is_historical)
             for e in doc.ents}
    assert flags["chest pain"][0]
    assert flags["pneumonia"][1]
    assert flags["asthma"][2]
    assert flags["stroke"][3]


@pytest.mark.parametrize(("text", "term", "negated", "uncertain"), [
    ("Chest X-ray shows possibly pneumonia.", "pneumonia", False, True),
    ("Perhaps pneumonia.", "pneumonia", False, True),
    ("We cannot rule out stroke.", "stroke", False, True),  # was negated and uncertain
    ("Stroke cannot be ruled out.", "Stroke", False, True),
    ("Could not exclude bleeding.", "bleeding", False, True),
    ("Stroke has been ruled out.", "Stroke", True, False),
    ("No bleeding.", "bleeding", True, False),
])
def test_context_pseudo_negation_and_hedges(nlp: object, text: str, term: str, negated: bool,
                                            uncertain: bool) -> None:
    """medspaCy/ConText conventions: "cannot rule out X" is a possibility, not a
    negation (a pseudo-negation longer than its "not"); "possibly X" hedges X."""
    doc = nlp(text)  # type: ignore[operator]
    [span] = [e for e in doc.ents if e.text == term]
    assert (span._.is_negated, span._.is_uncertain) == (negated, uncertain)


def test_extract_and_assemble_give_document_offsets(nlp: object, seed_concepts: list) -> None:
    text = "Intro line here.\n\nLisinopril can cause a dry cough. Patient denies fever."
    doc = Document.create(layer=Layer.USER, title="t", source="s", media_type="text/plain",
                          text=text)
    chunk = Chunk.create(doc, 0, 18, len(text))
    [ex] = list(extract([chunk], nlp))  # type: ignore[arg-type]
    for m in ex.mentions:
        assert text[m.start : m.end] == m.text
    entities, triples = assemble(Layer.USER, [ex], ConceptIndex(seed_concepts), 200)
    names = {e.id: e.name for e in entities}
    assert [(names[t.head], t.predicate, names[t.tail]) for t in triples] == [
        ("lisinopril", Predicate.HAS_ADVERSE_EFFECT, "dry cough")
    ]
    [ev] = triples[0].evidence
    assert text[ev.start : ev.end] == ev.quote == "Lisinopril can cause a dry cough."
    fever = next(e for e in entities if e.name == "fever")
    assert fever.mentions[0].qualifiers.negated
    assert fever.context == "Patient denies fever."


def test_negated_relation_carries_the_negation(nlp: object, seed_concepts: list) -> None:
    text = "Amlodipine did not cause edema."
    doc = Document.create(layer=Layer.USER, title="t", source="s", media_type="text/plain",
                          text=text)
    exs = list(extract([Chunk.create(doc, 0, 0, len(text))], nlp))  # type: ignore[arg-type]
    _, triples = assemble(Layer.USER, exs, ConceptIndex(seed_concepts), 200)
    assert all(t.qualifiers.negated for t in triples)


def test_defined_abbreviations_take_the_long_forms_concept(nlp: object) -> None:
    found = ents(nlp, "Known heart failure (HF). HF worsened.")
    assert found == [("heart failure", "DISO"), ("HF", "DISO"), ("HF", "DISO")]


def _ents(nlp: object, text: str) -> dict[str, tuple[str, str]]:
    doc = nlp(text)  # type: ignore[operator]
    return {e.text: (e.label_, e.kb_id_) for e in doc.ents}


def test_gene_symbols_come_only_from_the_model() -> None:
    from medkg.extraction.nlp import build_pipeline, resolve_ner_models
    from medkg.model import Concept
    from medkg.ontology.index import ConceptIndex

    index = ConceptIndex([
        Concept(id="NCBIGene:3281", name="HR", semantic_group="GENE", source="t"),
        Concept(id="NCBIGene:672", name="BRCA1", semantic_group="GENE", source="t"),
    ])
    # A dictionary alone does not take "HR" (heart rate) for the hairless gene.
    assert "HR" not in _ents(build_pipeline(index, 2), "HR was 80 and regular.")
    models = resolve_ner_models("bundled")
    assert [m.name for m in models] == ["ner", "ner-genes"]
    found = _ents(build_pipeline(index, 2, models),
                  "Expression of TNF-alpha was increased in rats given cisplatin, and BRCA1 "
                  "carriers had breast cancer.")
    assert found["TNF-alpha"][0] == "GENE" and found["rats"][0] == "LIVB"
    assert found["cisplatin"][0] == "CHEM" and found["breast cancer"][0] == "DISO"
    if "BRCA1" in found:  # the gene model's recall is about 0.66; when found, normalised
        assert found["BRCA1"] == ("GENE", "NCBIGene:672")


def test_a_lab_measure_is_never_normalised_to_a_gene() -> None:
    """'eGFR' (a lab measure) is not the gene EGFR; 'EGFR' still is, and 'mTOR'
    still finds MTOR (case-folded gene symbols are right more often than not)."""
    from medkg.extraction.nlp import Normaliser
    from medkg.model import Concept

    index = ConceptIndex([
        Concept(id="HGNC:3236", name="EGFR", synonyms=["epidermal growth factor receptor"],
                semantic_group="GENE", source="t"),
        Concept(id="HGNC:6121", name="INSR", semantic_group="GENE", source="t"),
        Concept(id="HGNC:3942", name="MTOR", semantic_group="GENE", source="t")])
    normaliser = Normaliser(index)
    assert normaliser.normalise("EGFR", "GENE") == ("HGNC:3236", True)
    assert normaliser.normalise("eGFR", "GENE") == ("", False)
    assert normaliser.normalise("mTOR", "GENE")[0] == "HGNC:3942"
    assert normaliser.normalise("epidermal growth factor receptors", "GENE")[0] == "HGNC:3236"


def test_a_class_noun_is_never_normalised_to_one_member() -> None:
    """'statins' is not simvastatin (a lexicon learned it from documents about one
    statin); 'NSAID' is not the brand Ansaid; the class concept itself still is."""
    from medkg.extraction.lexicon import Lexicon
    from medkg.extraction.nlp import Normaliser, names_its_class
    from medkg.model import Concept

    simva = Concept(id="MESH:D019821", name="Simvastatin", semantic_group="CHEM", source="t")
    flurbi = Concept(id="MESH:D005480", name="Flurbiprofen", synonyms=["Ansaid"],
                     semantic_group="CHEM", source="t")
    statins = Concept(id="MESH:D019161", name="Statins", semantic_group="CHEM", source="t")
    lexicon = Lexicon({"statin": simva.id})
    normaliser = Normaliser(ConceptIndex([simva, flurbi]), lexicon)
    assert normaliser.normalise("statins", "CHEM") == ("", False)
    assert normaliser.normalise("NSAID", "CHEM") == ("", False)
    assert normaliser.normalise("simvastatin", "CHEM") == (simva.id, True)
    with_class = Normaliser(ConceptIndex([simva, statins]), lexicon)
    assert with_class.normalise("statins", "CHEM")[0] == statins.id
    assert names_its_class("statins", simva) and not names_its_class("statins", statins)
    assert not names_its_class("simvastatin", simva)
