"""The second two-hop set: chains over every gold relation type, several wordings,
the bridge named or not, families and the cross-document flags."""

from __future__ import annotations

from pathlib import Path

from medkg.evaluation.chains import crosses_documents, generate_chains, phrase, plural
from medkg.evaluation.multihop import gold_index, read_corpora

# Written for this test. Offsets are into "title abstract". Ibuprofen causes
# bronchospasm (1); salbutamol treats bronchospasm (2, which never names
# ibuprofen); ibuprofen binds PTGS2 (3), which is associated with asthma (4).
CORPUS = """\
1|t|Ibuprofen and the airways.
1|a|Ibuprofen provoked bronchospasm.
1\t0\t9\tIbuprofen\tChemical\tD007052
1\t27\t36\tIbuprofen\tChemical\tD007052
1\t46\t58\tbronchospasm\tDisease\tD001986
1\tCID\tD007052\tD001986

2|t|Salbutamol works.
2|a|Salbutamol relieved bronchospasm quickly.
2\t0\t10\tSalbutamol\tChemicalEntity\tD000420
2\t18\t28\tSalbutamol\tChemicalEntity\tD000420
2\t38\t50\tbronchospasm\tDiseaseOrPhenotypicFeature\tD001986
2\tNegative_Correlation\tD000420\tD001986\tNovel

3|t|Ibuprofen binds.
3|a|Ibuprofen bound PTGS2 tightly.
3\t0\t9\tIbuprofen\tChemicalEntity\tD007052
3\t17\t26\tIbuprofen\tChemicalEntity\tD007052
3\t33\t38\tPTGS2\tGeneOrGeneProduct\t5743
3\tBind\tD007052\t5743\tNovel

4|t|PTGS2 in asthma.
4|a|PTGS2 was raised in asthma.
4\t0\t5\tPTGS2\tGeneOrGeneProduct\t5743
4\t17\t22\tPTGS2\tGeneOrGeneProduct\t5743
4\t36\t42\tasthma\tDiseaseOrPhenotypicFeature\tD001249
4\tAssociation\t5743\tD001249\tNovel
"""


def _setup(tmp_path: Path):  # type: ignore[no-untyped-def]
    path = tmp_path / "corpus.pubtator"
    path.write_text(CORPUS, encoding="utf-8")
    docs = read_corpora([path])
    return docs, generate_chains(docs)


def test_every_relation_type_makes_chains_in_three_wordings(tmp_path: Path) -> None:
    docs, questions = _setup(tmp_path)
    families = {q.template for q in questions}
    # ibuprofen -causes-> bronchospasm <-treats- salbutamol; ibuprofen -binds-> PTGS2 -> asthma
    assert {"chemical-disease-chemical", "chemical-disease-chemical (bridge named)",
            "chemical-gene-disease", "chemical-gene-disease (bridge named)"} <= families
    chain = [q for q in questions if q.template.startswith("chemical-disease-chemical")
             and q.start == "D007052"]
    assert len(chain) == 3 and len({q.question for q in chain}) == 3
    unnamed = [q for q in chain if "named" not in q.template]
    named = next(q for q in chain if "named" in q.template)
    for q in unnamed:
        assert "Ibuprofen" in q.question and "bronchospasm" not in q.question
        assert [a.name for a in q.answers] == ["Salbutamol"]
    assert "bronchospasm" in named.question and named.bridges == ("D001986",)
    (answer,) = named.answers
    # evidence: salbutamol's mentions in document 2, which never names ibuprofen
    assert {(e.document, e.start) for e in answer.evidence} == {("2", 0), ("2", 18)}
    assert answer.cross_document
    assert crosses_documents(named, gold_index(docs))


def test_the_same_corpus_gives_the_same_questions(tmp_path: Path) -> None:
    _, first = _setup(tmp_path)
    _, second = _setup(tmp_path)
    assert [(q.id, q.question) for q in first] == [(q.id, q.question) for q in second]
    assert len({q.id for q in first}) == len(first)


def test_verb_phrases_agree_with_their_subject() -> None:
    assert plural("is treated with") == "are treated with"
    assert plural("inhibits") == "inhibit" and plural("can cause") == "can cause"
    assert plural("binds to") == "bind to" and plural("predisposes to") == "predispose to"
    assert plural("increases the activity of") == "increase the activity of"
    assert phrase("Positive_Correlation", "chemical", "disease", 0) == "can cause"
    assert phrase("Bind", "gene", "gene", 0) == "binds"  # any kinds
    assert phrase("Unknown_Type", "gene", "gene", 0) == "is associated with"
