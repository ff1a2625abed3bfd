"""Optional dense retriever: cosine similarity of embeddings, exhaustive over the corpus.

The retriever takes any ``encode(texts) -> (n, dim) array`` function, so it is tested with a plain function.
:func:`load_sentence_transformer` builds that function from sentence-transformers (the ``dense`` extra;
torch is not part of the lock) with the model read from a local folder or from a folder inside an installed
Python package. Nothing is downloaded: ``HF_HUB_OFFLINE`` and ``TRANSFORMERS_OFFLINE`` are set to 1 and
the model is opened with ``local_files_only``. Embeddings are L2-normalised, so score = cosine in [-1, 1].
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from evalops.errors import ConfigError
from evalops.retrievers.base import Query, QueryResult, top_k
from evalops.retrievers.corpus import as_corpus

__all__ = ["DenseRetriever", "load_sentence_transformer", "resolve_model_dir"]

Encoder = Callable[[list[str]], Any]


def _normalised(x: Any, what: str) -> np.ndarray:
    arr = np.asarray(x, dtype=np.float64)
    if arr.ndim != 2:
        raise ConfigError(f"dense: the encoder must return a 2-d array for {what}, got shape {arr.shape}")
    norms = np.linalg.norm(arr, axis=1, keepdims=True)
    norms[norms == 0] = 1.0
    return arr / norms


class DenseRetriever:
    """Exhaustive cosine search over ``encode``-d documents, encoded once at construction."""

    def __init__(self, corpus: Any, encode: Encoder, *, batch_size: int = 64):
        self.docs = as_corpus(corpus)
        self.encode = encode
        self.batch_size = batch_size
        blocks = [
            _normalised(encode(self.docs.texts[i : i + batch_size]), "documents")
            for i in range(0, len(self.docs), batch_size)
        ]
        self._doc_vectors = np.vstack(blocks)
        if self._doc_vectors.shape[0] != len(self.docs):
            raise ConfigError(f"dense: the encoder returned {self._doc_vectors.shape[0]} vectors for {len(self.docs)} documents")

    def __repr__(self) -> str:
        return f"DenseRetriever({len(self.docs)} docs, dim={self._doc_vectors.shape[1]})"

    def retrieve(self, queries: Sequence[Query], k: int) -> list[QueryResult]:
        out: list[QueryResult] = []
        for start in range(0, len(queries), self.batch_size):
            chunk = queries[start : start + self.batch_size]
            q = _normalised(self.encode([qq.text for qq in chunk]), "queries")
            scores = q @ self._doc_vectors.T
            out.extend(
                QueryResult(qq.id, top_k(row, self.docs.doc_ids, k, keep_zero=True)) for qq, row in zip(chunk, scores)
            )
        return out


def resolve_model_dir(model: str | None = None, package: str | None = None, base_dir: Path | None = None) -> Path:
    """The local model folder: ``model`` (relative to ``base_dir``) or ``model`` inside installed ``package``."""
    if not model:
        raise ConfigError("dense: give `model`, a local folder (or a folder inside `package`)")
    if package:
        import importlib.resources

        try:
            root = Path(str(importlib.resources.files(package)))
        except ModuleNotFoundError:
            raise ConfigError(f"dense: package {package!r} holding the model is not installed") from None
        path = root / model
    else:
        path = Path(model)
        if not path.is_absolute() and base_dir is not None:
            path = base_dir / path
    if not path.is_dir():
        raise ConfigError(f"dense: model folder {path} does not exist; models are never downloaded, copy it there")
    return path


def load_sentence_transformer(model_dir: Path, *, device: str = "cpu") -> Encoder:
    """An ``encode`` function from a sentence-transformers model in ``model_dir`` (offline only)."""
    os.environ["HF_HUB_OFFLINE"] = "1"
    os.environ["TRANSFORMERS_OFFLINE"] = "1"
    from evalops.extras import require

    SentenceTransformer = require("sentence_transformers", "dense", "use the dense retriever").SentenceTransformer
    model = SentenceTransformer(str(model_dir), device=device, local_files_only=True)

    def encode(texts: list[str]) -> np.ndarray:
        return model.encode(texts, convert_to_numpy=True, show_progress_bar=False)

    return encode
