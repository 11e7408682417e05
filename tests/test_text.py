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
        "# Heading", "First sentence.", "Second one?", "Third!", "Paragraph two line one",
        "- item one", "- item two", "Plan: start metformin.", "Done.",
    ]


def test_sentence_spans_within_a_range_use_absolute_offsets() -> None:
    start = TEXT.index("Second")
    spans = sentence_spans(TEXT, start, TEXT.index("Paragraph"))
    assert [TEXT[s:e] for s, e in spans] == ["Second one?", "Third!"]


def _sentences(text: str) -> list[str]:
    spans = sentence_spans(text)
    assert all(text[s:e] == text[s:e].strip() for s, e in spans)
    return [text[s:e] for s, e in spans]


def test_abbreviations_do_not_end_sentences() -> None:
    text = ("Drugs, e.g. aspirin, i.e. a salicylate, were given b.i.d. for 3 days. "
            "Smith et al. showed that E. coli grew (see Fig. 2). Placebo vs. drug arms. "
            "The infusion lasted 30 min. Patients recovered.")
    assert _sentences(text) == [
        "Drugs, e.g. aspirin, i.e. a salicylate, were given b.i.d. for 3 days.",
        "Smith et al. showed that E. coli grew (see Fig. 2).", "Placebo vs. drug arms.",
        "The infusion lasted 30 min.", "Patients recovered.",
    ]


def test_decimals_doses_and_lower_case_words_keep_a_sentence_whole() -> None:
    text = ("HR was 1.5 (95% CI 1.2-1.9); 2.5 mg/kg i.v. twice. Approx. five patients. "
            "mRNA levels rose. p53 was mutated.")
    assert _sentences(text) == [
        "HR was 1.5 (95% CI 1.2-1.9); 2.5 mg/kg i.v. twice.", "Approx. five patients.",
        "mRNA levels rose.", "p53 was mutated.",
    ]


def test_lists_and_section_headers_break_lines() -> None:
    text = "BACKGROUND: Gout is common.\nMETHODS: We gave allopurinol.\n1. dose one\n2. dose two"
    assert _sentences(text) == ["BACKGROUND: Gout is common.", "METHODS: We gave allopurinol.",
                                "1. dose one", "2. dose two"]


def test_new_breaks_still_match_re_split() -> None:
    text = "Given e.g. i.v. doses. Then Fig. 3 shows it. Done."
    assert [text[s:e] for s, e in split_pieces(text)] == re.split(SENTENCE_BREAK, text)


def test_a_title_line_is_its_own_sentence() -> None:
    """A quote begins where its sentence begins, never with the title glued on."""
    from medkg.text import sentence_spans

    def split(text: str) -> list[str]:
        return [text[s:e] for s, e in sentence_spans(text)]

    assert split("Warfarin pharmacology and interactions\nWarfarin is a vitamin K "
                 "antagonist. It interacts with many drugs.") == [
        "Warfarin pharmacology and interactions", "Warfarin is a vitamin K antagonist.",
        "It interacts with many drugs."]
    # not a title: a line left open, a sentence, or too long
    assert len(split("Metformin is given to patients with\nChronic kidney disease.")) == 1
    assert len(split("Metformin treats diabetes, and\nLisinopril lowers pressure.")) == 1
    long_line = " ".join(["word"] * 13)
    assert len(split(f"{long_line}\nNext sentence here.")) == 1
    # only at the start of the text
    assert split("First sentence. A line\nContinues here.") == [
        "First sentence.", "A line\nContinues here."]
