"""The one retry policy of every HTTP caller (retrievers, judges, webhooks).

What is retried: a timeout, a connection error, HTTP 429 and every 5xx. A 3xx (redirects are not
followed), any other 4xx and a response that cannot be decoded are final.

How long to wait before retry n: a random wait in ``[d/2, d]`` with ``d = min(backoff_max,
backoff · 2^(n-1))`` ("equal jitter": callers that failed together do not come back together, and no
retry comes back at once). A 429 or 503 with ``Retry-After`` (delay-seconds, or an HTTP-date) waits at
least that long: the wait is the larger of the two. A ``Retry-After`` longer than ``retry_after_max``
is not waited for: the call gives up at once and says so. The caller's overall deadline bounds every
wait (:class:`evalops.transport.HttpClient` gives up rather than sleep past it).
"""

from __future__ import annotations

import datetime as dt
import email.utils
import math
import random
from dataclasses import dataclass

from evalops.errors import ConfigError
from evalops.util import utc

__all__ = ["RetryPolicy", "parse_retry_after", "retryable_status"]


def retryable_status(status: int) -> bool:
    """HTTP 429 and every 5xx are transient; every other status is final."""
    return status == 429 or status >= 500


def parse_retry_after(value: str | None, now: dt.datetime | None = None) -> float | None:
    """Seconds to wait from a ``Retry-After`` header (delay-seconds or an HTTP-date; RFC 9110 10.2.3), or
    None when absent or unreadable. A date in the past is 0 s."""
    if value is None:
        return None
    text = value.strip()
    try:
        seconds = float(text)
    except ValueError:
        pass
    else:
        return max(0.0, seconds) if seconds == seconds else None  # NaN is unreadable
    try:
        when = email.utils.parsedate_to_datetime(text)
    except (TypeError, ValueError, IndexError):
        return None
    if when.tzinfo is None:  # an HTTP-date is always GMT
        when = when.replace(tzinfo=utc.UTC)
    now = now or utc.now()
    return max(0.0, (when - now).total_seconds())


@dataclass(frozen=True)
class RetryPolicy:
    """How often and how patiently to retry (see the module docstring)."""

    max_retries: int = 3
    backoff: float = 0.2
    backoff_max: float = 5.0
    retry_after_max: float = 60.0

    def __post_init__(self) -> None:
        values = (self.max_retries, self.backoff, self.backoff_max, self.retry_after_max)
        if not all(math.isfinite(v) and v >= 0 for v in values):  # NaN compares False both ways
            raise ConfigError(
                "retry: max_retries, backoff, backoff_max and retry_after_max must be finite and >= 0 "
                f"(got {self.max_retries}, {self.backoff}, {self.backoff_max}, {self.retry_after_max})"
            )

    def backoff_for(self, retry: int, rng: random.Random) -> float:
        """The jittered wait before retry ``retry`` (1-based), ignoring any ``Retry-After``."""
        ceiling = min(self.backoff_max, self.backoff * 2 ** (retry - 1))
        return ceiling * (0.5 + 0.5 * rng.random())

    def wait(self, retry: int, rng: random.Random, retry_after: float | None = None) -> float:
        """The wait before retry ``retry``: the jittered backoff, at least ``retry_after`` seconds."""
        own = self.backoff_for(retry, rng)
        return own if retry_after is None else max(own, retry_after)
