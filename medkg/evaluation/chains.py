"""A second two-hop question set, built differently from :mod:`.multihop`'s templates.

:mod:`medkg.evaluation.multihop` asks four fixed questions over four relation
chains. A retrieval tuned on them can learn the templates rather than the
chaining. This set is built from *every* gold relation type BioRED annotates
(``Association``, ``Positive_Correlation``, ``Negative_Correlation``, ``Bind``,
``Cotreatment``, ``Comparison``, ``Drug_Interaction``; BC5CDR's ``CID`` as a
positive correlation) between chemicals, diseases, genes and sequence
variants, in either direction:

- a *chain* is a start concept S, a first relation (type, bridge kind) and a
  second relation (type, answer kind); its bridges are every concept of that
  kind S has the first relation with, its answers every concept of the answer
  kind a bridge has the second relation with (neither S nor a bridge);
- each chain is asked in two wordings that do not name the bridge, drawn from
  several question frames and several verb phrases per relation type and
  direction ("Which drugs reverse the disorders that X may induce?", "X can
  cause certain conditions; which substances counteract those conditions?"),
  and once naming one of its bridges ("Which drugs treat the bronchospasm that
  ibuprofen can cause?"), whose answers are then that bridge's alone;
- a chain *crosses documents* when no document states both of its relations;
  an answer is cross-document as in :mod:`.multihop` (no document stating its
  second relation mentions S).

A question's ``template`` is its *family*: the kinds along the chain
("chemical-disease-chemical"), so recall can be reported per family.
Answers, evidence and scoring are :mod:`.multihop`'s (``HopQuestion``,
``score``), so both sets are measured by one scorer.
"""

from __future__ import annotations

import hashlib
from collections import defaultdict
from dataclasses import dataclass

from medkg.evaluation.multihop import GoldIndex, HopQuestion, Kind, gold_index, question_id
from medkg.evaluation.pubtator import PubTatorDocument

NOUNS: dict[Kind, tuple[tuple[str, str], ...]] = {  # (singular, plural)
    "chemical": (("drug", "drugs"), ("substance", "substances"), ("compound", "compounds")),
    "disease": (("condition", "conditions"), ("disease", "diseases"),
                ("disorder", "disorders")),
    "gene": (("gene", "genes"), ("protein", "proteins")),
    "variant": (("variant", "variants"), ("mutation", "mutations")),
}

# Verb phrases with the subject first: (relation type, subject kind, object kind).
# A same-kind or unlisted pair falls back to ("*", "*") of its type.
PHRASES: dict[tuple[str, str, str], tuple[str, ...]] = {
    ("Positive_Correlation", "chemical", "disease"): ("can cause", "may induce",
                                                       "can lead to"),
    ("Positive_Correlation", "disease", "chemical"): ("can be caused by",
                                                       "may be induced by"),
    ("Negative_Correlation", "chemical", "disease"): ("treats", "protects against",
                                                       "counteracts"),
    ("Negative_Correlation", "disease", "chemical"): ("is treated with", "responds to"),
    ("Positive_Correlation", "chemical", "gene"): ("increases the activity of",
                                                   "upregulates"),
    ("Positive_Correlation", "gene", "chemical"): ("is upregulated by", "is induced by"),
    ("Negative_Correlation", "chemical", "gene"): ("inhibits", "downregulates"),
    ("Negative_Correlation", "gene", "chemical"): ("is inhibited by", "is suppressed by"),
    ("Positive_Correlation", "gene", "disease"): ("is implicated in", "contributes to"),
    ("Positive_Correlation", "disease", "gene"): ("involves", "is driven by"),
    ("Negative_Correlation", "gene", "disease"): ("protects against",
                                                  "is reduced in"),
    ("Negative_Correlation", "disease", "gene"): ("is linked to lower levels of",),
    ("Positive_Correlation", "variant", "disease"): ("predisposes to",
                                                     "raises the risk of"),
    ("Positive_Correlation", "disease", "variant"): ("is linked to",),
    ("Positive_Correlation", "*", "*"): ("is positively correlated with",),
    ("Negative_Correlation", "*", "*"): ("is negatively correlated with",),
    ("Association", "*", "*"): ("is associated with", "is linked to", "is related to"),
    ("Bind", "*", "*"): ("binds", "binds to"),
    ("Cotreatment", "*", "*"): ("is given together with", "is combined with"),
    ("Comparison", "*", "*"): ("is compared with",),
    ("Drug_Interaction", "*", "*"): ("interacts with",),
}

# {S} the start's name, {v1} its relation to the bridges (S the subject), {B}/{Bs} the
# bridge kind, {As} the answer kind, {v2} the answers' relation to the bridges (the
# answers the subject, plural), {bridge} a named bridge.
UNNAMED = (
    "Which {As} {v2} the {Bs} that {S} {v1}?",
    "{S} {v1} certain {Bs}; which {As} {v2} those {Bs}?",
    "What {As} {v2} {Bs} that {S} {v1}?",
    "Considering the {Bs} that {S} {v1}: which {As} {v2} them?",
)
NAMED = (
    "Which {As} {v2} the {bridge} that {S} {v1}?",
    "{S} {v1} {bridge}. What {As} {v2} it?",
)


def phrase(relation: str, subject: Kind, obj: Kind, pick: int) -> str:
    """A verb phrase for ``subject relation obj`` (singular subject)."""
    options = PHRASES.get((relation, subject, obj)) or PHRASES.get((relation, "*", "*"))
    if options is None:
        options = PHRASES[("Association", "*", "*")]
    return options[pick % len(options)]


def plural(verb_phrase: str) -> str:
    """The phrase for a plural subject: "is treated with" -> "are treated with",
    "inhibits" -> "inhibit"; "can cause" stays."""
    first, _, rest = verb_phrase.partition(" ")
    if first == "is":
        first = "are"
    elif first == "has":
        first = "have"
    elif first.endswith("es") and first[:-2].endswith(("ss", "sh", "ch", "x")):
        first = first[:-2]
    elif first.endswith("s") and not first.endswith("ss"):
        first = first[:-1]
    return f"{first} {rest}".strip()


@dataclass(frozen=True)
class _Link:
    other: str
    relation: str
    docs: frozenset[str]


def _links(c: GoldIndex) -> dict[str, list[_Link]]:
    """Every concept's gold relations, both directions."""
    out: dict[str, list[_Link]] = defaultdict(list)
    for (a, relation, b), docs in sorted(c.relations.items()):
        out[a].append(_Link(b, relation, frozenset(docs)))
        out[b].append(_Link(a, relation, frozenset(docs)))
    return out


def _pick(*parts: str) -> int:
    return int(hashlib.sha256("\x1f".join(parts).encode()).hexdigest()[:8], 16)


def generate_chains(documents: dict[str, PubTatorDocument], *, max_answers: int = 8,
                    max_bridges: int = 4, per_family: int = 4) -> list[HopQuestion]:
    """The chain questions of a corpus (see the module docstring): at most
    ``per_family`` chains per family, chosen by a hash (the same corpus always
    gives the same set), each asked three ways."""
    c = gold_index(documents)
    links = _links(c)
    chains: dict[str, list[HopQuestion]] = defaultdict(list)
    for start in sorted(links):
        kind_s = c.kind[start]
        if start not in c.names or len(c.name(start)) < 3:
            continue
        first: dict[tuple[str, Kind], dict[str, set[str]]] = defaultdict(
            lambda: defaultdict(set))
        for link in links[start]:
            first[(link.relation, c.kind[link.other])][link.other] |= link.docs
        for (rel1, kind_b), bridges in sorted(first.items()):
            if len(bridges) > max_bridges:
                continue
            second: dict[tuple[str, Kind], dict[str, dict[str, set[str]]]] = defaultdict(
                lambda: defaultdict(lambda: defaultdict(set)))
            for b in bridges:
                for link in links[b]:
                    if link.other == start or link.other in bridges or link.other not in c.names:
                        continue
                    second[(link.relation, c.kind[link.other])][link.other][b] |= link.docs
            for (rel2, kind_a), answers in sorted(second.items()):
                if not answers or len(answers) > max_answers:
                    continue
                family = f"{kind_s}-{kind_b}-{kind_a}"
                chains[family] += _questions(c, family, start, rel1, kind_b, bridges,
                                             rel2, kind_a, answers)
    out: list[HopQuestion] = []
    for family in sorted(chains):
        by_chain: dict[str, list[HopQuestion]] = defaultdict(list)
        for q in chains[family]:
            by_chain[q.id.split(":")[0]].append(q)
        for key in sorted(by_chain)[:per_family]:
            out += by_chain[key]
    return out


def _questions(c: GoldIndex, family: str, start: str, rel1: str, kind_b: Kind,
               bridges: dict[str, set[str]], rel2: str, kind_a: Kind,
               answers: dict[str, dict[str, set[str]]]) -> list[HopQuestion]:
    """One chain's three questions: two wordings without the bridge, one naming it."""
    key = question_id("chain", start, rel1, kind_b, rel2, kind_a)
    kind_s = c.kind[start]
    out: list[HopQuestion] = []
    frames = sorted(range(len(UNNAMED)), key=lambda i: _pick(key, "frame", str(i)))[:2]
    for n, frame in enumerate(frames):
        pick = _pick(key, str(n))
        text = UNNAMED[frame].format(
            S=c.name(start), v1=phrase(rel1, kind_s, kind_b, pick),
            Bs=NOUNS[kind_b][pick % len(NOUNS[kind_b])][1],
            As=NOUNS[kind_a][(pick // 7) % len(NOUNS[kind_a])][1],
            v2=plural(phrase(rel2, kind_a, kind_b, pick // 3)))
        out.append(HopQuestion(
            f"{key}:{n}", "2-hop", family, text[0].upper() + text[1:], start,
            tuple(sorted(bridges)),
            tuple(c.gold(a, set().union(*by_bridge.values()), start)
                  for a, by_bridge in sorted(answers.items()))))
    # named: the bridge with the most answers (ties by id)
    bridge = max(sorted(bridges), key=lambda b: sum(b in x for x in answers.values()))
    own = {a: by_bridge[bridge] for a, by_bridge in sorted(answers.items())
           if bridge in by_bridge}
    pick = _pick(key, "named")
    text = NAMED[pick % len(NAMED)].format(
        S=c.name(start), v1=phrase(rel1, kind_s, kind_b, pick), bridge=c.name(bridge),
        As=NOUNS[kind_a][(pick // 7) % len(NOUNS[kind_a])][1],
        v2=plural(phrase(rel2, kind_a, kind_b, pick // 3)))
    out.append(HopQuestion(
        f"{key}:named", "2-hop", f"{family} (bridge named)", text[0].upper() + text[1:],
        start, (bridge,), tuple(c.gold(a, docs, start) for a, docs in own.items())))
    return out


def crosses_documents(question: HopQuestion, c: GoldIndex) -> bool:
    """Whether no document states both relations of the question's chain."""
    first = {d for (a, _, b), docs in c.relations.items()
             if question.start in (a, b) and set(question.bridges) & {a, b} for d in docs}
    second = {e.document for a in question.answers for e in a.evidence}
    return not first & second
