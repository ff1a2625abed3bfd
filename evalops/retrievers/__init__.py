"""Retrievers: the protocol, the registry of deployed versions, adapters and built-in reference retrievers.

* :class:`Retriever` — one batch method, ``retrieve(queries, k) -> one QueryResult (or ranked list) per
  query``. Ranks are kept as returned (:mod:`evalops.retrievers.base` owns the conventions).
* Registry — :func:`load_registry` / :func:`load_default_registry` read ``include/retrievers.yaml`` and the
  user's file; :func:`build_retriever` turns an entry into a retriever.
* Adapters — :class:`HttpRetriever` (JSON over HTTP), :class:`FunctionRetriever` (a Python callable or
  ``package.module:callable``), :class:`RunFileRetriever` (a TREC run file).
* Built-ins — :class:`BM25Retriever`, :class:`TfidfRetriever`, :class:`ReciprocalRankFusion`,
  :class:`RerankedRetriever` (with :class:`RetrieverReranker`), :class:`DenseRetriever` over
  :class:`WordLlamaEncoder` (static embeddings, ``wordllama`` extra) or a sentence-transformers folder (``dense`` extra),
  its document vectors kept per snapshot by an :class:`EmbeddingCache`.
* :func:`retrieve_run` runs a retriever over a query set and returns a :class:`RetrievalResult` (the Run,
  failed query ids, timings); failures are excluded and counted, and a failure budget guards the score.
* :class:`LocalService` serves any handler (or, through :func:`retriever_handler`, any retriever) in the
  HTTP adapter's schema on 127.0.0.1, for tests, benchmarks and demos.

Heavy or optional libraries (httpx, bm25s, jieba, PyStemmer, scipy, tokenizers, safetensors, sentence-transformers,
Airflow) are
imported by the classes that use them, not by ``import evalops.retrievers``.
"""

from __future__ import annotations

from evalops.retrievers.auth import AuthHeader, Secret
from evalops.retrievers.base import Query, QueryResult, Retriever, coerce_result, coerce_results, top_k
from evalops.retrievers.bm25 import BM25Retriever
from evalops.retrievers.build import build_retriever
from evalops.retrievers.corpus import Corpus, as_corpus
from evalops.retrievers.dense import DenseRetriever, load_sentence_transformer, resolve_model_dir
from evalops.retrievers.embedcache import EmbeddingCache
from evalops.retrievers.encoders import WordLlamaEncoder
from evalops.retrievers.function import FunctionRetriever, load_entry_point
from evalops.retrievers.fusion import ReciprocalRankFusion
from evalops.retrievers.http import HttpRetriever
from evalops.retrievers.registry import (
    NAMED_BUILTINS,
    Registry,
    RetrieverEntry,
    builtin_entry,
    default_registry_paths,
    load_default_registry,
    load_registry,
)
from evalops.retrievers.rerank import (
    CallableReranker,
    Candidate,
    LexicalOverlapReranker,
    RerankedRetriever,
    Reranker,
    RetrieverReranker,
)
from evalops.retrievers.runfile import RunFileRetriever
from evalops.retrievers.scoring import (
    DEFAULT_FAILURE_BUDGET,
    FailureBudgetExceeded,
    RetrievalResult,
    as_queries,
    combine_results,
    retrieve_run,
)
from evalops.retrievers.service import LocalService, retriever_handler
from evalops.retrievers.text import Tokenizer
from evalops.retrievers.tfidf import TfidfRetriever
from evalops.transport import RetryPolicy

__all__ = [
    "AuthHeader",
    "BM25Retriever",
    "CallableReranker",
    "Candidate",
    "Corpus",
    "DEFAULT_FAILURE_BUDGET",
    "DenseRetriever",
    "EmbeddingCache",
    "FailureBudgetExceeded",
    "FunctionRetriever",
    "HttpRetriever",
    "LexicalOverlapReranker",
    "LocalService",
    "NAMED_BUILTINS",
    "Query",
    "QueryResult",
    "ReciprocalRankFusion",
    "Registry",
    "RerankedRetriever",
    "Reranker",
    "RetrievalResult",
    "Retriever",
    "RetrieverEntry",
    "RetrieverReranker",
    "RetryPolicy",
    "RunFileRetriever",
    "Secret",
    "TfidfRetriever",
    "Tokenizer",
    "WordLlamaEncoder",
    "as_corpus",
    "as_queries",
    "build_retriever",
    "builtin_entry",
    "coerce_result",
    "coerce_results",
    "combine_results",
    "default_registry_paths",
    "load_default_registry",
    "load_entry_point",
    "load_registry",
    "load_sentence_transformer",
    "resolve_model_dir",
    "retrieve_run",
    "retriever_handler",
    "top_k",
]
