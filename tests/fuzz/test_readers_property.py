"""Property-based tests (hypothesis) of every reader of user input: random bytes,
random text and mutations of a valid seed either load or raise a MedKGError that
names the file; never another exception (see ``targets.py``)."""

from __future__ import annotations

import os

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.fuzz.targets import TARGETS, Target, run

# Characters that break naive parsers and serialisers: syntax of the formats and
# of SPARQL/Turtle, quotes, NUL and control characters, right-to-left marks and
# combining characters, surrogate-free astral characters.
HOSTILE = st.sampled_from([
    "\t", "\n", "\r", "\x00", "\x0b", "\x1f", '"', "'", "\\", "{", "}", "<", ">", "#", "|",
    ",", ";", "[", "]", "!", "=", ":", "@prefix", "DROP ALL", "\u202e", "\u200f", "\u0301",
    "\ufeff", "\U0001f600", "id", "name", "[Term]", "is_a:", "synonym:", "%PDF", "obj",
    "endobj", "stream", "null", "true", "{\"id\":", "biolink:", "MESH:", "é", "ß",
])


EXAMPLES = int(os.environ.get("FUZZ_EXAMPLES", "400"))  # per reader


@st.composite
def mutated(draw: st.DrawFn, target: Target) -> bytes:
    """A seed with a few bytes replaced, inserted, deleted or repeated."""
    data = bytearray(draw(st.sampled_from(target.seeds)))
    for _ in range(draw(st.integers(1, 8))):
        at = draw(st.integers(0, len(data)))
        op = draw(st.sampled_from(["replace", "insert", "delete", "repeat", "hostile"]))
        if op == "replace" and at < len(data):
            data[at] = draw(st.integers(0, 255))
        elif op == "insert":
            data[at:at] = draw(st.binary(min_size=1, max_size=8))
        elif op == "delete":
            del data[at : at + draw(st.integers(1, 16))]
        elif op == "repeat":
            data[at:at] = data[at : at + draw(st.integers(1, 64))] * draw(st.integers(2, 4))
        else:
            data[at:at] = draw(HOSTILE).encode("utf-8", "surrogatepass")
    return bytes(data)


def inputs(target: Target) -> st.SearchStrategy[bytes]:
    text = st.lists(st.one_of(HOSTILE, st.text(max_size=12)), max_size=40).map(
        lambda parts: "".join(parts).encode("utf-8", "surrogatepass"))
    return st.one_of(mutated(target), st.binary(max_size=600), text)


@pytest.mark.parametrize("name", sorted(TARGETS))
def test_every_input_loads_or_is_refused_by_name(name: str) -> None:
    target = TARGETS[name]

    @settings(max_examples=EXAMPLES if name != "pdf" else EXAMPLES // 3, deadline=None,
              database=None,
              suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])
    @given(inputs(target))
    def check(data: bytes) -> None:
        run(target, data)

    check()


@pytest.mark.parametrize("name", sorted(TARGETS))
def test_every_seed_loads(name: str) -> None:
    """The seeds are valid: the fuzzers start from inputs the reader accepts."""
    target = TARGETS[name]
    assert all(run(target, seed) for seed in target.seeds if seed), name
