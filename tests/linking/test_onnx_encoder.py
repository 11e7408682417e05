"""The encoder on onnxruntime: float32 gives torch's vectors, int8 close ones under
its own name; a workspace whose encoder changes makes its vectors again (a reader
is refused until then)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from medkg.config import EmbeddingConfig
from medkg.errors import EmbeddingError, WorkspaceError
from medkg.linking.embeddings import SentenceTransformerEmbedder, make_embedder
from medkg.linking.linker import embed_entities
from medkg.linking.onnx_encoder import OnnxEmbedder
from tests.conftest import copy_workspace

pytestmark = pytest.mark.slow
TEXTS = ["Metformin is the first-line treatment for type 2 diabetes.",
         "Lisinopril can cause a dry cough.",
         "Atrial fibrillation is confirmed by an electrocardiogram; anticoagulation "
         "prevents stroke in patients with risk factors.", "fever", ""]


@pytest.fixture(scope="module")
def onnx_cache(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("onnx-cache")


def test_float32_onnx_gives_torchs_vectors_and_int8_close_ones(onnx_cache: Path) -> None:
    torch_vectors = SentenceTransformerEmbedder(EmbeddingConfig()).embed(TEXTS)
    fp32 = OnnxEmbedder(EmbeddingConfig(runtime="onnx"), cache=onnx_cache)
    int8 = OnnxEmbedder(EmbeddingConfig(runtime="onnx-int8"), cache=onnx_cache)
    same = (fp32.embed(TEXTS) * torch_vectors).sum(axis=1)
    close = (int8.embed(TEXTS) * torch_vectors).sum(axis=1)
    assert same.min() > 0.9999, same
    assert close.min() > 0.85 and close.mean() > 0.93, close
    assert np.allclose(np.linalg.norm(int8.embed(TEXTS), axis=1), 1.0, atol=1e-5)
    # the same vectors keep the model's name (and every cached vector); int8 is another
    assert fp32.name == EmbeddingConfig().model and int8.name.endswith("#onnx-int8")
    assert fp32.dim == int8.dim == 384 and int8.embed([]).shape == (0, 384)
    # made once: a second encoder reads the cached files
    assert sorted(p.name for p in onnx_cache.rglob("*.onnx")) == ["model-fp32.onnx",
                                                                   "model-int8.onnx"]


def test_onnx_runs_on_the_cpu_only() -> None:
    with pytest.raises(EmbeddingError, match="runs on the CPU"):
        make_embedder(EmbeddingConfig(runtime="onnx", device="cuda"))


def test_a_changed_encoder_makes_the_vectors_again(built_workspace: Path, tmp_path: Path,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    from medkg.workspace import Workspace

    root = copy_workspace(built_workspace, tmp_path / "ws")
    question = "What treats type 2 diabetes?"
    with Workspace.open(root) as ws:
        before = ws.ask(question)
        entities = len(ws.parts.index("entities").ids())
    monkeypatch.setenv("MEDKG_EMBEDDING__RUNTIME", "onnx-int8")
    with pytest.raises(WorkspaceError, match="vectors come from the encoder"), \
            Workspace.open(root, access="read") as ws:
        ws.ask(question)
    with Workspace.open(root) as ws:
        after = ws.ask(question)  # reconcile embeds the chunks and entities again
        index = ws.parts.index("entities")
        assert len(index.ids()) == entities
        some = ws.store.entity(sorted(index.ids())[0])
        vector = index.vector(some.id)
        # the index holds the int8 encoder's vectors now
        assert ws.parts.embedder.name.endswith("#onnx-int8")
        # (int8 quantises each batch's activations with one scale: a vector moves a
        # little with its batch-mates, so it is compared by cosine)
        assert vector is not None
        assert float(vector @ embed_entities(ws.parts.embedder, [some])[0]) > 0.98
    assert after.citations and {c.document_id for c in after.citations} & {
        c.document_id for c in before.citations}
