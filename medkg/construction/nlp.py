"""The builtin spaCy pipeline: sentences, vocabulary matching, ConText qualifiers.

``medkg_vocab_matcher`` is a registered spaCy component: a PhraseMatcher over
every name and synonym of the vocabulary (case-insensitive, with simple
plurals) that sets ``doc.ents`` with the concept's semantic group as label and
its id as ``kb_id``. medspaCy's ConText then marks each entity negated,
uncertain, hypothetical, historical or about a family member.

(No ``from __future__ import annotations`` here: spaCy's factory registry
reads the annotations at run time.)
"""


from typing import Any

from spacy.language import Language
from spacy.matcher import PhraseMatcher
from spacy.tokens import Doc, Span
from spacy.util import filter_spans

from medkg.model import Qualifiers
from medkg.ontology.index import ConceptIndex, is_acronym
from medkg.text import sentence_spans

UNKNOWN_GROUP = "CONC"


class VocabularyMatcher:
    """Marks vocabulary terms in a Doc as entities (longest match wins)."""

    def __init__(self, nlp: Language, name: str, min_term_chars: int) -> None:
        self._nlp = nlp
        self.name = name
        self.min_term_chars = min_term_chars
        self._matcher = PhraseMatcher(nlp.vocab, attr="LOWER")
        # Acronyms ("CAP", "ECG") match case-sensitively: "cap" is not pneumonia.
        self._acronyms = PhraseMatcher(nlp.vocab, attr="ORTH")
        self._index: ConceptIndex | None = None

    def add_concepts(self, index: ConceptIndex) -> None:
        self._index = index
        seen: set[str] = set()
        patterns: dict[str, list[Doc]] = {}
        acronyms: dict[str, list[Doc]] = {}
        for term, concept in index.terms():
            if len(term) < self.min_term_chars:
                continue
            if is_acronym(term):
                acronyms.setdefault(concept.id, []).append(self._nlp.make_doc(term))
                continue
            for variant in (term, f"{term}s"):
                key = f"{concept.id}\x1f{variant.lower()}"
                if key not in seen:
                    seen.add(key)
                    patterns.setdefault(concept.id, []).append(self._nlp.make_doc(variant))
        for concept_id, docs in patterns.items():
            self._matcher.add(concept_id, docs)
        for concept_id, docs in acronyms.items():
            self._acronyms.add(concept_id, docs)

    def __call__(self, doc: Doc) -> Doc:
        if self._index is None:
            raise RuntimeError("medkg_vocab_matcher has no vocabulary: call add_concepts first")
        spans = []
        for match_id, start, end in [*self._matcher(doc), *self._acronyms(doc)]:
            concept_id = self._nlp.vocab.strings[match_id]
            concept = self._index.get(concept_id)
            group = (concept.semantic_group if concept else None) or UNKNOWN_GROUP
            spans.append(Span(doc, start, end, label=group, kb_id=concept_id))
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
