"""The one HTTP client of evalops: retrievers, judges and webhooks send through :class:`HttpClient`.

One call of :meth:`HttpClient.request` is a series of attempts:

* **Deadline of an attempt**: ``timeout`` seconds for connecting, sending, waiting and reading the whole
  body, enforced on every socket operation (:mod:`evalops.transport.deadline`), so a server that drips a
  byte every 0.2 s fails at the deadline. ``stall_timeout`` is the stall detector: no byte for that long
  fails the attempt at once.
* **Deadline of the call**: an optional ``deadline`` (a ``time.monotonic()`` instant) bounds every attempt
  and every wait: an attempt gets at most the time left, and no retry is waited for past it.
* **Retries**: :class:`~evalops.transport.retry.RetryPolicy` (jitter, ``Retry-After``).
* **Circuit breaker**: with a :class:`~evalops.transport.breaker.CircuitBreaker`, no attempt is made once
  it is open.
* **Size of a body**: ``max_response_bytes`` (default :data:`evalops.util.limits.DEFAULT_MAX_RESPONSE_BYTES`)
  bounds the bytes of a response body as it is read (after any ``Content-Encoding`` is undone, so a
  compressed bomb is bounded too); a larger body ends the attempt as an ``error`` (not retried: the server
  would send it again) whose problem names the bound. Without it a 3 GB body took 1.57 GB of memory.

The result is an :class:`Outcome`: the final response, or why there is none; callers turn it into their
own results (a failed query, a missing label, an undelivered alert). httpx is imported when a client is
built, never at import time.
"""

from __future__ import annotations

import logging
import math
import random
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Self

from evalops.errors import ConfigError
from evalops.transport.breaker import CircuitBreaker
from evalops.transport.deadline import deadline_transport, request_deadline
from evalops.transport.retry import RetryPolicy, parse_retry_after, retryable_status
from evalops.util.limits import DEFAULT_MAX_RESPONSE_BYTES, size_text
from evalops.util.secrets import install_log_masking

__all__ = ["HttpClient", "Outcome", "ResponseTooLarge"]

log = logging.getLogger(__name__)


class ResponseTooLarge(Exception):
    """A response body longer than the client's ``max_response_bytes``; the message names the bound."""


@dataclass(frozen=True)
class Outcome:
    """How one :meth:`HttpClient.request` ended.

    ``response`` is the last response (any status) or None. ``kind`` is ``response``, ``timeout``,
    ``connection`` (connecting or the connection failed) or ``error`` (any other httpx error: not retried);
    ``problem`` says it in words (``HTTP 503``, ``exceeded the overall deadline of 2 s ...``, ``stalled: no
    data for 5 s``, ``connection failed (ConnectError)``). ``stopped`` says why a transient failure was not
    retried further: ``retries`` (all spent), ``deadline`` (the call's deadline), ``breaker`` (open),
    ``retry_after`` (the server asked for more than ``retry_after_max``); None when the outcome is final.
    ``sent`` is False when the request certainly never reached the server (no connection was made).
    """

    response: Any
    kind: str
    problem: str
    attempts: int
    stopped: str | None = None
    error: BaseException | None = None
    sent: bool = True
    retry_after: float | None = None

    @property
    def retries(self) -> int:
        return max(0, self.attempts - 1)

    @property
    def ok(self) -> bool:
        return self.response is not None and 200 <= self.response.status_code < 300


class ClosesClient:
    """``close`` and the context manager for an object whose one resource is ``self._client`` (an httpx
    client or an :class:`HttpClient`): closing the object closes the client."""

    _client: Any

    def close(self) -> None:
        self._client.close()

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class HttpClient(ClosesClient):
    """A keep-alive connection pool for ``concurrency`` threads, with the deadline, retry and breaker
    policies of the module docstring. ``transport`` (an httpx transport) replaces the network in tests;
    ``sleep`` and ``rng`` replace the waits and the jitter."""

    def __init__(
        self,
        *,
        timeout: float,
        stall_timeout: float | None = None,
        retry: RetryPolicy | None = None,
        concurrency: int = 8,
        headers: Mapping[str, str] | None = None,
        transport: Any = None,
        sleep: Callable[[float], None] = time.sleep,
        rng: random.Random | None = None,
        max_response_bytes: int = DEFAULT_MAX_RESPONSE_BYTES,
    ):
        import httpx

        install_log_masking()  # httpx logs each request's URL, credentials and all
        def positive(v: float) -> bool:  # NaN and infinity refused: a NaN deadline never fires
            return math.isfinite(v) and v > 0

        if concurrency < 1 or not positive(timeout) or (stall_timeout is not None and not positive(stall_timeout)):
            raise ConfigError(
                f"http: concurrency must be >= 1 and timeout, stall_timeout finite and > 0 (got {concurrency}, {timeout}, "
                f"{stall_timeout})"
            )
        if isinstance(max_response_bytes, bool) or not isinstance(max_response_bytes, int) or max_response_bytes < 1:
            raise ConfigError(f"http: max_response_bytes must be a whole number of bytes >= 1 (got {max_response_bytes!r})")
        self.max_response_bytes = max_response_bytes
        self.timeout = float(timeout)
        self.stall_timeout = min(self.timeout, float(stall_timeout) if stall_timeout is not None else self.timeout)
        self.retry = retry or RetryPolicy()
        self._sleep = sleep
        self._rng = rng or random.Random()
        limits = httpx.Limits(max_connections=concurrency, max_keepalive_connections=concurrency)
        if transport is None:
            transport = deadline_transport(limits=limits)
        self._client = httpx.Client(timeout=httpx.Timeout(self.stall_timeout), headers=dict(headers or {}),
                                    transport=transport, limits=limits)
        self._httpx = httpx

    def _attempt(self, method: str, url: str, budget: float, kwargs: Mapping[str, Any]) -> Outcome:
        """One attempt under the overall deadline ``budget``; the body is read inside it."""
        httpx = self._httpx
        started = time.monotonic()
        try:
            with request_deadline(budget):
                with self._client.stream(method, url, **kwargs) as response:
                    self._read(response)
        except httpx.TimeoutException as exc:
            if time.monotonic() - started >= budget * 0.99:
                problem = f"exceeded the overall deadline of {budget:.3g} s (a slow or dripping response)"
            else:
                problem = f"stalled: no data for {self.stall_timeout:g} s"
            return Outcome(None, "timeout", problem, 1, error=exc, sent=not isinstance(exc, httpx.ConnectTimeout))
        except httpx.TransportError as exc:
            return Outcome(None, "connection", f"connection failed ({type(exc).__name__})", 1, error=exc,
                           sent=not isinstance(exc, httpx.ConnectError))
        except httpx.HTTPError as exc:  # e.g. a body that cannot be decoded: not worth retrying
            return Outcome(None, "error", f"request failed ({type(exc).__name__})", 1, error=exc)
        except ResponseTooLarge as exc:
            return Outcome(None, "error", str(exc), 1, error=exc)
        return Outcome(response, "response", f"HTTP {response.status_code}", 1)

    def _read(self, response: Any) -> None:
        """Read the body into ``response`` (as ``response.read()`` does), at most ``max_response_bytes``."""
        cap = self.max_response_bytes
        declared = response.headers.get("content-length", "")
        if declared.isdigit() and int(declared) > cap and "content-encoding" not in response.headers:
            raise ResponseTooLarge(self._too_large(f"declares {int(declared):,} bytes"))
        parts, total = [], 0
        for part in response.iter_bytes():
            total += len(part)
            if total > cap:
                raise ResponseTooLarge(self._too_large(f"passed {cap:,} bytes"))
            parts.append(part)
        response._content = b"".join(parts)  # what httpx's own read() leaves: .content and .text work

    def _too_large(self, what: str) -> str:
        return (f"the response body {what}, more than max_response_bytes ({size_text(self.max_response_bytes)}); "
                "not read further. Raise max_response_bytes if answers are this large")

    def request(
        self,
        method: str,
        url: str,
        *,
        json: Any = None,
        headers: Mapping[str, str] | None = None,
        deadline: float | None = None,
        timeout: float | None = None,
        retry: RetryPolicy | None = None,
        breaker: CircuitBreaker | None = None,
        label: str = "request",
    ) -> Outcome:
        """Send until a final answer, a spent retry policy, the call's ``deadline``, or an open ``breaker``.

        ``timeout`` and ``retry`` override the client's for this call (a preflight: short, no retry);
        ``label`` names the call in the log line of each retry (never a URL: it may carry a secret)."""
        policy = retry or self.retry
        per_attempt = self.timeout if timeout is None else float(timeout)
        kwargs: dict[str, Any] = {"json": json}
        if headers:
            kwargs["headers"] = dict(headers)
        attempts = 0
        last: Outcome | None = None

        def stop(why: str) -> Outcome:
            if last is None:
                return Outcome(None, "timeout" if why == "deadline" else "connection",
                               "not sent", 0, stopped=why, sent=False)
            return Outcome(last.response, last.kind, last.problem, attempts, why, last.error, last.sent,
                           last.retry_after)

        while True:
            if breaker is not None and breaker.open:
                return stop("breaker")
            budget = per_attempt
            if deadline is not None:
                left = deadline - time.monotonic()
                if left <= 0:
                    return stop("deadline")
                budget = min(budget, left)
            attempts += 1
            last = self._attempt(method, url, budget, kwargs)
            if last.kind == "error":
                return Outcome(None, last.kind, last.problem, attempts, None, last.error)
            if last.response is not None:
                status = last.response.status_code
                if not retryable_status(status):
                    return Outcome(last.response, "response", last.problem, attempts)
                if status in (429, 503):
                    after = parse_retry_after(last.response.headers.get("retry-after"))
                    last = Outcome(last.response, last.kind, last.problem, 1, retry_after=after)
            if attempts > policy.max_retries:
                return stop("retries")
            if last.retry_after is not None and last.retry_after > policy.retry_after_max:
                return stop("retry_after")
            wait = policy.wait(attempts, self._rng, last.retry_after)
            if deadline is not None and time.monotonic() + wait >= deadline:
                return stop("deadline")
            if breaker is not None and breaker.open:
                return stop("breaker")
            log.info("retrying %s (retry %d of %d) in %.2f s: %s", label, attempts, policy.max_retries, wait,
                     last.problem)
            self._sleep(wait)
