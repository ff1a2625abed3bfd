"""The rerank stage: a first-stage retriever proposes ``depth`` candidates, a reranker re-scores them.

A :class:`Reranker` has one method, ``score(query, candidates) -> one float per candidate`` (higher is
better); the stage sorts by it (ties by doc id descending, as the evaluator does) and keeps the top k.
Candidates that the first stage did not return can never appear, so recall@depth bounds the stage.
Three rerankers ship: :class:`CallableReranker` wraps any ``fn(query_text, doc_texts) -> scores`` (the
shape of a cross-encoder's ``predict``), :class:`RetrieverReranker` re-scores with any retriever that can
score given documents (``score_documents``: the built-in dense, BM25 and TF-IDF retrievers), and
:class:`LexicalOverlapReranker` is a cheap reference.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, NamedTuple, Protocol, runtime_checkable

import numpy as np

from evalops.errors import ConfigError
from evalops.retrievers.base import Query, QueryResult, Retriever, coerce_results, is_remote, top_k
from evalops.retrievers.corpus import as_corpus
from evalops.retrievers.text import Tokenizer

__all__ = ["Candidate", "CallableReranker", "LexicalOverlapReranker", "RerankedRetriever", "Reranker",
           "RetrieverReranker"]


class Candidate(NamedTuple):
    doc_id: str
    text: str
    first_stage_score: float | None


@runtime_checkable
class Reranker(Protocol):
    def score(self, query: Query, candidates: Sequence[Candidate]) -> Sequence[float]: ...


class CallableReranker:
    """A reranker from a plain function ``fn(query_text, doc_texts) -> sequence of float``."""

    def __init__(self, fn: Callable[[str, list[str]], Sequence[float]]):
        self.fn = fn

    def score(self, query: Query, candidates: Sequence[Candidate]) -> Sequence[float]:
        return self.fn(query.text, [c.text for c in candidates])


class RetrieverReranker:
    """Re-score candidates with a retriever's own score for them (``retriever.score_documents(text, ids)``)."""

    def __init__(self, retriever: Any):
        if not callable(getattr(retriever, "score_documents", None)):
            raise ConfigError(f"rerank: {type(retriever).__name__} cannot score given documents; a scorer must be a "
                              "dense, bm25 or tfidf retriever (or any object with score_documents(text, doc_ids))")
        self.retriever = retriever

    def __repr__(self) -> str:
        return f"RetrieverReranker({self.retriever!r})"

    @property
    def remote(self) -> bool:
        return is_remote(self.retriever)

    def score(self, query: Query, candidates: Sequence[Candidate]) -> Sequence[float]:
        return self.retriever.score_documents(query.text, [c.doc_id for c in candidates])


class LexicalOverlapReranker:
    """IDF-weighted query-term coverage: Σ_{t ∈ q ∩ d} idf(t) / Σ_{t ∈ q} idf(t), over unique tokens.

    idf(t) = ln((1 + N) / (1 + df(t))) + 1 over the corpus it is given; a token unseen in the corpus gets
    the largest idf. A reference implementation, not a strong reranker.
    """

    remote = False  # in-process (see evalops.retrievers.base)

    def __init__(self, corpus: Any, tokenizer: Tokenizer | None = None):
        docs = as_corpus(corpus)
        self.tokenizer = tokenizer or Tokenizer()
        doc_token_sets = [set(toks) for toks in self.tokenizer.many(docs.texts)]
        df: dict[str, int] = {}
        for toks in doc_token_sets:
            for t in toks:
                df[t] = df.get(t, 0) + 1
        n = len(docs)
        self._idf = {t: float(np.log((1 + n) / (1 + c)) + 1) for t, c in df.items()}
        self._unseen = float(np.log(1 + n) + 1)
        self._doc_tokens = dict(zip(docs.doc_ids.tolist(), doc_token_sets))

    def score(self, query: Query, candidates: Sequence[Candidate]) -> Sequence[float]:
        q = {t: self._idf.get(t, self._unseen) for t in set(self.tokenizer(query.text))}
        total = sum(q.values())
        if total == 0:
            return [0.0] * len(candidates)
        doc_tokens = [self._doc_tokens.get(c.doc_id) or set(self.tokenizer(c.text)) for c in candidates]
        return [sum(w for t, w in q.items() if t in toks) / total for toks in doc_tokens]


class RerankedRetriever:
    """``first_stage`` retrieves ``depth`` candidates per query, ``reranker`` re-scores them.

    A reranker that raises, or returns the wrong number of scores, fails that query only.
    """

    def __init__(self, first_stage: Retriever, reranker: Reranker, corpus: Any, *, depth: int = 100):
        if depth < 1:
            raise ConfigError(f"rerank: depth must be >= 1, got {depth}")
        self.first_stage = first_stage
        self.reranker = reranker
        self.text = as_corpus(corpus).text_by_id()
        self.depth = depth

    def __repr__(self) -> str:
        return f"RerankedRetriever({self.first_stage!r}, {type(self.reranker).__name__}, depth={self.depth})"

    @property
    def remote(self) -> bool:
        return is_remote(self.first_stage) or is_remote(self.reranker)

    def _rerank_one(self, query: Query, first: QueryResult, k: int) -> QueryResult:
        missing = [d for d, _ in first.ranked if d not in self.text]
        if missing:
            return QueryResult.failure(query.id, f"query {query.id!r}: first stage returned unknown document {missing[0]!r}")
        cands = [Candidate(d, self.text[d], s) for d, s in first.ranked]
        try:
            raw = self.reranker.score(query, cands)
            scores = np.asarray(list(raw), dtype=np.float64)
        except Exception as exc:  # a user reranker may fail on one query; isolate it
            return QueryResult.failure(query.id, f"query {query.id!r}: reranker failed: {type(exc).__name__}: {exc}")
        if scores.shape != (len(cands),) or not np.all(np.isfinite(scores)):
            return QueryResult.failure(
                query.id, f"query {query.id!r}: reranker must return {len(cands)} finite scores, got {scores.shape}"
            )
        ids = np.array([c.doc_id for c in cands], dtype=object)
        return QueryResult(query.id, top_k(scores, ids, k, keep_zero=True), None, first.retries)

    def retrieve(self, queries: Sequence[Query], k: int) -> list[QueryResult]:
        depth = max(k, self.depth)
        firsts = coerce_results(queries, self.first_stage.retrieve(queries, depth), depth)
        return [self._rerank_one(q, f, k) if f.ok else f for q, f in zip(queries, firsts)]
