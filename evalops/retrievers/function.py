"""Retrievers from plain Python callables, and the ``package.module:attribute`` entry-point adapter.

:class:`FunctionRetriever` is to retrievers what httpx's ``MockTransport`` is to transports: give it a
function and it behaves like a retriever, so tests (and users) inject behaviour without a service.

* ``batch=True``: ``fn(queries: list[Query], k) -> one ranked list (or QueryResult) per query``. When a
  batch call raises, each of its queries is retried alone, so one bad query does not fail its neighbours.
* ``batch=False``: ``fn(query_text, k) -> ranked list``; an exception fails that query only. A function
  that also takes a ``history`` keyword (or ``**kwargs``) receives a turn's history (a tuple of
  :class:`~evalops.retrievers.base.HistoryTurn`, ``()`` for an independent query); one that does not is
  called as before. A batch function reads ``query.history`` on each :class:`Query`.
"""

from __future__ import annotations

import importlib
import inspect
import time
from collections.abc import Callable, Sequence
from typing import Any

from evalops.errors import ConfigError
from evalops.retrievers.base import Query, QueryResult, coerce_results

__all__ = ["FunctionRetriever", "load_entry_point"]


def _failure(query: Query, exc: Exception) -> QueryResult:
    return QueryResult.failure(query.id, f"query {query.id!r}: {type(exc).__name__}: {exc}")


class FunctionRetriever:
    """A retriever around ``fn`` (see the module docstring for the two call shapes)."""

    def __init__(self, fn: Callable[..., Any], *, batch: bool = True, name: str | None = None):
        if not callable(fn):
            raise ConfigError(f"python: {fn!r} is not callable")
        self.fn = fn
        self.batch = batch
        self.name = name or getattr(fn, "__qualname__", repr(fn))
        self.takes_history = _takes_history(fn)

    def __repr__(self) -> str:
        return f"FunctionRetriever({self.name}, batch={self.batch})"

    def _single(self, query: Query, k: int) -> QueryResult | Any:
        started = time.perf_counter()
        try:
            if self.batch:
                answer = coerce_results([query], self.fn([query], k), k)[0]
            else:
                extra = {"history": query.history} if self.takes_history else {}
                answer = coerce_results([query], [self.fn(query.text, k, **extra)], k)[0]
        except Exception as exc:  # user code: isolate the failure to this query
            return _failure(query, exc)
        return QueryResult(answer.query_id, answer.ranked, answer.error, answer.retries, time.perf_counter() - started,
                           answer.answer)

    def retrieve(self, queries: Sequence[Query], k: int) -> list[Any]:
        if not self.batch or len(queries) == 1:
            return [self._single(q, k) for q in queries]
        try:
            return coerce_results(queries, self.fn(list(queries), k), k)
        except Exception:  # find which queries fail by asking one at a time
            return [self._single(q, k) for q in queries]


def _takes_history(fn: Callable[..., Any]) -> bool:
    try:
        params = inspect.signature(fn).parameters.values()
    except (TypeError, ValueError):  # a builtin without a signature: call it as before
        return False
    return any(p.name == "history" and p.kind in (p.KEYWORD_ONLY, p.POSITIONAL_OR_KEYWORD) or p.kind == p.VAR_KEYWORD
               for p in params)


def load_entry_point(spec: str) -> Any:
    """Import ``package.module:attribute`` (the attribute may be dotted, e.g. ``mod:Class.method``)."""
    module_name, sep, attr = spec.partition(":")
    if not sep or not module_name or not attr:
        raise ConfigError(f"python: entry point {spec!r} must look like 'package.module:callable'")
    try:
        obj: Any = importlib.import_module(module_name)
    except ImportError as exc:
        raise ConfigError(f"python: cannot import {module_name!r} for entry point {spec!r} ({exc})") from None
    for part in attr.split("."):
        try:
            obj = getattr(obj, part)
        except AttributeError:
            raise ConfigError(f"python: {module_name!r} has no attribute {attr!r} (entry point {spec!r})") from None
    return obj
