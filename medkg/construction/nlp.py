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
from typing import Any

from spacy.language import Language
from spacy.tokens import Doc, Span
from spacy.util import filter_spans

from medkg.abbreviations import find_abbreviations
from medkg.model import Qualifiers
from medkg.ontology.index import ConceptIndex
from medkg.text import sentence_spans

UNKNOWN_GROUP = "CONC"
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

    def add_concepts(self, index: ConceptIndex) -> None:
        self._index = index

    def __call__(self, doc: Doc) -> Doc:
        if self._index is None:
            raise RuntimeError("medkg_vocab_matcher has no vocabulary: call add_concepts first")
        index = self._index
        found = [(m.start, m.end, m.concept)
                 for m in index.find_in(doc.text, self.min_term_chars, self._stop_words)]
        # Abbreviations the text defines ("valproic acid (VPA)") name the long form's concept.
        for short, long_form in find_abbreviations(doc.text).items():
            concepts = index.lookup(long_form)
            if concepts:
                found += [(m.start(), m.end(), concepts[0])
                          for m in re.finditer(rf"(?<!\w){re.escape(short)}(?!\w)", doc.text)]
        spans = []
        for start, end, concept in found:
            span = doc.char_span(start, end, alignment_mode="expand",
                                 label=concept.semantic_group or UNKNOWN_GROUP, kb_id=concept.id)
            if span is not None:
                spans.append(span)
        doc.ents = filter_spans(spans)
        return doc


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


def build_pipeline(index: ConceptIndex, min_term_chars: int) -> Language:
    """A blank English pipeline with sentence splitting, vocabulary NER and ConText."""
    import medspacy  # noqa: F401  - registers the medspacy_context factory
    import spacy

    nlp = spacy.blank("en")
    nlp.add_pipe("medkg_sentences")
    matcher = nlp.add_pipe("medkg_vocab_matcher", config={"min_term_chars": min_term_chars})
    assert isinstance(matcher, VocabularyMatcher)
    matcher.add_concepts(index)
    nlp.add_pipe("medspacy_context")
    return nlp


def qualifiers_of(span: Span) -> Qualifiers:
    """The ConText attributes of an entity span as medkg qualifiers."""
    ext: Any = span._
    return Qualifiers(
        negated=bool(ext.is_negated),
        uncertain=bool(ext.is_uncertain),
        hypothetical=bool(ext.is_hypothetical),
        historical=bool(ext.is_historical),
        experiencer="family" if ext.is_family else "patient",
    )
