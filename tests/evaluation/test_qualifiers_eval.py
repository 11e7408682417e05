"""ConText qualifier accuracy on the 38 sentences we wrote (benchmarks/data/qualifiers.tsv)."""

from medkg.evaluation.qualifiers import evaluate_qualifiers
from tests.conftest import REPO


def test_qualifier_accuracy(nlp: object) -> None:
    result = evaluate_qualifiers(REPO / "benchmarks" / "data" / "qualifiers.tsv", nlp)  # type: ignore[arg-type]
    assert result["sentences"] == 38
    # Per-qualifier accuracy; the figure is reported in the notes. A regression
    # below these floors fails the test.
    for flag in ("negated", "uncertain", "hypothetical", "historical", "experiencer"):
        assert result[flag] >= 0.85, (flag, result["misses"])
