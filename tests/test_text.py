import re

from medkg.text import SENTENCE_BREAK, sentence_spans, split_pieces

TEXT = """# Heading
First sentence. Second one?  Third!

Paragraph two line one
- item one
- item two
Plan: start metformin. Done."""


def test_pieces_match_re_split_exactly() -> None:
    pieces = [TEXT[s:e] for s, e in split_pieces(TEXT)]
    assert pieces == re.split(SENTENCE_BREAK, TEXT)


def test_sentence_spans_are_trimmed_substrings() -> None:
    spans = sentence_spans(TEXT)
    texts = [TEXT[s:e] for s, e in spans]
    assert texts == [
        "# Heading\nFirst sentence.", "Second one?", "Third!", "Paragraph two line one",
        "- item one", "- item two", "Plan: start metformin.", "Done.",
    ]


def test_sentence_spans_within_a_range_use_absolute_offsets() -> None:
    start = TEXT.index("Second")
    spans = sentence_spans(TEXT, start, TEXT.index("Paragraph"))
    assert [TEXT[s:e] for s, e in spans] == ["Second one?", "Third!"]
