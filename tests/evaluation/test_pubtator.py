from pathlib import Path

import pytest

from medkg.errors import DocumentError
from medkg.evaluation.pubtator import read_pubtator
from tests.conftest import shared_path

SAMPLE = """1|t|Lithium toxicity.
1|a|A newborn had heart failure.
1\t0\t7\tLithium\tChemical\tD008094
1\t8\t16\ttoxicity\tDisease\tD064420|D000001
1\t32\t45\theart failure\tDisease\t-1
1\tCID\tD008094\tD064420

2|t|Second.
2|a|
"""


def test_reads_documents_mentions_and_relations(tmp_path: Path) -> None:
    path = tmp_path / "s.txt"
    path.write_text(SAMPLE)
    first, second = list(read_pubtator(path))
    assert first.text == "Lithium toxicity. A newborn had heart failure."
    for m in first.mentions:
        assert first.text[m.start : m.end] == m.text
    assert first.mentions[1].ids == ("D064420", "D000001")
    assert first.mentions[2].ids == ()
    assert first.relations[0].type == "CID"
    assert second.pmid == "2" and second.mentions == []


def test_bad_line_is_named(tmp_path: Path) -> None:
    path = tmp_path / "s.txt"
    path.write_text("1|t|T\n1\tonly-two\n")
    with pytest.raises(DocumentError, match="line 2"):
        list(read_pubtator(path))


def test_bc5cdr_dev_offsets_hold() -> None:
    docs = list(read_pubtator(shared_path("eval", "bc5cdr", "CDR_DevelopmentSet.PubTator.txt")))
    assert len(docs) == 500
    assert all(d.text[m.start : m.end] == m.text for d in docs for m in d.mentions)
