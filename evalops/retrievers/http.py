"""The HTTP JSON adapter: one POST per query, bounded concurrency, retries with backoff, validated answers.

Request (``POST url``, JSON body)::

    {"query_id": "q1", "query": "how do refunds work", "k": 100, ...extra body fields from params}

Response (200, JSON)::

    {"query_id": "q1", "results": [{"doc_id": "d7", "score": 12.3}, {"doc_id": "d2", "score": 11.0}]}

A RAG endpoint may add its generated answer: ``{"query_id": "q1", "results": [...], "answer": "Refunds are
issued within 14 days."}``. ``answer`` is optional (absent or ``null``: no answer); when present it must be
a string, else the query fails as malformed. It is untrusted text, escaped wherever it is shown.

``query_id`` in the response is optional (when present it must match). ``results`` is in rank order;
``doc_id`` is a string (an integer is accepted and read as its decimal string); ``score`` is a number,
``null`` or absent (then the list order is the ranking); see :mod:`evalops.retrievers.base`.

Deadlines: ``timeout`` is the overall deadline of one attempt (connect, send, wait, read the whole body),
enforced on every socket operation (:mod:`evalops.retrievers.deadline`), so a server that drips a byte a
second fails at the deadline. ``stall_timeout`` (default ``min(timeout, 5)``) is the stall detector: no
byte for that long fails the attempt at once.

Retry policy: a timeout, a connection error, a 5xx and a 429 are retried up to ``max_retries`` times,
waiting ``min(backoff_max, backoff · 2^(n-1))`` before retry n (a ``Retry-After`` in seconds on a 429 or
503 is honoured, capped at ``backoff_max``). A 3xx (redirects are not followed) and any other 4xx are not
transient and are not retried. A malformed answer (not JSON, wrong shape) and any other httpx error are not
retried either. With a :class:`~evalops.retrievers.deadline.CircuitBreaker` attached (``retrieve_run``
attaches one), no call and no retry is made once the breaker is open. Concurrency: a thread pool of
``concurrency`` workers sharing one keep-alive connection pool (httpx is imported when the retriever is
built). The auth header value is a :class:`~evalops.retrievers.auth.Secret`; it is never logged and is
scrubbed from every error message.
"""

from __future__ import annotations

import json
import logging
import time
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any

from evalops.errors import ConfigError, RetrieverError
from evalops.retrievers.auth import AuthHeader, Secret
from evalops.retrievers.base import Query, QueryResult
from evalops.retrievers.deadline import CircuitBreaker, deadline_transport, request_deadline
from evalops.secrets import mask_url

__all__ = ["HttpRetriever", "MalformedResponse", "RetryPolicy", "parse_answer", "parse_response"]

log = logging.getLogger(__name__)

SCHEMA_HINT = '{"results": [{"doc_id": string, "score": number or null}, ...], "answer": string (optional)}'


@dataclass(frozen=True)
class RetryPolicy:
    """How often and how patiently to retry (see the module docstring)."""

    max_retries: int = 3
    backoff: float = 0.2
    backoff_max: float = 5.0

    def wait(self, retry: int, retry_after: str | None = None) -> float:
        if retry_after is not None:
            try:
                return min(self.backoff_max, max(0.0, float(retry_after)))
            except ValueError:
                pass  # an HTTP-date Retry-After: fall back to our own schedule
        return min(self.backoff_max, self.backoff * 2 ** (retry - 1))


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


class HttpRetriever:
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
    ):
        import httpx

        from evalops.secrets import install_log_masking

        install_log_masking()  # httpx logs each request's URL, credentials and all
        if not url.startswith(("http://", "https://")):
            raise ConfigError(f"http: url must start with http:// or https://, got {mask_url(url)!r}")
        if concurrency < 1 or timeout <= 0 or (stall_timeout is not None and stall_timeout <= 0):
            raise ConfigError(
                f"http: concurrency must be >= 1 and timeout, stall_timeout > 0 (got {concurrency}, {timeout}, "
                f"{stall_timeout})"
            )
        self.url = url
        self.timeout = float(timeout)
        self.stall_timeout = min(self.timeout, float(stall_timeout) if stall_timeout is not None else 5.0)
        self.breaker: CircuitBreaker | None = None
        self.concurrency = int(concurrency)
        self.retry = retry or RetryPolicy()
        self.body = dict(body or {})
        self._sleep = sleep
        self._secrets: list[Secret] = []
        headers: dict[str, str] = {}
        if auth is not None:
            name, secret = auth.resolve()
            headers[name] = secret.reveal()
            # Scrub the whole header value and, with a scheme, the bare token too.
            self._secrets = [secret, *(Secret(t) for t in secret.reveal().split(" ", 1)[1:])]
        limits = httpx.Limits(max_connections=self.concurrency, max_keepalive_connections=self.concurrency)
        if transport is None:
            transport = deadline_transport(limits=limits)
        self._client = httpx.Client(
            timeout=httpx.Timeout(self.stall_timeout),
            headers=headers,
            transport=transport,
            limits=limits,
        )
        self._httpx = httpx

    def __repr__(self) -> str:
        return f"HttpRetriever({mask_url(self.url)!r}, concurrency={self.concurrency}, timeout={self.timeout})"

    def close(self) -> None:
        self._client.close()

    def __enter__(self) -> HttpRetriever:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def attach_breaker(self, breaker: CircuitBreaker | None) -> None:
        """Stop calling the service once ``breaker`` is open (see the module docstring)."""
        self.breaker = breaker

    def _post(self, payload: Mapping[str, Any]) -> Any:
        """One attempt under the overall deadline; the body is read inside it."""
        with request_deadline(self.timeout):
            with self._client.stream("POST", self.url, json=payload) as resp:
                resp.read()
        return resp

    def _scrub(self, text: str) -> str:
        """No credential, URL secret or personal data (a server may echo the query) in an error text."""
        from evalops.querylog.scrub import scrub
        from evalops.secrets import mask_text

        for s in self._secrets:
            if s.reveal():
                text = text.replace(s.reveal(), "***")
        return scrub(mask_text(text)).text

    def _fail(self, query: Query, why: str, retries: int, started: float) -> QueryResult:
        return QueryResult.failure(query.id, self._scrub(f"query {query.id!r}: {why}"), retries, time.perf_counter() - started)

    def _one(self, query: Query, k: int) -> QueryResult:
        httpx = self._httpx
        started = time.perf_counter()
        payload = {**self.body, "query_id": query.id, "query": query.text, "k": k}
        attempt = 0
        breaker = self.breaker
        while True:
            if breaker is not None and breaker.open:
                return QueryResult.failure(query.id, breaker.reason(), attempt, time.perf_counter() - started)
            retry_after = None
            attempt_started = time.monotonic()
            try:
                resp = self._post(payload)
            except httpx.TimeoutException:
                if time.monotonic() - attempt_started >= self.timeout * 0.99:
                    problem = f"exceeded the overall deadline of {self.timeout:g} s (a slow or dripping response)"
                else:
                    problem = f"stalled: no data for {self.stall_timeout:g} s"
            except httpx.TransportError as exc:
                problem = f"connection failed ({type(exc).__name__})"
            except httpx.HTTPError as exc:  # e.g. a body that cannot be decoded: not worth retrying
                return self._fail(query, f"request failed ({type(exc).__name__}: {exc})", attempt, started)
            else:
                status = resp.status_code
                if 200 <= status < 300:
                    return self._parse(query, resp, attempt, started)
                snippet = resp.text[:200].replace("\n", " ")
                if 300 <= status < 400:
                    return self._fail(query, f"HTTP {status} (a redirect, not followed and not retried): {snippet}",
                                      attempt, started)
                if 400 <= status < 500 and status != 429:
                    return self._fail(query, f"HTTP {status} (a client error, not retried): {snippet}", attempt, started)
                problem = f"HTTP {status}: {snippet}"
                retry_after = resp.headers.get("retry-after") if status in (429, 503) else None
            if attempt >= self.retry.max_retries or (breaker is not None and breaker.open):
                return self._fail(query, f"{problem} (gave up after {attempt + 1} attempts)", attempt, started)
            attempt += 1
            wait = self.retry.wait(attempt, retry_after)
            log.info("retrying query %r (retry %d of %d) in %.2f s: %s", query.id, attempt, self.retry.max_retries, wait, self._scrub(problem))
            self._sleep(wait)

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

