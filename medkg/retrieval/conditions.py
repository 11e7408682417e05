"""The conditions an answer holds under, from the triples it used (KGCaRe).

A graph answer is only as true as its qualifiers: a fact may be negated,
uncertain or hypothetical, shown in a population only ("in children"); a
therapy the answer names may be contraindicated somewhere or cause harm; two
sources may disagree. Each becomes a :class:`Condition` with the citations
of the triples behind it, so the reader sees when the answer holds, and where
the evidence conflicts it is shown as such, both sides cited, not averaged.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Iterable, Sequence

from medkg.model import Predicate, Triple
from medkg.retrieval.answer import Condition, ConditionKind
from medkg.retrieval.traverse import PREDICATE_WORDS

THERAPY = frozenset({Predicate.TREATS, Predicate.PREVENTS})
HARM = frozenset({Predicate.HAS_ADVERSE_EFFECT, Predicate.CAUSES})
ORDER: tuple[ConditionKind, ...] = ("conflicting evidence", "contraindication",
                                    "adverse effect", "population", "negated", "uncertain",
                                    "hypothetical")


def conditions(used: Sequence[Triple], pool: Iterable[Triple], subjects: Iterable[str],
               names: Callable[[str], str], cite: Callable[[Triple], list[int]],
               limit: int, asked: Iterable[Predicate] = ()) -> list[Condition]:
    """The conditions of an answer whose facts are ``used``; ``pool``: every triple
    the question gathered; ``subjects``: the question's own entities (a drug asked
    about is a therapy whose harms are conditions even without a ``treats`` fact);
    ``cite``: a triple's citation numbers; ``asked``: the predicates the question
    asks for (a question about side effects has them as its answer, not as its
    conditions). At most ``limit``, in ``ORDER``."""
    harms_asked = bool(HARM & set(asked))
    pool = list(pool)

    def plain(t: Triple) -> str:
        return f"{names(t.head)} {PREDICATE_WORDS[t.predicate]} {names(t.tail)}"

    def say(t: Triple) -> str:
        return f"not: {plain(t)}" if t.qualifiers.negated else plain(t)

    out: dict[tuple[ConditionKind, str], Condition] = {}

    def add(kind: ConditionKind, text: str, triples: Sequence[Triple]) -> None:
        refs = list(dict.fromkeys(n for t in triples for n in cite(t)))
        if refs and (kind, text) not in out:
            out[(kind, text)] = Condition(kind=kind, text=text,
                                          triple_ids=[t.id for t in triples], citations=refs)

    for t in used:
        q = t.qualifiers
        if q.negated:
            add("negated", f"{plain(t)}: the source states it does not", [t])
        if q.uncertain:
            add("uncertain", f"{say(t)}: stated as uncertain", [t])
        if q.hypothetical:
            add("hypothetical", f"{say(t)}: stated as a possibility, not an observation", [t])
        if q.population:
            add("population", f"{say(t)}: holds for {q.population}", [t])
    therapies = {t.head for t in used if t.predicate in THERAPY and not t.qualifiers.negated}
    therapies |= set(subjects)
    for t in pool:
        if t.head not in therapies or t.qualifiers.negated:
            continue
        if t.predicate is Predicate.CONTRAINDICATED_IN:
            add("contraindication", f"avoid {names(t.head)} in {names(t.tail)}", [t])
        elif t.predicate in HARM and not harms_asked:
            add("adverse effect", f"{names(t.head)} can cause {names(t.tail)}: weigh this "
                f"where {names(t.tail)} is a concern", [t])
    by_pair: dict[tuple[str, str], list[Triple]] = defaultdict(list)
    for t in pool:
        by_pair[(t.head, t.tail)].append(t)
    for pair in by_pair.values():
        for a in pair:
            for b in pair:
                if a.id >= b.id:
                    continue
                same = a.predicate == b.predicate and a.qualifiers.negated != b.qualifiers.negated
                opposite = ({a.predicate, b.predicate} & THERAPY and {a.predicate, b.predicate}
                            & HARM and not (a.qualifiers.negated or b.qualifiers.negated))
                if same or opposite:
                    first, second = sorted((a, b), key=lambda t: (t.qualifiers.negated, t.id))
                    add("conflicting evidence", f"the sources disagree: {say(first)}, "
                        f"but {say(second)}", [first, second])
    ranked = sorted(out.values(), key=lambda c: ORDER.index(c.kind))
    return ranked[:limit]
