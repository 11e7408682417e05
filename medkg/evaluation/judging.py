"""Whether one asserted relation is right, by a PubTator file's gold relations.

The document-level relation score (``extraction.py``) counts a predicted pair
when it is a gold pair of any type. To measure what a statement *says* — a
treatment, an adverse effect — the predicate must fit the gold relation's type
too. The rule, per predicate:

- ``treats``, ``prevents``, ``contraindicated_in`` (a therapy and a disorder):
  right when the gold pair is a BioRED ``Negative_Correlation`` (the chemical
  lowers the disease); a ``Positive_Correlation`` of the pair means the text
  says the opposite — the treats/causes confusion.
- ``has_adverse_effect``, ``causes``: right when the gold pair is a BC5CDR
  ``CID`` or a BioRED ``Positive_Correlation`` or ``Association``.
- ``associated_with``, ``interacts_with``: right when the pair is a gold pair
  of any type.

A relation is *judged* only where the file can say it is wrong: its predicate
has a gold type the file annotates (BC5CDR annotates only CID, so a ``treats``
there is not judged), and its two ends are of groups the corpora relate (a
therapy or a harm: a chemical and a disease). Others
(``has_symptom``, ``location_of``, ``is_a``, ``diagnoses``) have no gold in
these corpora and are never judged: their confidence is not calibrated.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from medkg.model import Predicate

THERAPY = frozenset({Predicate.TREATS, Predicate.PREVENTS, Predicate.CONTRAINDICATED_IN})
HARM = frozenset({Predicate.HAS_ADVERSE_EFFECT, Predicate.CAUSES})
ANY_PAIR = frozenset({Predicate.ASSOCIATED_WITH, Predicate.INTERACTS_WITH})
# The gold types that make a predicate right; the gold types a file must annotate
# for the predicate to be judged at all.
RIGHT_TYPES: dict[frozenset[Predicate], frozenset[str]] = {
    THERAPY: frozenset({"Negative_Correlation"}),
    HARM: frozenset({"CID", "Positive_Correlation", "Association"}),
}
JUDGED_BY: dict[frozenset[Predicate], frozenset[str]] = {
    THERAPY: frozenset({"Negative_Correlation"}),
    HARM: frozenset({"CID", "Positive_Correlation"}),
    # BC5CDR's CID alone cannot judge an association: a pair it leaves out may
    # still be associated (a treatment, say).
    ANY_PAIR: frozenset({"Association", "Positive_Correlation", "Negative_Correlation",
                         "Bind", "Drug_Interaction"}),
}
# The pairs of semantic groups the corpora relate (BioRED: chemical-disease,
# gene-disease, chemical-gene, gene-gene, chemical-chemical; BC5CDR: chemical-
# disease). A disease "caused by" a disease is never a gold pair: not judged.
CHEMICAL_DISEASE = frozenset({"CHEM", "DISO"})
RELATED_GROUPS = frozenset({CHEMICAL_DISEASE, frozenset({"GENE", "DISO"}),
                            frozenset({"CHEM", "GENE"}), frozenset({"GENE"}),
                            frozenset({"CHEM"})})


def _family(predicate: Predicate) -> frozenset[Predicate] | None:
    return next((f for f in JUDGED_BY if predicate in f), None)


def judgeable(predicate: Predicate, groups: tuple[str, str], file_types: frozenset[str]
              ) -> bool:
    """Whether a file annotating ``file_types`` can say if this relation is wrong."""
    family = _family(predicate)
    if family is None or not JUDGED_BY[family] & file_types:
        return False
    pair = frozenset(groups)
    return pair == CHEMICAL_DISEASE if family in RIGHT_TYPES else pair in RELATED_GROUPS


def is_right(predicate: Predicate, pair_types: Iterable[str]) -> bool:
    """Whether a relation whose pair has these gold types (empty: not a gold pair)
    states what the gold says."""
    types = set(pair_types)
    family = _family(predicate)
    if family is None or not types:
        return False
    return family == ANY_PAIR or bool(types & RIGHT_TYPES[family])


def confusion(predicate: Predicate, pair_types: Iterable[str]) -> bool:
    """A therapy asserted where the gold says the chemical raises the disease, or
    a harm where the gold says it lowers it (and says nothing else)."""
    types = set(pair_types)
    if predicate in THERAPY:
        return "Positive_Correlation" in types and "Negative_Correlation" not in types
    if predicate in HARM:
        return "Negative_Correlation" in types and not types & RIGHT_TYPES[HARM]
    return False


def gold_types(relations: Iterable[tuple[str, str, str]]) -> Mapping[frozenset[str], set[str]]:
    """(type, first id, second id) rows -> pair -> its gold types."""
    out: dict[frozenset[str], set[str]] = {}
    for kind, first, second in relations:
        out.setdefault(frozenset((first, second)), set()).add(kind)
    return out


def expected_calibration_error(scored: list[tuple[float, bool]], bins: int = 10) -> float:
    """Mean |confidence - share right| over equal-width confidence bins, weighted
    by how many predictions each holds."""
    if not scored:
        return 0.0
    total = 0.0
    for b in range(bins):
        lo, hi = b / bins, (b + 1) / bins
        inside = [(c, y) for c, y in scored if lo <= c < hi or (b == bins - 1 and c == 1.0)]
        if inside:
            mean_c = sum(c for c, _ in inside) / len(inside)
            share = sum(1 for _, y in inside if y) / len(inside)
            total += len(inside) * abs(mean_c - share)
    return round(total / len(scored), 4)
