"""The dense retriever: cosine similarity of embeddings, exhaustive over the corpus.

The retriever takes any ``encode(texts) -> (n, dim) array`` function, so it is tested with a plain function.
Two encoders are built in:

* ``model: wordllama`` (:class:`evalops.retrievers.encoders.WordLlamaEncoder`): static embeddings shipped in
  the ``wordllama`` wheel, a main dependency; ``dim`` 64, 128 or 256.
* any other ``model`` is a sentence-transformers folder (:func:`load_sentence_transformer`, the ``dense``
  extra; torch is not part of the lock) read from a local folder or from a folder inside an installed Python
  package. Nothing is downloaded: ``HF_HUB_OFFLINE`` and ``TRANSFORMERS_OFFLINE`` are set to 1 and the model
  is opened with ``local_files_only``.

Embeddings are L2-normalised, so score = cosine in [-1, 1]; a zero vector (an empty text) scores 0. Document
vectors are kept as float32 and must fit in ``memory_budget`` (the setting; a larger corpus is refused with
the figures). When the encoder has an ``identity`` and an
:class:`~evalops.retrievers.embedcache.EmbeddingCache` is given, document vectors come from the cache and
only texts it does not hold are encoded. The search is exhaustive: queries are encoded in batches, then
each query's scores are its dot products with every document vector (one row of scores held at a time),
so a query's scores never depend on the other queries of its batch or shard.
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
from evalops.util.extras import require
from evalops.util.limits import DEFAULT_MEMORY_BUDGET

__all__ = ["DenseRetriever", "load_sentence_transformer", "resolve_model_dir"]

Encoder = Callable[[list[str]], Any]


def _normalised(x: Any, what: str) -> np.ndarray:
    arr = np.asarray(x, dtype=np.float32)
    if arr.ndim != 2:
        raise ConfigError(f"dense: the encoder must return a 2-d array for {what}, got shape {arr.shape}")
    norms = np.linalg.norm(arr, axis=1, keepdims=True)
    norms[norms == 0] = 1.0
    return arr / norms


class DenseRetriever:
    """Exhaustive cosine search over ``encode``-d documents, encoded (or read from ``cache``) at construction.

    ``embedding_counts``: how many documents were encoded here and how many came from the cache.
    """

    remote = False  # in-process, over local data (see evalops.retrievers.base)

    def __init__(self, corpus: Any, encode: Encoder, *, batch_size: int = 64, cache: Any = None,
                 memory_budget: int = DEFAULT_MEMORY_BUDGET):
        self.docs = as_corpus(corpus)
        self.encode = encode
        self.batch_size = batch_size
        self.memory_budget = int(memory_budget)
        identity = getattr(encode, "identity", None)
        if cache is not None and identity:
            before = dict(cache.counts)
            vectors = cache.vectors(identity, self.docs.texts, self._encode_documents)
            self.embedding_counts = {k: cache.counts[k] - before[k] for k in before}
        else:
            vectors = self._encode_documents(self.docs.texts)
            self.embedding_counts = {"embedded": len(self.docs), "cached": 0}
        self._doc_vectors = _normalised(vectors, "documents")
        if self._doc_vectors.nbytes > self.memory_budget:
            raise ConfigError(f"dense: the {len(self.docs)} document vectors take {self._doc_vectors.nbytes:,} bytes, "
                              f"more than the memory budget of {self.memory_budget:,}; raise the memory_budget "
                              "setting or use a smaller dimension")
        if self._doc_vectors.shape[0] != len(self.docs):
            raise ConfigError(f"dense: the encoder returned {self._doc_vectors.shape[0]} vectors for {len(self.docs)} documents")

    def _encode_documents(self, texts: list[str]) -> np.ndarray:
        blocks = [_normalised(self.encode(texts[i : i + self.batch_size]), "documents")
                  for i in range(0, len(texts), self.batch_size)]
        return np.vstack(blocks)

    def __repr__(self) -> str:
        return f"DenseRetriever({len(self.docs)} docs, dim={self._doc_vectors.shape[1]}, encoder={self.encode!r})"

    def _query_vectors(self, texts: list[str]) -> np.ndarray:
        q = _normalised(self.encode(texts), "queries")
        if q.shape != (len(texts), self._doc_vectors.shape[1]):
            raise ConfigError(f"dense: the encoder returned shape {q.shape} for {len(texts)} queries")
        return q

    def retrieve(self, queries: Sequence[Query], k: int) -> list[QueryResult]:
        out: list[QueryResult] = []
        for start in range(0, len(queries), self.batch_size):
            chunk = queries[start : start + self.batch_size]
            for qq, q in zip(chunk, self._query_vectors([qq.text for qq in chunk])):
                out.append(QueryResult(qq.id, top_k(self._scores(q), self.docs.doc_ids, k, keep_zero=True)))
        return out

    def _scores(self, q: np.ndarray, rows: np.ndarray | None = None) -> np.ndarray:
        # numpy's own loop, one dot product per document, not BLAS: a matrix product rounds differently by
        # block shape (a query's scores would depend on the queries sharing its batch or shard), and a
        # threaded matrix-vector product spins on a busy machine (about 25x slower on 2 loaded cores)
        docs = self._doc_vectors if rows is None else self._doc_vectors[rows]
        return np.einsum("ij,j->i", docs, q).astype(np.float64)

    def score_documents(self, text: str, doc_ids: Sequence[str]) -> np.ndarray:
        """The cosine of the query ``text`` with each of ``doc_ids`` (for a rerank stage); unknown ids raise."""
        rows = self.docs.rows_of(doc_ids, "dense")
        return self._scores(self._query_vectors([text])[0], rows)


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

    SentenceTransformer = require("sentence_transformers", "dense", "use the dense retriever").SentenceTransformer
    model = SentenceTransformer(str(model_dir), device=device, local_files_only=True)

    def encode(texts: list[str]) -> np.ndarray:
        return model.encode(texts, convert_to_numpy=True, show_progress_bar=False)

    return encode
