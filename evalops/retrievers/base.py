"""The Retriever protocol: one batch method, queries and k in, one ranked list (or a failure) per query out.

Conventions owned here:

* A ranked list is ``[(doc_id, score or None), ...]`` in the retriever's rank order. Either every document
  of a query has a score or none has (``None`` = no score; the evaluator then keeps the list order).
* Ranks are kept exactly as returned. The only change is a cut to the first ``k`` positions when a
  retriever returns more than it was asked for.
* A list the evaluator could not rank as returned is a failure of that query, never repaired: a score that
  increases down the ranking (the evaluator ranks by score, so the order would silently change), a
  duplicate document, a non-finite score, scored and unscored documents mixed, a non-string doc id.
  Equal scores are allowed; the evaluator breaks those ties by doc id descending, as trec_eval does.
* A failure is a :class:`QueryResult` with ``error`` set. It is excluded from the run and counted, never
  turned into an empty list (an empty list is a real answer: "retrieved nothing", which scores 0).
* A retriever whose failures come from a remote service (an HTTP adapter) is *remote*; one that answers in
  this process from local data (a run file, the built-in BM25 and TF-IDF) declares ``remote = False``: its
  failures are the same on every call for the same query (a query absent from a run file), so nothing is
  gained by not asking. A wrapper (fusion, rerank) is remote when any of its parts is. A retriever that
  does not say is taken as remote (user code may call a service). :func:`is_remote` reads it; the scoring
  loop's circuit breaker guards remote retrievers only.
* A RAG endpoint may also return a generated ``answer`` (a string) with its ranked list; it is kept as
  returned (untrusted text: escaped wherever it is shown) and judged for faithfulness and relevance. An
  answer that is not a string fails the query, like a malformed ranked list.
* A turn of a conversation carries its ``history`` (the earlier turns' questions and answers, oldest first;
  ``()`` for an independent query). A retriever that reads only ``id`` and ``text`` keeps working unchanged;
  one that rewrites queries reads the history (:mod:`evalops.conversations`).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Protocol, runtime_checkable

import numpy as np

from evalops.errors import RetrieverError
from evalops.metrics.ranking import as_trec_eval_scores, trec_eval_order
from evalops.turns import HistoryTurn

__all__ = [
    "HistoryTurn",
    "Query",
    "QueryResult",
    "Ranked",
    "Retriever",
    "coerce_result",
    "coerce_results",
    "is_remote",
    "top_k",
]

Ranked = tuple[tuple[str, float | None], ...]


@dataclass(frozen=True)
class Query:
    """One query: its id (a string, compared as a string everywhere), its text and, for a turn of a
    conversation, its history (earlier turns, oldest first; empty for an independent query)."""

    id: str
    text: str
    history: tuple[HistoryTurn, ...] = ()


@dataclass(frozen=True)
class QueryResult:
    """The outcome of one query: a ranked list, or an ``error`` saying why there is none.

    ``retries`` counts the extra attempts an adapter made; ``seconds`` is the wall time spent on the query
    (None when the adapter does not measure it per query); ``answer`` is the generated answer of a RAG
    endpoint (None when the retriever returns none).
    """

    query_id: str
    ranked: Ranked = ()
    error: str | None = None
    retries: int = 0
    seconds: float | None = None
    answer: str | None = None

    @property
    def ok(self) -> bool:
        return self.error is None

    @classmethod
    def failure(cls, query_id: str, error: str, retries: int = 0, seconds: float | None = None) -> QueryResult:
        return cls(query_id, (), error, retries, seconds)


@runtime_checkable
class Retriever(Protocol):
    """Anything with a batch ``retrieve``. Results come back in the order of ``queries``, one per query.

    An item may be a :class:`QueryResult` or a plain ranked list (``[(doc_id, score or None), ...]`` or
    ``[doc_id, ...]``); :func:`coerce_result` normalises and checks both.
    """

    def retrieve(self, queries: Sequence[Query], k: int) -> Sequence[QueryResult | Sequence[Any]]: ...


def is_remote(retriever: Any) -> bool:
    """Whether ``retriever`` (or a reranker) may call a remote service: its ``remote`` attribute, True when it
    has none (see the module conventions)."""
    return bool(getattr(retriever, "remote", True))


def _ranked_problem(items: Sequence[Any]) -> tuple[Ranked, str | None]:
    out: list[tuple[str, float | None]] = []
    seen: set[str] = set()
    for pos, item in enumerate(items, start=1):
        if isinstance(item, str):
            doc_id, score = item, None
        elif isinstance(item, (tuple, list)) and len(item) == 2:
            doc_id, score = item
        else:
            return (), f"rank {pos}: expected (doc_id, score) or doc_id, got {type(item).__name__}"
        if not isinstance(doc_id, str):
            return (), f"rank {pos}: doc id must be a string, got {type(doc_id).__name__}"
        if doc_id in seen:
            return (), f"rank {pos}: document {doc_id!r} is listed twice"
        seen.add(doc_id)
        if score is not None:
            if isinstance(score, bool) or not isinstance(score, (int, float, np.integer, np.floating)):
                return (), f"rank {pos}: score must be a number or None, got {type(score).__name__}"
            score = float(score)
            if not math.isfinite(score):
                return (), f"rank {pos}: score {score} is not finite"
        out.append((doc_id, score))
    scored = [s is not None for _, s in out]
    if any(scored) and not all(scored):
        return (), "mixes scored and unscored documents; give every document a score, or none"
    if all(scored):
        for pos in range(1, len(out)):
            if out[pos][1] > out[pos - 1][1]:  # type: ignore[operator]
                return (), (
                    f"score rises from {out[pos - 1][1]} at rank {pos} to {out[pos][1]} at rank {pos + 1}; "
                    "scores must not increase down the ranking (the evaluator ranks by score)"
                )
    return tuple(out), None


def coerce_result(query: Query, item: Any, k: int) -> QueryResult:
    """Normalise one retriever answer for ``query`` and check it (see the module conventions).

    A ranked list that breaks a convention becomes a failure naming the query and the rank. Lists longer
    than ``k`` are cut to their first ``k`` positions.
    """
    if isinstance(item, QueryResult):
        if item.query_id != query.id:
            return QueryResult.failure(query.id, f"answer is for query {item.query_id!r}, not {query.id!r}")
        if not item.ok:
            return item
        ranked, problem = _ranked_problem(item.ranked[:k])
        if problem is None and item.answer is not None and not isinstance(item.answer, str):
            problem = f"the answer must be a string or None, got {type(item.answer).__name__}"
        if problem:
            return QueryResult.failure(query.id, f"query {query.id!r}: {problem}", item.retries, item.seconds)
        return QueryResult(query.id, ranked, None, item.retries, item.seconds, item.answer)
    if isinstance(item, (str, bytes)) or not isinstance(item, Sequence):
        return QueryResult.failure(query.id, f"query {query.id!r}: expected a ranked list, got {type(item).__name__}")
    ranked, problem = _ranked_problem(list(item)[:k])
    if problem:
        return QueryResult.failure(query.id, f"query {query.id!r}: {problem}")
    return QueryResult(query.id, ranked)


def coerce_results(queries: Sequence[Query], items: Sequence[Any], k: int) -> list[QueryResult]:
    """:func:`coerce_result` for a whole batch; a batch answer of the wrong length is a RetrieverError."""
    items = list(items)
    if len(items) != len(queries):
        raise RetrieverError(
            f"the retriever returned {len(items)} results for {len(queries)} queries; "
            "it must return one result per query, in the order of the queries"
        )
    return [coerce_result(q, item, k) for q, item in zip(queries, items)]


def top_k(scores: np.ndarray, doc_ids: np.ndarray, k: int, *, keep_zero: bool = False) -> Ranked:
    """The best ``k`` documents by ``scores`` in trec_eval's order
    (:func:`evalops.metrics.ranking.trec_eval_order`: float32 scores descending, then doc id descending),
    so a cut at ``k`` keeps exactly the documents the evaluator ranks first.

    Documents scoring exactly 0 (no term in common with the query) are left out unless ``keep_zero``.
    The scores returned are the retriever's own (not rounded).
    """
    keep = np.flatnonzero(scores != 0) if not keep_zero else np.arange(len(scores))
    if keep.size > k:
        # Take every document tied (at float32) with the k-th best score, then let the rule decide.
        ranked_by = as_trec_eval_scores(scores[keep])
        kth = np.partition(ranked_by, keep.size - k)[keep.size - k]
        keep = keep[ranked_by >= kth]
    order = keep[trec_eval_order(scores[keep], doc_ids[keep])][:k]
    return tuple((str(doc_ids[i]), float(scores[i])) for i in order)
