"""Run a retriever over a query set and collect a Run, honestly.

Policy owned here (it travels with every :class:`RetrievalResult`):

* A query whose call failed (timeout, HTTP error, malformed answer, an exception in a batch) is **excluded
  and counted**: it is absent from the Run and listed in ``failed`` with the reason. It is never turned into
  an empty ranking, which would score 0 and look like a regression. Evaluate with
  ``result.exclude_failed(qrels)`` so the metric layer does not count it as unanswered either.
* A query that succeeded with an empty list really retrieved nothing; it scores 0 like any unanswered query.
* A generated answer (a RAG endpoint's ``answer``) of an answered query is kept in ``answers``; queries
  without one are absent from it.
* A run with any failure is ``partial``. When the failed share exceeds ``failure_budget`` (default 2 %),
  :class:`FailureBudgetExceeded` is raised: the version must not be scored on what is left.
* A batch whose ``retrieve`` call raises fails all of its queries with the exception's message.
* Circuit breaker, for remote retrievers only (:func:`~evalops.retrievers.base.is_remote`; the rule is
  :func:`_breaker_for`): once more queries failed than the budget allows (``floor(failure_budget × n)``),
  the run cannot be scored whatever follows, so the remaining queries are failed without calling the
  retriever ("not called: the circuit breaker opened ..."). Adapters with ``attach_breaker`` (HTTP) also
  stop in-flight retries. A dead service thus costs about one round of retries, not one per query. A local
  retriever (a run file, BM25, TF-IDF) is asked every query whatever failed before: calling it hammers
  nothing, and its failures are per query (a query absent from the file), so the failed count and the
  reasons reported are the true ones, and every query it answers is scored.
* Sharded scoring (query shards on several workers): run each shard with ``check_budget=False``, then
  :func:`combine_results` the shards, which applies the budget to the whole query set.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from evalops.data import Qrels, Run, RunTable
from evalops.errors import InputError, RetrieverError
from evalops.metrics.table_input import table_ranks
from evalops.metrics.topk import top_k
from evalops.retrievers.base import Query, QueryResult, Retriever, coerce_results, is_remote
from evalops.transport import CircuitBreaker

__all__ = [
    "DEFAULT_FAILURE_BUDGET",
    "FailureBudgetExceeded",
    "RetrievalResult",
    "as_queries",
    "combine_results",
    "retrieve_run",
    "retrieve_table",
]

DEFAULT_FAILURE_BUDGET = 0.02


@dataclass(frozen=True, eq=False)
class RetrievalResult:
    """The Run of one retriever over ``query_ids``, the failures (query id -> reason), the timings and the
    generated answers (query id -> answer) of a RAG endpoint. ``run`` is a :class:`~evalops.data.RunTable`
    when the retriever answered in columns (:func:`retrieve_table`)."""

    run: Run | RunTable
    query_ids: tuple[str, ...]
    failed: dict[str, str]
    k: int
    failure_budget: float
    wall_seconds: float
    retries: int = 0
    latencies: dict[str, float] = field(default_factory=dict)
    answers: dict[str, str] = field(default_factory=dict)

    @property
    def partial(self) -> bool:
        return bool(self.failed)

    @property
    def empty_ids(self) -> list[str]:
        """The answered queries whose answer held no document: scored 0 on every measure, which reads as a
        drop. A run file's absent queries under ``missing: empty``, or a retriever that found nothing."""
        run = self.run
        if isinstance(run, RunTable):
            present = set(run.query_ids[np.bincount(run.query_codes, minlength=len(run.query_ids)) > 0].tolist())
        else:
            present = set(run.query_ids.tolist())
        return sorted(q for q in self.query_ids if q not in present and q not in self.failed)

    @property
    def failed_ids(self) -> list[str]:
        return sorted(self.failed)

    @property
    def failure_rate(self) -> float:
        return len(self.failed) / len(self.query_ids) if self.query_ids else 0.0

    def exclude_failed(self, qrels: Qrels) -> Qrels:
        """``qrels`` without the failed queries, so they are neither scored nor counted as unanswered."""
        if not self.failed:
            return qrels
        return qrels.restrict(q for q in qrels.queries.tolist() if q not in self.failed)

    def top_documents(self, k: int) -> dict[str, list[str]]:
        """The first ``k`` documents of every answered query in evaluation order (score descending at
        float32 precision, ties by doc id descending; a query without scores keeps the retriever's order):
        the top k that the evaluator, the context measures and the judge all see
        (:func:`evalops.metrics.top_k`)."""
        out: dict[str, list[str]] = {q: [] for q in self.query_ids if q not in self.failed}
        if isinstance(self.run, RunTable):  # the rows ranked within the first k, in rank order

            ranks = table_ranks(self.run)
            rows = np.flatnonzero(ranks < k)
            rows = rows[np.lexsort((ranks[rows], self.run.query_codes[rows]))]
            queries = self.run.query_ids[self.run.query_codes[rows]]
            for qid, doc in zip(queries.tolist(), self.run.doc_ids(rows).tolist()):
                out.setdefault(str(qid), []).append(str(doc))
            return out

        out.update(top_k(self.run, k) if len(self.run) else {})
        return out

    def timings(self) -> dict[str, float | None]:
        """Wall time, throughput, and per-query latency percentiles when the adapter measured them."""
        lat = np.fromiter(self.latencies.values(), dtype=np.float64, count=len(self.latencies))
        n = len(self.query_ids)
        return {
            "wall_seconds": self.wall_seconds,
            "queries_per_second": n / self.wall_seconds if self.wall_seconds > 0 else None,
            "latency_p50": float(np.percentile(lat, 50)) if lat.size else None,
            "latency_p95": float(np.percentile(lat, 95)) if lat.size else None,
            "latency_max": float(lat.max()) if lat.size else None,
        }

    def summary(self) -> dict[str, Any]:
        """A JSON-ready description (no Run rows) for logs, the warehouse and reports."""
        return {
            "run": self.run.name,
            "k": self.k,
            "queries": len(self.query_ids),
            "answered": len(self.query_ids) - len(self.failed),
            "failed": len(self.failed),
            "failed_ids": self.failed_ids,
            "partial": self.partial,
            "failure_budget": self.failure_budget,
            "retries": self.retries,
            "timings": self.timings(),
        }


class FailureBudgetExceeded(RetrieverError):
    """Too many queries failed for the version to be scored. ``result`` holds what was collected."""

    def __init__(self, result: RetrievalResult):
        self.result = result
        firsts = "; ".join(f"{q}: {result.failed[q]}" for q in result.failed_ids[:3])
        super().__init__(
            f"retriever {result.run.name!r}: {len(result.failed)} of {len(result.query_ids)} queries failed "
            f"({result.failure_rate:.1%}), above the failure budget of {result.failure_budget:.1%}; "
            f"not scoring it. First failures: {firsts}"
        )


def as_queries(queries: Sequence[Query] | Mapping[str, str]) -> list[Query]:
    """Queries from a sequence of :class:`Query` or a mapping ``query_id -> text``. Ids must be unique."""
    if isinstance(queries, Mapping):
        out = [Query(str(q), str(t)) for q, t in queries.items()]
    else:
        out = [q if isinstance(q, Query) else Query(str(q[0]), str(q[1])) for q in queries]
    _check_ids([q.id for q in out])
    return out


def _check_ids(ids: list[str]) -> None:
    """Query ids must be unique, and there must be some."""
    if len(set(ids)) != len(ids):
        seen: set[str] = set()
        for q in ids:
            if q in seen:
                raise InputError(f"queries: query id {q!r} appears more than once")
            seen.add(q)
    if not ids:
        raise InputError("queries: there are no queries to run")


def retrieve_run(
    retriever: Retriever,
    queries: Sequence[Query] | Mapping[str, str],
    k: int = 100,
    *,
    name: str = "run",
    failure_budget: float = DEFAULT_FAILURE_BUDGET,
    batch_size: int = 64,
    on_progress: Callable[[int], None] | None = None,
    check_budget: bool = True,
    breaker: CircuitBreaker | None = None,
) -> RetrievalResult:
    """Ask ``retriever`` for the top ``k`` of every query, in batches of ``batch_size``.

    ``on_progress(n)`` is called after each batch with the number of queries it finished (the CLI passes
    a progress bar's ``advance``). Raises :class:`FailureBudgetExceeded` when the failed share exceeds
    ``failure_budget`` (unless ``check_budget`` is False, for a shard); see the module docstring.
    ``breaker`` replaces the default circuit breaker (``failure_budget`` over these queries); a shard
    passes one sized for the whole version. Either applies to a remote retriever only (:func:`_breaker_for`).
    """
    if k < 1:
        raise InputError(f"k must be at least 1, got {k}")
    if not 0 <= failure_budget <= 1:
        raise InputError(f"failure_budget must be a fraction in [0, 1], got {failure_budget}")
    qs = as_queries(queries)
    ranked: dict[str, Sequence[tuple[str, float | None]]] = {}
    failed: dict[str, str] = {}
    latencies: dict[str, float] = {}
    answers: dict[str, str] = {}
    retries = 0
    breaker = _breaker_for(retriever, breaker, len(qs), failure_budget, check_budget)
    attach = getattr(retriever, "attach_breaker", None)
    if callable(attach):
        attach(breaker)
    start = time.perf_counter()
    try:
        for lo in range(0, len(qs), max(1, batch_size)):
            batch = qs[lo : lo + max(1, batch_size)]
            results = _batch(retriever, batch, k, breaker)
            for r in results:
                retries += r.retries
                if r.seconds is not None:
                    latencies[r.query_id] = r.seconds
                if r.ok:
                    ranked[r.query_id] = r.ranked
                    if r.answer is not None:
                        answers[r.query_id] = r.answer
                else:
                    failed[r.query_id] = r.error  # type: ignore[assignment]
            if on_progress is not None:
                on_progress(len(batch))
    finally:
        if callable(attach):
            attach(None)
    result = RetrievalResult(
        run=Run.from_ranked(ranked, name=name),
        query_ids=tuple(q.id for q in qs),
        failed=failed,
        k=k,
        failure_budget=failure_budget,
        wall_seconds=time.perf_counter() - start,
        retries=retries,
        latencies=latencies,
        answers=answers,
    )
    if check_budget and result.failure_rate > failure_budget:
        raise FailureBudgetExceeded(result)
    return result


def retrieve_table(retriever: Any, query_ids: Sequence[str], k: int = 100, *, name: str = "run") -> RetrievalResult:
    """:func:`retrieve_run` for a retriever that answers a whole query set in columns (a run file read in
    memory: ``retriever.table(query_ids, k)``): the same documents and failures, in a
    :class:`~evalops.data.RunTable` the metric layer ranks directly. No failure budget is checked (the
    caller applies it, as for a shard); a local retriever has no circuit breaker."""
    import dataclasses

    if k < 1:
        raise InputError(f"k must be at least 1, got {k}")
    ids = [str(q) for q in query_ids]  # as as_queries would give them, without a Query per id
    _check_ids(ids)
    start = time.perf_counter()
    table, failed = retriever.table(ids, k)
    named = dataclasses.replace(table, name=name)
    if "_ranks" in table.__dict__:  # the ranks computed while cutting (evalops.metrics.table_input.table_ranks)
        object.__setattr__(named, "_ranks", table.__dict__["_ranks"])
    return RetrievalResult(run=named, query_ids=tuple(ids), failed=failed, k=k,
                           failure_budget=1.0, wall_seconds=time.perf_counter() - start)


def _breaker_for(retriever: Retriever, given: CircuitBreaker | None, n: int, failure_budget: float,
                 check_budget: bool) -> CircuitBreaker | None:
    """The circuit breaker of a run, the one place it is decided: none for a retriever that is not remote
    (see the module docstring), else ``given`` or, when the budget is checked, one of ``failure_budget``
    over the ``n`` queries."""
    if not is_remote(retriever):
        return None
    if given is None and check_budget and failure_budget < 1:
        return CircuitBreaker(n, failure_budget)
    return given


def _batch(retriever: Retriever, batch: list[Query], k: int, breaker: CircuitBreaker | None) -> list[QueryResult]:
    if breaker is not None and breaker.open:
        return [QueryResult.failure(q.id, breaker.reason()) for q in batch]
    counted = callable(getattr(retriever, "attach_breaker", None))  # the adapter records its own outcomes
    try:
        results = coerce_results(batch, retriever.retrieve(batch, k), k)
    except Exception as exc:  # a failing batch must not stop the others; the budget decides
        results = [QueryResult.failure(q.id, f"{type(exc).__name__}: {exc}") for q in batch]
        counted = False
    if breaker is not None and not counted:
        for r in results:
            breaker.record(r.ok)
    return results


def combine_results(shards: Sequence[RetrievalResult], *, check_budget: bool = True) -> RetrievalResult:
    """One result from the results of disjoint query shards, in shard order; the budget of the first shard
    is applied to the whole. The wall time is the sum (the shards' own times, not the elapsed time)."""
    if not shards:
        raise InputError("combine_results: there are no shards to combine")
    first = shards[0]
    ids = [q for s in shards for q in s.query_ids]
    if len(set(ids)) != len(ids):
        raise InputError("combine_results: the shards overlap; each query must be in exactly one shard")
    if any(s.k != first.k or s.run.name != first.run.name for s in shards):
        raise InputError("combine_results: the shards differ in k or run name; they are not one run")
    runs = [s.run for s in shards]
    result = RetrievalResult(
        run=Run(
            np.concatenate([r.query_ids for r in runs]),
            np.concatenate([r.doc_ids for r in runs]),
            np.concatenate([r.scores for r in runs]),
            name=first.run.name,
        ),
        query_ids=tuple(ids),
        failed={q: e for s in shards for q, e in s.failed.items()},
        k=first.k,
        failure_budget=first.failure_budget,
        wall_seconds=sum(s.wall_seconds for s in shards),
        retries=sum(s.retries for s in shards),
        latencies={q: t for s in shards for q, t in s.latencies.items()},
        answers={q: a for s in shards for q, a in s.answers.items()},
    )
    if check_budget and result.failure_rate > result.failure_budget:
        raise FailureBudgetExceeded(result)
    return result
