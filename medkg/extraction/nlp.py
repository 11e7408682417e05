"""The builtin spaCy pipeline: sentences, vocabulary matching, ConText qualifiers.

``medkg_vocab_matcher`` is a registered spaCy component: a PhraseMatcher over
every name and synonym of the vocabulary (case-insensitive, with simple
plurals) that sets ``doc.ents`` with the concept's semantic group as label and
its id as ``kb_id``. medspaCy's ConText then marks each entity negated,
uncertain, hypothetical, historical or about a family member.

(No ``from __future__ import annotations`` here: spaCy's factory registry
reads the annotations at run time.)
"""


import re
from pathlib import Path
from typing import Any

from spacy.language import Language
from spacy.tokens import Doc, Span
from spacy.util import filter_spans

from medkg import timing
from medkg.abbreviations import find_abbreviations
from medkg.extraction.lexicon import Lexicon
from medkg.extraction.variants import VARIANT_GROUP
from medkg.model import Concept, Qualifiers
from medkg.modelref import ModelRef
from medkg.ontology.index import ConceptIndex, normalize_term
from medkg.text import sentence_spans

UNKNOWN_GROUP = "CONC"
# Groups recognised only by a trained model, never by name alone: gene symbols are
# short capitals that collide with clinical abbreviations (HR, CP, PAH, AR).
MODEL_ONLY_GROUPS = frozenset({"GENE"})
# Groups a rule-based component recognises and normalises itself (variants).
RULE_GROUPS = frozenset({VARIANT_GROUP})
NORMALISE_K = 5
NORMALISE_MIN_SCORE = 0.6
# Laboratory and clinical measures, as written, whose abbreviations spell a gene
# symbol case-folded or come close to one (eGFR/EGFR, HbA1c/HBA1, BMI/BMI1): a
# mention tagged as a gene is left unnormalised rather than made a gene. Only
# clear measures, case kept ("EGFR" is the gene): CRP, PSA or TSH also name their
# proteins, and BioRED annotates them as genes.
LAB_MEASURES = frozenset({"eGFR", "GFR", "INR", "HbA1c", "HbA1C", "A1c", "A1C", "BMI",
                          "FEV1", "FVC", "SpO2", "LDL-C", "HDL-C", "MCV", "MCHC"})
# Words that large vocabularies list as concepts (MeSH "Patients", "Time") but that
# name nothing specific on their own in a clinical text.
COMMON_WORDS = frozenset({
    "patient", "patients", "time", "role", "methods", "method", "humans", "human", "male",
    "female", "adult", "adults", "child", "children", "age", "aged", "study", "studies",
    "risk", "dose", "doses", "level", "levels", "treatment", "therapy", "disease", "diseases",
    "report", "case", "cases", "day", "days", "week", "weeks", "year", "years", "control",
    "group", "groups", "result", "results", "use", "effect", "effects", "history",
    "syndrome", "association", "rate", "rates", "test", "tests", "plan", "review",
    "risk factor", "risk factors", "side effect", "side effects", "adverse effect",
    "adverse effects", "first-line", "blood tests",
})


class Normaliser:
    """Text of a given semantic group -> a concept id, and whether the name matched
    exactly. A learned lexicon first, then exact names, then approximate
    candidates of the same group; "" when none fits. Cached: names repeat."""

    def __init__(self, index: ConceptIndex, lexicon: Lexicon | None = None) -> None:
        self.index = index
        self.lexicon = lexicon
        self._cache: dict[tuple[str, str], tuple[str, bool]] = {}

    def learned(self, text: str) -> Concept | None:
        """The concept the lexicon names for ``text``, if the vocabulary has it and
        ``text`` does not name the class it belongs to ("statins" -> Simvastatin
        was learned from documents about one statin)."""
        concept_id = self.lexicon.get(text) if self.lexicon is not None else None
        concept = self.index.resolve(concept_id) if concept_id else None
        if concept is not None and names_its_class(text, concept):
            return None
        return concept

    def normalise(self, text: str, group: str) -> tuple[str, bool]:
        key = (text, group)
        if key not in self._cache:
            with timing.stage("normalise"):
                self._cache[key] = self._normalise(text, group)
        return self._cache[key]

    def _normalise(self, text: str, group: str) -> tuple[str, bool]:
        if group == "GENE" and text.strip() in LAB_MEASURES:
            return "", False  # "eGFR 25 mL/min" is a measure, not the gene EGFR
        learned = self.learned(text)
        if learned is not None and (learned.semantic_group or UNKNOWN_GROUP) in (
                group, UNKNOWN_GROUP):
            return learned.id, True
        for concept in self.index.lookup(text):
            if (concept.semantic_group or UNKNOWN_GROUP) in (group, UNKNOWN_GROUP):
                return concept.id, True
        # An approximate name must also be of the entity's own group: "granulosa cell
        # tumour" is not the anatomy concept "Granulosa Cells", however close the words.
        for candidate in self.index.search(text, NORMALISE_K):
            fits = candidate.concept.semantic_group == group
            if candidate.score >= NORMALISE_MIN_SCORE and fits \
                    and not names_its_class(text, candidate.concept):
                return candidate.concept.id, False
        return "", False


def names_its_class(text: str, concept: Concept) -> bool:
    """Whether ``text`` names a class the chemical concept is one member of: the
    shared stem of a drug family ("statin" in simvastatin, "sartan", "mab"),
    singular or plural, is the end of the concept's name, not a name of it.
    (Diseases are left alone: "neuropathy" ends "polyneuropathy" and is its own
    concept more often than a class; measured on BC5CDR dev.)"""
    stem = normalize_term(text).removesuffix("s")
    if concept.semantic_group != "CHEM" or len(stem) < 4 or " " in stem:
        return False
    names = [normalize_term(n) for n in concept.terms()]
    if any(n == stem or n == f"{stem}s" for n in names):
        return False  # the concept is the class itself ("Statins")
    return any(n.endswith(stem) and len(n) > len(stem) for n in names if " " not in n)


class VocabularyMatcher:
    """Marks vocabulary terms in a Doc as entities (longest match wins).

    The lookup is :meth:`ConceptIndex.find_in`, dictionary probes over token
    n-grams, so the component is ready at once even for 60,000 concepts; the
    concept's semantic group is the entity label and its id the ``kb_id``.
    Common words and phrases ("patients", "risk factor") are not matched.
    """

    def __init__(self, nlp: Language, name: str, min_term_chars: int) -> None:
        self.name = name
        self.min_term_chars = min_term_chars
        self._stop_words = frozenset(nlp.Defaults.stop_words) | COMMON_WORDS
        self._index: ConceptIndex | None = None
        self._normaliser: Normaliser | None = None

    def add_concepts(self, index: ConceptIndex, lexicon: Lexicon | None = None) -> None:
        """The vocabulary to match, and optionally a learned lexicon consulted first."""
        self._index = index
        self._normaliser = Normaliser(index, lexicon)

    def __call__(self, doc: Doc) -> Doc:
        if self._index is None:
            raise RuntimeError("medkg_vocab_matcher has no vocabulary: call add_concepts first")
        index = self._index
        assert self._normaliser is not None
        normaliser = self._normaliser
        abbreviations = find_abbreviations(doc.text)
        # Entities a trained model found keep their span and type; they get a concept.
        learned: list[Span] = []
        approximate: set[int] = set()  # start tokens of learned spans normalised only loosely
        for e in doc.ents:
            if e.label_ in RULE_GROUPS:  # recognised and normalised by rules already
                learned.append(e)
                continue
            concept_id, exact = normaliser.normalise(abbreviations.get(e.text, e.text), e.label_)
            learned.append(Span(doc, e.start, e.end, label=e.label_, kb_id=concept_id))
            if not exact:
                approximate.add(e.start)
        found = [(m.start, m.end, m.concept)
                 for m in index.find_in(doc.text, self.min_term_chars, self._stop_words,
                                        MODEL_ONLY_GROUPS)]
        # Abbreviations the text defines ("valproic acid (VPA)") name the long form's concept.
        for short, long_form in abbreviations.items():
            concepts = [c for c in index.lookup(long_form)
                        if c.semantic_group not in MODEL_ONLY_GROUPS]
            if concepts:
                found += [(m.start(), m.end(), concepts[0])
                          for m in re.finditer(rf"(?<!\w){re.escape(short)}(?!\w)", doc.text)]
        spans = list(learned)
        for start, end, concept in found:
            concept = normaliser.learned(doc.text[start:end]) or concept
            if concept.semantic_group in MODEL_ONLY_GROUPS:
                continue
            span = doc.char_span(start, end, alignment_mode="expand",
                                 label=concept.semantic_group or UNKNOWN_GROUP, kb_id=concept.id)
            if span is None:
                continue
            overlapped = [e for e in learned if e.start < span.end and span.start < e.end]
            if not overlapped:
                spans.append(span)
            elif all(self._refines(span, e, e.start in approximate) for e in overlapped):
                if span.label_ == UNKNOWN_GROUP:  # the model knows the type better
                    span = Span(doc, span.start, span.end, label=overlapped[0].label_,
                                kb_id=span.kb_id_)
                # "type 2 diabetes mellitus" around a learned "diabetes mellitus", or
                # "lactic acidosis" around "acidosis" normalised to it: the vocabulary
                # names the same or a narrower concept in full; it wins.
                spans = [x for x in spans if x not in overlapped] + [span]
        doc.ents = filter_spans(spans)
        return doc

    def _refines(self, span: Span, learned: Span, loosely_normalised: bool) -> bool:
        """Whether the vocabulary ``span`` contains ``learned`` and names a narrower
        concept, or the very concept a learned span was only approximately matched to."""
        assert self._index is not None
        contains = (span.start <= learned.start and learned.end <= span.end
                    and len(span) > len(learned))
        if not contains or not learned.kb_id_:
            return False
        if learned.kb_id_ == span.kb_id_:
            return loosely_normalised
        return learned.kb_id_ in self._index.ancestors(span.kb_id_)


@Language.component("medkg_sentences")
def set_sentences(doc: Doc) -> Doc:
    """Sentence starts from :func:`medkg.text.sentence_spans`, the splitter that
    chunking and answers use, so evidence quotes and answer sentences agree."""
    starts = {start for start, _ in sentence_spans(doc.text)}
    for i, token in enumerate(doc):
        token.is_sent_start = i == 0 or token.idx in starts
    return doc


@Language.factory("medkg_vocab_matcher", default_config={"min_term_chars": 3})
def _make_vocab_matcher(nlp: Language, name: str, min_term_chars: int) -> VocabularyMatcher:
    return VocabularyMatcher(nlp, name, min_term_chars)


class TrainedNER:
    """Runs a trained spaCy NER model (e.g. medkg/models/ner) and copies its
    entities onto the Doc by character offsets."""

    def __init__(self, nlp: Language, name: str, model_path: str) -> None:
        import spacy

        self.name = name
        self._model = spacy.load(model_path)

    def __call__(self, doc: Doc) -> Doc:
        found = self._model(doc.text)
        spans = [doc.char_span(e.start_char, e.end_char, label=e.label_,
                               alignment_mode="expand") for e in found.ents]
        # Entities an earlier model found stay; this one adds those that do not overlap.
        taken = {i for e in doc.ents for i in range(e.start, e.end)}
        added = [s for s in filter_spans([s for s in spans if s is not None])
                 if not taken.intersection(range(s.start, s.end))]
        doc.ents = sorted([*doc.ents, *added], key=lambda s: s.start)
        return doc


@Language.factory("medkg_trained_ner", default_config={"model_path": ""})
def _make_trained_ner(nlp: Language, name: str, model_path: str) -> TrainedNER:
    return TrainedNER(nlp, name, model_path)


MODELS = Path(__file__).resolve().parents[1] / "models"
BUNDLED_NER = MODELS / "ner"  # chemicals and diseases
BUNDLED_GENE_NER = MODELS / "ner-genes"  # genes and organisms


def resolve_ner_models(setting: str) -> list[Path]:
    """``bundled`` -> the models shipped in medkg/models (chemicals/diseases, then
    genes/organisms; those present); ``none`` -> no model; anything else is a
    comma-separated list of paths to spaCy pipelines with an ``ner`` component."""
    return ModelRef(setting, "extraction.ner_model").paths([BUNDLED_NER, BUNDLED_GENE_NER],
                                                           marker="meta.json")


def build_pipeline(
    index: ConceptIndex, min_term_chars: int, ner_models: Path | list[Path] | None = None,
    lexicon: Lexicon | None = None,
) -> Language:
    """A blank English pipeline: sentences, trained NER models (optional, earlier
    ones win where they overlap), sequence variants by rule, vocabulary matching
    and normalisation (a learned lexicon first, if given), ConText qualifiers."""
    import medspacy  # noqa: F401  - registers the medspacy_context factory
    import spacy

    nlp = spacy.blank("en")
    nlp.add_pipe("medkg_sentences")
    models = [ner_models] if isinstance(ner_models, Path) else (ner_models or [])
    for i, model in enumerate(models):
        nlp.add_pipe("medkg_trained_ner", name=f"medkg_trained_ner_{i}",
                     config={"model_path": str(model)})
    nlp.add_pipe("medkg_variants")
    matcher = nlp.add_pipe("medkg_vocab_matcher", config={"min_term_chars": min_term_chars})
    assert isinstance(matcher, VocabularyMatcher)
    matcher.add_concepts(index, lexicon)
    context: Any = nlp.add_pipe("medspacy_context")
    context.add(context_rules())
    return nlp


# Bump when the builtin engine's rules change (the ConText rules below, the
# normaliser's, the relation patterns of extraction/relations.py): extraction stamps carry it, so
# a build redoes the documents the change may alter.
BUILTIN_RULES_VERSION = "5"  # 5: calibrated confidences, the therapy/harm check
_AUXILIARY = ["can", "could", "did", "does", "do"]


def context_rules() -> list[Any]:
    """ConText rules medspaCy's English set lacks, in its conventions: "cannot
    rule out X" and "X cannot be excluded" are pseudo-negations, a possibility
    (POSSIBLE_EXISTENCE, longer than the "not" inside them, which they override:
    it was tagged negated and uncertain at once); "possibly X" and its kin hedge
    what follows (it was not tagged uncertain)."""
    from medspacy.context import ConTextRule

    return [
        ConTextRule("cannot rule out", "POSSIBLE_EXISTENCE", direction="FORWARD", pattern=[
            {"LOWER": {"IN": _AUXILIARY}}, {"LOWER": {"IN": ["not", "n't"]}},
            {"LOWER": {"IN": ["rule", "exclude"]}}, {"LOWER": "out", "OP": "?"}]),
        ConTextRule("cannot be ruled out", "POSSIBLE_EXISTENCE", direction="BACKWARD", pattern=[
            {"LOWER": {"IN": _AUXILIARY}}, {"LOWER": {"IN": ["not", "n't"]}}, {"LOWER": "be"},
            {"LOWER": {"IN": ["ruled", "excluded"]}}, {"LOWER": "out", "OP": "?"}]),
        ConTextRule("possibly", "POSSIBLE_EXISTENCE", direction="FORWARD", pattern=[
            {"LOWER": {"IN": ["possibly", "perhaps", "presumably", "presumed", "suspected",
                              "questionable"]}}]),
    ]


def qualifiers_of(span: Span) -> Qualifiers:
    """The ConText attributes of an entity span as medkg qualifiers."""
    return Qualifiers.of_context(span._)
