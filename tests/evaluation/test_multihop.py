"""Two-hop and conditional questions from gold relations: chains, answers and
their evidence, the cross-document flag, and the scores."""

from __future__ import annotations

from pathlib import Path

from medkg.evaluation.multihop import found_at, generate, read_corpora, score, states

# Written for this test. Offsets are into "title abstract".
CORPUS = """\
1|t|Cisplatin and the kidney.
1|a|Cisplatin caused nephrotoxicity in rats.
1\t0\t9\tCisplatin\tChemical\tD002945
1\t26\t35\tCisplatin\tChemical\tD002945
1\t43\t57\tnephrotoxicity\tDisease\tD007674
1\tCID\tD002945\tD007674

2|t|Amifostine protects.
2|a|Amifostine reduced nephrotoxicity and caused hypotension.
2\t0\t10\tAmifostine\tChemical\tD004999
2\t21\t31\tAmifostine\tChemical\tD004999
2\t40\t54\tnephrotoxicity\tDiseaseOrPhenotypicFeature\tD007674
2\t66\t77\thypotension\tDiseaseOrPhenotypicFeature\tD007022
2\tNegative_Correlation\tD004999\tD007674\tNovel
2\tPositive_Correlation\tD004999\tD007022\tNovel

3|t|Cisplatin again.
3|a|Cisplatin with amifostine: nephrotoxicity was reduced.
3\t0\t9\tCisplatin\tChemical\tD002945
3\t17\t26\tCisplatin\tChemical\tD002945
3\t32\t42\tamifostine\tChemical\tD004999
3\t44\t58\tnephrotoxicity\tDisease\tD007674
3\tNegative_Correlation\tD004999\tD007674\tNovel
"""


def _questions(tmp_path: Path):  # type: ignore[no-untyped-def]
    path = tmp_path / "corpus.pubtator"
    path.write_text(CORPUS, encoding="utf-8")
    docs = read_corpora([path, path])  # a document read twice is kept once
    assert sorted(docs) == ["1", "2", "3"]
    return generate(docs)


def test_chains_of_gold_relations_become_questions(tmp_path: Path) -> None:
    questions = {q.template: q for q in _questions(tmp_path)}
    q = questions["drug-adverse-drug"]
    assert q.question == "Which drugs treat the conditions that Cisplatin can cause?"
    assert q.bridges == ("D007674",)  # nephrotoxicity: never named in the question
    (answer,) = q.answers
    assert answer.concept == "D004999" and answer.name == "Amifostine"
    # evidence: its mentions in the documents stating "amifostine treats nephrotoxicity"
    assert {(e.document, e.start) for e in answer.evidence} == {
        ("2", 0), ("2", 21), ("3", 32)}
    assert not answer.cross_document  # document 3 names cisplatin too
    back = questions["disease-drug-adverse"]
    assert back.question.startswith("Which adverse effects can the drugs used to treat")
    assert [a.name for a in back.answers] == ["hypotension"]
    assert not back.answers[0].cross_document  # document 2 names nephrotoxicity
    conditional = questions["treats-unless-causes"]
    assert conditional.question == ("What is Amifostine used to treat, and when should it be "
                                    "avoided?")
    assert [a.name for a in conditional.answers] == ["nephrotoxicity"]
    assert [c.name for c in conditional.conditions] == ["hypotension"]


def test_an_answer_only_other_documents_state_is_cross_document(tmp_path: Path) -> None:
    path = tmp_path / "corpus.pubtator"
    path.write_text(CORPUS.replace("3\tNegative_Correlation\tD004999\tD007674\tNovel\n", ""),
                    encoding="utf-8")
    q = next(q for q in generate(read_corpora([path])) if q.template == "drug-adverse-drug")
    # amifostine treats nephrotoxicity only in document 2, which never names cisplatin
    assert q.answers[0].cross_document
    assert {e.document for e in q.answers[0].evidence} == {"2"}


def test_scores_count_answers_found_in_the_top_chunks(tmp_path: Path) -> None:
    questions = [q for q in _questions(tmp_path)
                 if q.template in ("drug-adverse-drug", "treats-unless-causes")]
    where = {"a": ("1", 0, 60), "b": ("2", 0, 80), "c": ("3", 0, 60)}.get
    answer = next(q for q in questions if q.kind == "2-hop").answers[0]
    assert found_at(answer, ["a", "b"], where, 2) and not found_at(answer, ["a", "b"], where, 1)
    assert not found_at(answer, ["missing", "a"], where, 10)
    report = score("m", questions, [["a", "b"], []],
                   ["", "Avoid it where hypotension is a concern [2]."], [10.0, 30.0], where)
    assert report.recall["recall@5"] == 1.0 and report.condition_stated == 1.0
    assert report.latency_ms == {"p50": 30.0, "p95": 30.0}
    none = score("m", questions, [["a"], []], ["", "hypotensive"], [1.0, 1.0], where)
    assert none.recall["recall@10"] == 0.0 and none.condition_stated == 0.0
    assert states(questions[1].conditions[0], "HYPOTENSION.")
