"""All of a vocabulary's concept vectors are made once per machine and model,
shared by workspaces, and made again when the concepts change or a file is
damaged."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from medkg.linking.concept_vectors import all_concept_vectors, vocabulary_key
from medkg.model import Concept
from tests.reading.test_chunking import CountingEmbedder


def _concepts(definition: str = "high blood sugar") -> list[Concept]:
    return [Concept(id="EX:1", name="diabetes", definition=definition, source="t"),
            Concept(id="EX:2", name="cough", semantic_group="DISO", source="t")]


def test_made_once_then_read(tmp_path: Path, embedder: object) -> None:
    counting = CountingEmbedder(embedder)
    first = all_concept_vectors(_concepts(), counting, tmp_path, 20_000)  # type: ignore[arg-type]
    assert len(counting.texts) == 2 and sorted(first.ids()) == ["EX:1", "EX:2"]
    again = all_concept_vectors(_concepts(), counting, tmp_path, 20_000)  # type: ignore[arg-type]
    assert len(counting.texts) == 2  # nothing encoded the second time
    assert np.allclose(again.vector("EX:1"), first.vector("EX:1"))  # type: ignore[arg-type]
    assert not list(tmp_path.glob(".*partial"))  # no work directory left behind


def test_other_content_or_a_damaged_file_is_made_anew(tmp_path: Path, embedder: object) -> None:
    counting = CountingEmbedder(embedder)
    all_concept_vectors(_concepts(), counting, tmp_path, 20_000)  # type: ignore[arg-type]
    changed = _concepts("a metabolic disease")
    assert vocabulary_key(changed, "m") != vocabulary_key(_concepts(), "m")
    all_concept_vectors(changed, counting, tmp_path, 20_000)  # type: ignore[arg-type]
    assert len(counting.texts) == 4
    directory = tmp_path / vocabulary_key(changed, counting.name)
    (directory / "concepts.npz").write_bytes(b"damaged")
    remade = all_concept_vectors(changed, counting, tmp_path, 20_000)  # type: ignore[arg-type]
    assert len(counting.texts) == 6 and len(remade) == 2
