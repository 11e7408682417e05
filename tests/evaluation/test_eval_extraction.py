from pathlib import Path

from medkg.evaluation.extraction import ExtractionReport, evaluate
from medkg.ontology.index import ConceptIndex

GOLD = """1|t|Lisinopril can cause angioedema.
1|a|Lisinopril also lowers blood pressure; metformin is unrelated.
1\t0\t10\tLisinopril\tChemical\tD017706
1\t21\t31\tangioedema\tDisease\tD000799
1\t33\t43\tLisinopril\tChemical\tD017706
1\t72\t81\tmetformin\tChemical\tD008687
1\tCID\tD017706\tD000799
"""


def _evaluate(gold: str, tmp_path: Path, nlp: object, seed_concepts: list) -> ExtractionReport:
    path = tmp_path / "gold.txt"
    path.write_text(gold)
    return evaluate(path, ConceptIndex(seed_concepts), nlp)  # type: ignore[arg-type]


def test_scores_entities_normalisation_and_relations(
    tmp_path: Path, nlp: object, seed_concepts: list
) -> None:
    report = _evaluate(GOLD, tmp_path, nlp, seed_concepts)
    assert report.documents == 1
    # All four gold mentions are found with the right type; nothing else is predicted
    # as Chemical or Disease ("blood pressure" is not a seed term).
    assert report.entities.by_type["Chemical"].r == 1.0
    assert report.entities.by_type["Disease"].r == 1.0
    assert report.entities.micro.p == 1.0
    # The seed vocabulary cross-references MeSH, so normalisation is scored and right.
    assert report.normalization.scored_mentions == 4
    assert report.normalization.accuracy == 1.0
    # "Lisinopril can cause angioedema" is the gold CID pair.
    assert (report.relations.p, report.relations.r) == (1.0, 1.0)


VARIANTS = """2|t|The BRAF V600E mutation in melanoma.
2\t9\t14\tV600E\tSequenceVariant\tp|SUB|V|600|E
"""


def test_variants_are_scored_as_the_corpus_variant_type(
    tmp_path: Path, nlp: object, seed_concepts: list
) -> None:
    report = _evaluate(VARIANTS, tmp_path, nlp, seed_concepts)
    assert report.entities.by_type["SequenceVariant"].f1 == 1.0
