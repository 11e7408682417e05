"""Global questions from the tag tree: "What adverse effects come up across my
notes?", "What are the main themes of this literature?".

The role MS GraphRAG's global search and LightRAG's high-level keywords play,
over MedGraphRAG's tag summaries, extractively:

1. Scope: every chunk, or the user layer's alone when the question asks about
   "my notes" / "my documents" / "my patients".
2. Map: when the question names a tag category (adverse effects, symptoms,
   medications, diagnoses, ...), every chunk's summary in scope contributes
   its terms of that category; otherwise the top groups of the tree (the most
   similar to the question, larger ones first on a tie) contribute their
   summaries as themes.
3. Reduce: the terms (or themes) that most chunks share, each with how many
   documents mention it and one cited sentence that names it.

``choose_mode`` is the ``auto`` mode's rule over the question's dual-level
keywords (``keywords``: low, the entities it names; high, its global cue, the
category and the scope it asks about): a global cue and no entity of its own
goes global, anything else to U-Retrieval; the keywords and the reason are kept
in the trace.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass

from spacy.language import Language

from medkg.config import RetrievalConfig
from medkg.linking.embeddings import Embedder
from medkg.model import Layer, Mention
from medkg.retrieval.answer import Answer, Citation, is_heading
from medkg.retrieval.trace import Trace
from medkg.store.base import GraphStore
from medkg.tagtree.tags import LABELS
from medkg.tagtree.tree import TagTree
from medkg.text import sentence_spans

_GLOBAL_CUES = re.compile(
    r"\b(across|overall|in general|main themes?|themes?|common(ly)?|most frequent|"
    r"frequently|recurr|trends?|summar|overview|come up|which .* most)\b", re.IGNORECASE)
_MINE = re.compile(r"\bmy (notes?|documents?|records?|patients?|files?)\b", re.IGNORECASE)
_CATEGORY_CUES: dict[str, tuple[str, ...]] = {
    "adverse_events": ("adverse", "side effect", "side-effect", "harm", "complication"),
    "symptoms_and_signs": ("symptom", "sign", "complain"),
    "medications_and_doses": ("medication", "drug", "medicine", "prescri", "dose"),
    "diagnoses_and_conditions": ("diagnos", "condition", "disease", "disorder"),
    "procedures": ("procedure", "surgery", "operation"),
    "laboratory_results": ("lab", "test result", "level"),
    "genes_and_organisms": ("gene", "organism", "bacteri", "virus"),
    "patient_history": ("history",),
}
POINTS = 6  # themes
CATEGORY_POINTS = 12  # terms of an asked-for category: cover the notes
# The categories a theme is named by, most telling first (not "patient", "man").
THEME_CATEGORIES = ("diagnoses_and_conditions", "medications_and_doses", "procedures",
                    "adverse_events", "symptoms_and_signs", "laboratory_results")


@dataclass(frozen=True)
class Keywords:
    """LightRAG's dual-level keywords, from the question itself: ``low``, the
    specific things it names (entities the pipeline normalised to a concept);
    ``high``, what it asks about at the level of the collection (its global cue,
    the tag category it asks for, its scope: the user's own documents)."""

    low: tuple[str, ...]
    high: tuple[str, ...]

    def as_dict(self) -> dict[str, list[str]]:
        return {"low": list(self.low), "high": list(self.high)}


@dataclass(frozen=True)
class ModeChoice:
    mode: str
    reason: str
    keywords: Keywords


def keywords(question: str, nlp: Language) -> Keywords:
    low = tuple(dict.fromkeys(e.text for e in nlp(question).ents if e.kb_id_))
    high: list[str] = []
    if cue := _GLOBAL_CUES.search(question):
        high.append(cue.group(0).lower())
    if category := asked_category(question):
        high.append(LABELS.get(category, category).lower())
    if mine := _MINE.search(question):
        high.append(mine.group(0).lower())
    return Keywords(low, tuple(dict.fromkeys(high)))


def choose_mode(question: str, nlp: Language) -> ModeChoice:
    """``auto``: the dual-level keywords decide. A global cue with no low-level
    keyword (no entity of its own) is a question about the collection: global
    search over the tag tree's summaries. Anything naming an entity gets local
    evidence through U-Retrieval, whose tree prior carries the high level."""
    kw = keywords(question, nlp)
    cue = _GLOBAL_CUES.search(question)
    if cue and not kw.low:
        return ModeChoice("global", f"global: the question asks about the collection "
                          f"({cue.group(0)!r}) and names no entity of its own", kw)
    if cue:
        return ModeChoice("u-retrieval", f"u-retrieval: a global cue ({cue.group(0)!r}) but "
                          f"the question names {', '.join(kw.low[:3])}", kw)
    return ModeChoice("u-retrieval", "u-retrieval: a question about specific entities"
                      if kw.low else "u-retrieval: no global cue", kw)


def asked_category(question: str) -> str | None:
    low = question.lower()
    for category, cues in _CATEGORY_CUES.items():
        if any(cue in low for cue in cues):
            return category
    return None


def global_answer(question: str, store: GraphStore, tree: TagTree, embedder: Embedder,
                  config: RetrievalConfig) -> Answer:
    layer = Layer.USER if _MINE.search(question) else None
    leaves = [n for n in tree.nodes.values() if n.level == 0]
    if layer is not None:
        user_chunks = {c.id for d in store.document_ids(Layer.USER) for c in store.chunks(d)}
        leaves = [n for n in leaves if n.id in user_chunks]
    category = asked_category(question)
    points: list[tuple[str, list[str]]] = []  # (term or theme, chunk ids naming it)
    if category is not None:
        naming: dict[str, list[str]] = {}
        shown: dict[str, str] = {}
        for leaf in sorted(leaves, key=lambda n: n.id):
            for term in leaf.summary.tags.get(category, []):
                key = term.lower()
                shown.setdefault(key, term)
                naming.setdefault(key, []).append(leaf.id)
        ranked = sorted(naming, key=lambda k: (-len(naming[k]), k))[:CATEGORY_POINTS]
        points = [(shown[k], naming[k]) for k in ranked]
    else:
        q = embedder.embed_query([question])[0]
        in_scope = {n.id for n in leaves}
        groups = [n for n in tree.nodes.values() if n.level >= 1
                  and set(tree.leaves_under(n.id)) & in_scope]
        top = max((n.level for n in groups), default=0)
        candidates = [n for n in groups if n.level == top] or groups
        candidates.sort(key=lambda n: (-(float(tree.vectors[n.id] @ q)
                                         + 0.02 * math.log1p(len(tree.leaves_under(n.id)))),
                                       n.id))
        for node in candidates[:POINTS]:
            members = [c for c in tree.leaves_under(node.id) if c in in_scope]
            terms = [t for c in THEME_CATEGORIES for t in node.summary.tags.get(c, [])][:5]
            if not terms:
                continue
            best = sorted(members, key=lambda c: -float(tree.vectors[c] @ tree.vectors[node.id]))
            points.append((", ".join(dict.fromkeys(terms)), best))
    citations: list[Citation] = []
    lines: list[str] = []
    named = _how_named(store, layer, {label.lower() for label, _ in points}) if category \
        else {}
    for label, chunk_ids in points:
        docs = {store.chunk(c).document_id for c in chunk_ids}
        how = named.get(label.lower())
        terms = ([label, *sorted(how.surfaces)] if how else [label]) if category \
            else label.split(", ")
        cite = _cite_naming(store, chunk_ids, terms, len(citations) + 1)
        if cite is not None:
            if how is not None:
                cite.flags = how.flags_within(label, cite.document_id, cite.start, cite.end)
            citations.append(cite)
        ref = f" [{cite.n}]" if cite is not None else ""
        flags = f" ({'; '.join(cite.flags)})" if cite is not None and cite.flags else ""
        what = f"{label} — in {len(docs)} document(s)" if category else label
        quote = f": \"{cite.quote}\"" if cite is not None else ""
        lines.append(f"- {what}{quote}{ref}{flags}")
    heading = (f"{LABELS.get(category, category)} across "
               f"{'your documents' if layer else 'the collection'}" if category
               else f"main themes of {'your documents' if layer else 'the collection'}")
    text = (f"{heading[0].upper()}{heading[1:]}:\n" + "\n".join(lines)) if lines else ""
    note = (f"global: {len(leaves)} chunks in scope"
            + (", the user layer only" if layer else "")
            + (f"; terms of {LABELS.get(category, category)} counted" if category
               else "; top groups of the tag tree"))
    return Answer(question=question, mode="global", text=text, citations=citations, facts=[],
                  definitions=[], trace=Trace(retrieved_chunks=[c.chunk_id for c in citations],
                                              note=note))


@dataclass
class _Naming:
    """How the documents name one term: its surface forms, and (user layer) its
    mentions with their qualifiers."""

    surfaces: set[str]
    mentions: list[Mention]

    def flags_within(self, name: str, document_id: str, start: int, end: int) -> list[str]:
        return list(dict.fromkeys(
            f"{name}: {flag}" for m in self.mentions if m.document_id == document_id
            and start <= m.start and m.end <= end for flag in m.qualifiers.flags()))


def _how_named(store: GraphStore, layer: Layer | None, names: set[str]) -> dict[str, _Naming]:
    """The surface forms (and the user layer's mentions) of the entities named
    ``names``, so a point is cited where its text names it in any wording."""
    out: dict[str, _Naming] = {}
    for lay in ([layer] if layer else [Layer.USER, Layer.LITERATURE]):
        if lay is Layer.USER:  # the notes: few entities, with their qualifiers
            for e in store.entities(lay):
                if (key := e.name.lower()) in names:
                    got = out.setdefault(key, _Naming(set(), []))
                    got.surfaces |= {m.text for m in e.mentions}
                    got.mentions += e.mentions
        else:
            for b in store.iter_entities(lay):
                if (key := b.name.lower()) in names:
                    out.setdefault(key, _Naming(set(), [])).surfaces |= set(b.surface)
    return out


def _cite_naming(store: GraphStore, chunk_ids: list[str], terms: list[str], n: int
                 ) -> Citation | None:
    """A citation of the sentence (among the first chunks) that names the most of
    ``terms``; headings and title lines are passed over."""
    best: tuple[int, Citation] | None = None
    wanted = [t.lower() for t in terms if t]
    for chunk_id in chunk_ids[:20]:
        chunk = store.chunk(chunk_id)
        for s, e in sentence_spans(chunk.text):
            sentence = chunk.text[s:e]
            hits = sum(t in sentence.lower() for t in wanted)
            if not hits or is_heading(sentence) or (best is not None and hits <= best[0]):
                continue
            doc = store.document(chunk.document_id)
            start, end = chunk.start + s, chunk.start + e
            best = (hits, Citation(n=n, document_id=doc.id, title=doc.title, source=doc.source,
                                   layer=doc.layer, chunk_id=chunk.id, start=start, end=end,
                                   quote=doc.text[start:end]))
    return best[1] if best is not None else None
