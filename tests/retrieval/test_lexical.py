"""The lexical index: biomedical tokens, BM25 order, incremental updates, and
question text that never reaches the FTS5 query syntax."""

from __future__ import annotations

from pathlib import Path

from medkg.retrieval.fusion import rrf
from medkg.retrieval.lexical import LexicalIndex, tokens


def test_biomedical_tokens_stay_whole_and_match_their_variants() -> None:
    assert {"il-6", "il6", "il", "6"} <= set(tokens("IL-6 levels"))
    assert {"cox-2", "cox2"} <= set(tokens("COX-2 inhibitors"))
    assert "brca1" in tokens("BRCA1 carriers")
    assert {"5-fu", "5fu", "fu"} <= set(tokens("5-FU and leucovorin"))
    assert "the" not in tokens("the dose of the drug")


def test_bm25_order_updates_and_deletes(tmp_path: Path) -> None:
    index = LexicalIndex(tmp_path / "lexical.sqlite")
    index.upsert([("a", "Metformin lowers glucose."),
                  ("b", "IL-6 rises in sepsis; IL-6 predicts mortality."),
                  ("c", "Sepsis is treated with antibiotics.")])
    assert [c for c, _ in index.search("IL6 in sepsis", 3)][:2] == ["b", "c"]
    index.upsert([("c", "Warfarin needs INR monitoring.")])  # replaced, not added
    assert len(index) == 3
    assert [c for c, _ in index.search("sepsis", 3)] == ["b"]
    index.delete(["b"])
    assert index.search("sepsis", 3) == [] and index.ids() == {"a", "c"}
    index.close()
    reopened = LexicalIndex(tmp_path / "lexical.sqlite")  # on disk
    assert reopened.ids() == {"a", "c"}


def test_hostile_query_text_is_only_words(tmp_path: Path) -> None:
    index = LexicalIndex(None)
    index.upsert([("a", "near drug interactions")])
    for hostile in ['" OR 1 --', "NEAR(a b) NOT", "chunks MATCH '*'", "{col}: x*", '"""']:
        index.search(hostile, 5)  # never an FTS5 syntax error
    assert [c for c, _ in index.search('drug" OR "x', 5)] == ["a"]


def test_rrf_fuses_by_rank_and_respects_weights() -> None:
    fused = rrf({"a": ["x", "y", "z"], "b": ["y", "z"]}, {"a": 1.0, "b": 1.0}, k=60)
    assert [c for c, _ in fused] == ["y", "z", "x"]
    assert [c for c, _ in rrf({"a": ["x"], "b": ["y"]}, {"a": 1.0, "b": 0.0})] == ["x"]


def test_contains_finds_a_term_in_any_inflection_and_nothing_else(tmp_path: Path) -> None:
    """The check behind "No document in this workspace mentions X"."""
    index = LexicalIndex(tmp_path / "lexical.sqlite")
    index.upsert([("c1", "Atherosclerotic plaques were treated with PPIs and statins."),
                  ("c2", "Atopic eczema in children.")])
    assert index.contains("atherosclerosis") and index.contains("PPI")
    assert index.contains("statin") and index.contains("atopic eczema")
    assert not index.contains("dupilumab") and not index.contains("atopic dermatitis")
    index.restrict({"c2"})
    assert not index.contains("atherosclerosis")
