"""The per-stage clock: own time of nested stages, texts embedded counted
against the stage that asked, and nothing recorded when it is off."""

from __future__ import annotations

import time

from medkg import timing


def test_nested_stages_record_their_own_time_and_embedded_texts() -> None:
    with timing.recording() as clock:
        with timing.stage("chunk"):
            time.sleep(0.02)
            timing.embedded(7)
            with timing.stage(timing.EMBED):
                time.sleep(0.05)
        with timing.stage("chunk"):
            pass
    chunk, embed = clock.stages["chunk"], clock.stages[timing.EMBED]
    assert chunk.calls == 2 and embed.calls == 1
    assert 0.015 < chunk.seconds < 0.05  # the nested encoding is not the chunker's
    assert embed.seconds >= 0.05
    assert chunk.texts_embedded == 7 and chunk.embed_seconds >= 0.05
    assert abs(clock.total_seconds - (chunk.seconds + embed.seconds)) < 1e-9
    table = timing.table(clock, wall_seconds=clock.total_seconds + 1.0)
    assert table.splitlines()[1].startswith("embed") and "(not in a stage)" in table


def test_the_clock_is_off_unless_recording() -> None:
    with timing.stage("extract"):
        timing.embedded(3)  # no clock: nothing to record, nothing raised
    with timing.recording() as clock:
        pass
    assert clock.stages == {}
