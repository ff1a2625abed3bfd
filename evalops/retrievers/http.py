"""The HTTP JSON adapter: one POST per query, bounded concurrency, retries with backoff, validated answers.

Request (``POST url``, JSON body)::

    {"query_id": "q1", "query": "how do refunds work", "k": 100, ...extra body fields from params}

A turn of a conversation adds its history, oldest first (an independent query sends no ``history`` field,
so a service written for single questions sees the body it always saw)::

    {"query_id": "c1_2", "query": "and for orders?", "k": 100,
     "history": [{"question": "how do refunds work", "answer": "Refunds are issued within 14 days."}]}

Response (200, JSON)::

    {"query_id": "q1", "results": [{"doc_id": "d7", "score": 12.3}, {"doc_id": "d2", "score": 11.0}]}

A RAG endpoint may add its generated answer: ``{"query_id": "q1", "results": [...], "answer": "Refunds are
issued within 14 days."}``. ``answer`` is optional (absent or ``null``: no answer); when present it must be
a string, else the query fails as malformed. It is untrusted text, escaped wherever it is shown.

``query_id`` in the response is optional (when present it must match). ``results`` is in rank order;
``doc_id`` is a string (an integer is accepted and read as its decimal string); ``score`` is a number,
``null`` or absent (then the list order is the ranking); see :mod:`evalops.retrievers.base`.

Transport: one :class:`evalops.transport.HttpClient` (see :mod:`evalops.transport` for the policies).
``timeout`` is the overall deadline of one attempt (connect, send, wait, read the whole body), enforced on
every socket operation, so a server that drips a byte a second fails at the deadline. ``stall_timeout``
(default ``min(timeout, 5)``) is the stall detector: no byte for that long fails the attempt at once.
``max_response_bytes`` (default 64 MB) bounds one response body: a longer one fails its query, not retried,
naming the retriever's URL and the bound.
Retries follow :class:`evalops.transport.RetryPolicy` (a timeout, a connection error, a 5xx and a 429 are
retried up to ``max_retries`` times with jittered backoff, honouring ``Retry-After``); a 3xx (redirects are
not followed), any other 4xx, a malformed answer (not JSON, wrong shape) and any other httpx error are not
retried. With a :class:`evalops.transport.CircuitBreaker` attached (``retrieve_run`` attaches one), no
call and no retry is made once the breaker is open. Concurrency: a thread pool of ``concurrency`` workers
sharing the client's keep-alive connection pool. The auth header value is a
:class:`~evalops.retrievers.auth.Secret`; it is never logged and is scrubbed from every error message.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from evalops.errors import ConfigError, RetrieverError
from evalops.retrievers.auth import AuthHeader, Secret
from evalops.retrievers.base import Query, QueryResult
from evalops.transport import CircuitBreaker, ClosesClient, HttpClient, ResponseTooLarge, RetryPolicy
from evalops.util.limits import DEFAULT_MAX_RESPONSE_BYTES
from evalops.util.secrets import mask_text, mask_url

__all__ = ["HttpRetriever", "MalformedResponse", "parse_answer", "parse_response"]

SCHEMA_HINT = '{"results": [{"doc_id": string, "score": number or null}, ...], "answer": string (optional)}'


class MalformedResponse(RetrieverError):
    """A response body that does not follow the schema; the message says what is wrong."""


def parse_response(payload: Any) -> list[tuple[str, float | None]]:
    """The ranked list in a decoded response body; raises :class:`MalformedResponse` saying what is wrong."""
    if not isinstance(payload, Mapping) or not isinstance(payload.get("results"), list):
        raise MalformedResponse(f"expected a JSON object with a `results` list, like {SCHEMA_HINT}")
    ranked: list[tuple[str, float | None]] = []
    for pos, item in enumerate(payload["results"], start=1):
        if not isinstance(item, Mapping) or "doc_id" not in item:
            raise MalformedResponse(f"results[{pos - 1}] is not an object with a `doc_id`; expected {SCHEMA_HINT}")
        doc_id, score = item["doc_id"], item.get("score")
        if isinstance(doc_id, int) and not isinstance(doc_id, bool):
            doc_id = str(doc_id)
        if not isinstance(doc_id, str):
            raise MalformedResponse(f"results[{pos - 1}].doc_id must be a string, got {type(doc_id).__name__}")
        if score is not None and (isinstance(score, bool) or not isinstance(score, (int, float))):
            raise MalformedResponse(f"results[{pos - 1}].score must be a number or null, got {type(score).__name__}")
        ranked.append((doc_id, None if score is None else float(score)))
    return ranked


def parse_answer(payload: Mapping[str, Any]) -> str | None:
    """The generated ``answer`` of a decoded response body (None when absent or null); raises
    :class:`MalformedResponse` when it is not a string."""
    answer = payload.get("answer")
    if answer is not None and not isinstance(answer, str):
        raise MalformedResponse(f"`answer` must be a string or null, got {type(answer).__name__}; expected {SCHEMA_HINT}")
    return answer


class HttpRetriever(ClosesClient):
    """A retriever service reached over HTTP. ``transport`` (an httpx transport) replaces the network in tests."""

    remote = True  # the circuit breaker guards it (see evalops.retrievers.base)

    def __init__(
        self,
        url: str,
        *,
        timeout: float = 10.0,
        stall_timeout: float | None = None,
        concurrency: int = 8,
        retry: RetryPolicy | None = None,
        auth: AuthHeader | None = None,
        body: Mapping[str, Any] | None = None,
        transport: Any = None,
        sleep: Callable[[float], None] = time.sleep,
        max_response_bytes: int = DEFAULT_MAX_RESPONSE_BYTES,
    ):
        if not url.startswith(("http://", "https://")):
            raise ConfigError(f"http: url must start with http:// or https://, got {mask_url(url)!r}")
        self.url = url
        self.breaker: CircuitBreaker | None = None
        self.body = dict(body or {})
        self._secrets: list[Secret] = []
        headers: dict[str, str] = {}
        if auth is not None:
            name, secret = auth.resolve()
            headers[name] = secret.reveal()
            # Scrub the whole header value and, with a scheme, the bare token too.
            self._secrets = [secret, *(Secret(t) for t in secret.reveal().split(" ", 1)[1:])]
        self._client = HttpClient(timeout=timeout, stall_timeout=5.0 if stall_timeout is None else stall_timeout,
                                  retry=retry, concurrency=concurrency, headers=headers, transport=transport,
                                  sleep=sleep, max_response_bytes=max_response_bytes)
        self.timeout = self._client.timeout
        self.stall_timeout = self._client.stall_timeout
        self.retry = self._client.retry
        self.concurrency = int(concurrency)

    def __repr__(self) -> str:
        return f"HttpRetriever({mask_url(self.url)!r}, concurrency={self.concurrency}, timeout={self.timeout})"

    def attach_breaker(self, breaker: CircuitBreaker | None) -> None:
        """Stop calling the service once ``breaker`` is open (see the module docstring)."""
        self.breaker = breaker

    def _scrub(self, text: str) -> str:
        """No credential, URL secret or personal data (a server may echo the query) in an error text."""
        from evalops.querylog.scrub import scrub

        for s in self._secrets:
            if s.reveal():
                text = text.replace(s.reveal(), "***")
        return scrub(mask_text(text)).text

    def _fail(self, query: Query, why: str, retries: int, started: float) -> QueryResult:
        return QueryResult.failure(query.id, self._scrub(f"query {query.id!r}: {why}"), retries, time.perf_counter() - started)

    def _one(self, query: Query, k: int) -> QueryResult:
        started = time.perf_counter()
        payload = {**self.body, "query_id": query.id, "query": query.text, "k": k}
        if query.history:
            payload["history"] = [h.to_dict() for h in query.history]
        out = self._client.request("POST", self.url, json=payload, breaker=self.breaker, label=f"query {query.id!r}")
        if out.stopped == "breaker" and out.attempts == 0 and self.breaker is not None:
            return QueryResult.failure(query.id, self.breaker.reason(), 0, time.perf_counter() - started)
        if isinstance(out.error, ResponseTooLarge):
            return self._fail(query, f"{mask_url(self.url)}: {out.problem} (in the retriever's params)", out.retries,
                              started)
        if out.kind == "error":
            return self._fail(query, f"request failed ({type(out.error).__name__}: {out.error})", out.retries, started)
        resp = out.response
        problem = out.problem
        if resp is not None:
            status = resp.status_code
            if 200 <= status < 300:
                return self._parse(query, resp, out.retries, started)
            snippet = resp.text[:200].replace("\n", " ")
            if out.stopped is None and 300 <= status < 400:
                return self._fail(query, f"HTTP {status} (a redirect, not followed and not retried): {snippet}",
                                  out.retries, started)
            if out.stopped is None:
                return self._fail(query, f"HTTP {status} (a client error, not retried): {snippet}", out.retries, started)
            problem = f"HTTP {status}: {snippet}"
        if out.stopped == "retry_after":
            problem += f" (Retry-After {out.retry_after:g} s is longer than retry_after_max {self.retry.retry_after_max:g} s)"
        return self._fail(query, f"{problem} (gave up after {out.attempts} attempts)", out.retries, started)

    def _parse(self, query: Query, resp: Any, retries: int, started: float) -> QueryResult:
        try:
            payload = json.loads(resp.content)
        except (ValueError, UnicodeDecodeError) as exc:
            return self._fail(query, f"response is not valid JSON ({exc}); expected {SCHEMA_HINT}", retries, started)
        try:
            ranked = parse_response(payload)
            answer = parse_answer(payload)
        except MalformedResponse as exc:
            return self._fail(query, f"malformed response: {exc}", retries, started)
        echoed = payload.get("query_id")
        if echoed is not None and str(echoed) != query.id:
            return self._fail(query, f"response is for query {echoed!r}", retries, started)
        return QueryResult(query.id, tuple(ranked), None, retries, time.perf_counter() - started, answer)

    def retrieve(self, queries: Sequence[Query], k: int) -> list[QueryResult]:
        def one(q: Query) -> QueryResult:
            result = self._one(q, k)
            if self.breaker is not None:
                self.breaker.record(result.ok)
            return result

        if len(queries) <= 1 or self.concurrency == 1:
            return [one(q) for q in queries]
        with ThreadPoolExecutor(max_workers=min(self.concurrency, len(queries)), thread_name_prefix="evalops-http") as pool:
            return list(pool.map(one, queries))

