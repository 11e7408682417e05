"""The SAC-KG loop's parts on a small hand-made corpus: sentence retrieval,
the builtin generator and corrector, the verifier's decisions, levels, resume."""

from __future__ import annotations

from pathlib import Path

import pytest

from medkg.config import ConstructionConfig
from medkg.growth.corpus import SentenceCorpus, node_of
from medkg.growth.generator import BuiltinGenerator
from medkg.growth.loop import Growth, GrowthState
from medkg.model import Entity, Evidence, Layer, Mention, Predicate, Qualifiers, Triple
from medkg.rulehub.rules import load_rules
from medkg.rulehub.verify import Verifier

DOC = "doc-1"
TEXT = [
    "Metformin treats type 2 diabetes.",
    "Metformin can cause lactic acidosis.",
    "Type 2 diabetes causes neuropathy.",
    "Metformin is taken with food.",
    "Lactic acidosis is rare.",
]


def _entity(name: str, group: str, concept: str, mentions: list[tuple[int, str]]) -> Entity:
    return Entity(
        id=Entity.key_for(Layer.LITERATURE, name, group, concept), layer=Layer.LITERATURE,
        name=name, type=group, concept_ids=[concept],
        mentions=[Mention(chunk_id="c1", document_id=DOC, start=s, end=s + len(text), text=text)
                  for s, text in mentions])


def _spans() -> list[tuple[int, int, str]]:
    out, pos = [], 0
    for sentence in TEXT:
        out.append((pos, pos + len(sentence), sentence))
        pos += len(sentence) + 1
    return out


SPANS = _spans()


def _at(i: int, word: str) -> tuple[int, str]:
    start, _end, text = SPANS[i]
    return (start + text.lower().index(word.lower()), text[text.lower().index(word.lower()):]
            [: len(word)])


ENTITIES = {
    "metformin": _entity("Metformin", "CHEM", "MESH:D008687",
                         [_at(0, "Metformin"), _at(1, "Metformin"), _at(3, "Metformin")]),
    "diabetes": _entity("Diabetes Mellitus, Type 2", "DISO", "MESH:D003924",
                        [_at(0, "type 2 diabetes"), _at(2, "Type 2 diabetes")]),
    "acidosis": _entity("Acidosis, Lactic", "DISO", "MESH:D000140",
                        [_at(1, "lactic acidosis"), _at(4, "Lactic acidosis")]),
    "neuropathy": _entity("Neuropathy", "DISO", "MESH:D009422", [_at(2, "neuropathy")]),
}


def _triple(head: str, predicate: Predicate, tail: str, sentence: int) -> Triple:
    h, t = ENTITIES[head].id, ENTITIES[tail].id
    start, end, text = SPANS[sentence]
    return Triple(id=Triple.key_for(Layer.LITERATURE, h, predicate, t, Qualifiers()),
                  layer=Layer.LITERATURE, head=h, predicate=predicate, tail=t, confidence=0.7,
                  evidence=[Evidence(chunk_id="c1", document_id=DOC, start=start, end=end,
                                     quote=text)])


CANDIDATES = [
    _triple("metformin", Predicate.TREATS, "diabetes", 0),
    # The extractor got the direction wrong: a disease cannot treat a drug.
    _triple("acidosis", Predicate.HAS_ADVERSE_EFFECT, "metformin", 1),
    _triple("diabetes", Predicate.CAUSES, "neuropathy", 2),
]


@pytest.fixture()
def corpus(tmp_path: Path) -> SentenceCorpus:
    c = SentenceCorpus(tmp_path / "corpus.sqlite")
    c.replace_document(DOC, Layer.LITERATURE, [("c1", s, e, t) for s, e, t in SPANS],
                       ENTITIES.values(), CANDIDATES)
    return c


def _growth(corpus: SentenceCorpus, stored: list[Triple], *, verify: bool = True,
            levels: int = 2, dropped: list[str] | None = None,
            decide: object = None) -> Growth:
    cfg = ConstructionConfig(levels=levels, verify=verify, prune=decide is not None)
    by_id = {e.id: e for e in ENTITIES.values()}
    return Growth(
        corpus, by_id, BuiltinGenerator(corpus, by_id, load_rules()),
        Verifier(min_triples=cfg.min_triples) if verify else None,
        decide, cfg, store_triples=stored.extend, existing=list(stored),  # type: ignore[arg-type]
        record=lambda item, reason: (dropped if dropped is not None else []).append(reason),
        examples=lambda head: [])


def test_sentences_ranked_by_mentions_and_cut_to_length(corpus: SentenceCorpus) -> None:
    node = node_of(ENTITIES["metformin"])
    best = corpus.sentences_for(node, 10_000)
    assert [s.text for s in best] == [TEXT[0], TEXT[1], TEXT[3]]  # ties: corpus order
    assert len(corpus.sentences_for(node, 40)) == 1
    assert {t.id for t in corpus.candidates([s.id for s in best])} == {
        CANDIDATES[0].id, CANDIDATES[1].id}


def test_replacing_a_document_does_not_duplicate(corpus: SentenceCorpus) -> None:
    before = corpus.fingerprint()
    corpus.replace_document(DOC, Layer.LITERATURE, [("c1", s, e, t) for s, e, t in SPANS],
                            ENTITIES.values(), CANDIDATES)
    assert len(corpus) == len(TEXT)
    assert len(corpus.candidates(list(range(1, 100)))) == len(CANDIDATES)
    # The fingerprint is the content's: the same extraction again changes nothing (a
    # build resumed after a crash records what an uninterrupted one does), another
    # extraction or a delete changes it (the loop starts over).
    assert corpus.fingerprint() == before
    corpus.replace_document(DOC, Layer.LITERATURE, [("c1", s, e, t) for s, e, t in SPANS],
                            ENTITIES.values(), CANDIDATES[:2])
    assert corpus.fingerprint() != before
    corpus.delete_document(DOC)
    assert len(corpus) == 0 and corpus.sentences_for(node_of(ENTITIES["metformin"]), 99) == []


def test_loop_corrects_reversed_triple_and_grows_a_level(corpus: SentenceCorpus,
                                                         tmp_path: Path) -> None:
    stored: list[Triple] = []
    state = GrowthState(tmp_path / "growth.sqlite")
    stats = _growth(corpus, stored).run(state, [node_of(ENTITIES["metformin"])],
                                        lambda *a: None)
    level1, level2 = stats
    assert level1.heads == 1 and level1.generated == 2
    assert level1.rejected == {"rule_conflict": 1} and level1.corrected == 1
    assert level1.kept == 2 and level1.grown == 2 and level1.pruned == 0
    reversed_ = next(t for t in stored if t.predicate is Predicate.HAS_ADVERSE_EFFECT)
    assert (reversed_.head, reversed_.tail) == (ENTITIES["metformin"].id,
                                                ENTITIES["acidosis"].id)
    assert reversed_.method.endswith("+reversed")
    # Level 2 expands diabetes and lactic acidosis: diabetes brings its neuropathy.
    assert level2.heads == 2 and level2.kept == 1
    assert {t.level for t in stored} == {1, 2}
    assert next(t for t in stored if t.predicate is Predicate.CAUSES).level == 2


def test_verifier_off_keeps_the_wrong_direction(corpus: SentenceCorpus,
                                                tmp_path: Path) -> None:
    stored: list[Triple] = []
    state = GrowthState(tmp_path / "growth.sqlite")
    stats = _growth(corpus, stored, verify=False, levels=1).run(
        state, [node_of(ENTITIES["metformin"])], lambda *a: None)
    assert stats[0].kept == 2 and not stats[0].rejected
    assert CANDIDATES[1].id in {t.id for t in stored}


def test_pruner_decisions_stop_growth(corpus: SentenceCorpus, tmp_path: Path) -> None:
    stored: list[Triple] = []
    state = GrowthState(tmp_path / "growth.sqlite")
    no = _growth(corpus, stored, decide=lambda found: [False] * len(found))
    stats = no.run(state, [node_of(ENTITIES["metformin"])], lambda *a: None)
    assert len(stats) == 1 and stats[0].pruned == 2 and stats[0].grown == 0
    assert all(t.level == 1 for t in stored)


def test_dropped_triples_are_recorded_with_the_rule(tmp_path: Path) -> None:
    c = SentenceCorpus(tmp_path / "corpus.sqlite")
    same = _triple("metformin", Predicate.TREATS, "metformin", 3)  # head == tail
    c.replace_document(DOC, Layer.LITERATURE, [("c1", s, e, t) for s, e, t in SPANS],
                       ENTITIES.values(), [same])
    stored: list[Triple] = []
    dropped: list[str] = []
    state = GrowthState(tmp_path / "growth.sqlite")
    stats = _growth(c, stored, dropped=dropped).run(state, [node_of(ENTITIES["metformin"])],
                                                    lambda *a: None)
    assert stats[0].dropped == 1 and stats[0].kept == 0 and not stored
    assert "S003" in dropped[0] and "Metformin" in dropped[0]


def test_resume_after_a_crash_repeats_nothing(corpus: SentenceCorpus, tmp_path: Path) -> None:
    seeds = [node_of(ENTITIES["metformin"])]
    clean: list[Triple] = []
    state = GrowthState(tmp_path / "clean.sqlite")
    expected = [s.as_dict() for s in _growth(corpus, clean).run(state, seeds, lambda *a: None)]

    stored: list[Triple] = []
    state = GrowthState(tmp_path / "growth.sqlite")
    crashing = _growth(corpus, stored)
    calls = {"n": 0}
    real = crashing.expand

    def expand_then_crash(head, level):  # type: ignore[no-untyped-def]
        calls["n"] += 1
        if calls["n"] == 2:
            raise KeyboardInterrupt
        return real(head, level)

    crashing.expand = expand_then_crash  # type: ignore[method-assign]
    with pytest.raises(KeyboardInterrupt):
        crashing.run(state, seeds, lambda *a: None)
    # same corpus and settings: the progress stands and the loop resumes
    resumed = _growth(corpus, stored).run(state, seeds, lambda *a: None)
    assert [s.as_dict() for s in resumed] == expected
    assert sorted(t.id for t in stored) == sorted(t.id for t in clean)
    state.reset()  # other inputs or settings (pipeline/grow.py decides by fingerprint)
    assert state.kept_ids() == set() and state.pending(1) == []


def test_the_corrector_restates_an_indication_read_as_an_adverse_effect(
        corpus: SentenceCorpus) -> None:
    by_id = {e.id: e for e in ENTITIES.values()}
    misread = _triple("metformin", Predicate.HAS_ADVERSE_EFFECT, "diabetes", 0)
    violations = Verifier(min_triples=0).check([misread], by_id)
    assert [(v.rule, v.detail) for v in violations] == [("E001", "treats")]
    generator = BuiltinGenerator(corpus, by_id, load_rules())
    [(source, fixed)] = generator.correct(None, {misread.id: violations},  # type: ignore[arg-type]
                                          {misread.id: misread})
    assert source == misread.id and fixed.predicate is Predicate.TREATS
    assert fixed.id == CANDIDATES[0].id  # the very statement the sentence makes
