"""HTTP at the edge, once: the client every retriever, judge and webhook sends through.

* :class:`HttpClient` / :class:`Outcome` (:mod:`evalops.transport.client`): attempts under an overall
  deadline, retries, the circuit breaker.
* :class:`RetryPolicy` (:mod:`evalops.transport.retry`): what is retried, jittered backoff, ``Retry-After``.
* :class:`CircuitBreaker` (:mod:`evalops.transport.breaker`): stop calling once the failure budget is spent.
* :func:`deadline_transport` / :func:`request_deadline` (:mod:`evalops.transport.deadline`): the sockets
  that hold the deadline against a dripping body.

Importing this package does not import httpx.
"""

from evalops.transport.breaker import CircuitBreaker
from evalops.transport.client import ClosesClient, HttpClient, Outcome, ResponseTooLarge
from evalops.transport.deadline import DeadlineExceeded, deadline_transport, request_deadline
from evalops.transport.retry import RetryPolicy, parse_retry_after, retryable_status

__all__ = [
    "CircuitBreaker",
    "ClosesClient",
    "DeadlineExceeded",
    "HttpClient",
    "Outcome",
    "ResponseTooLarge",
    "RetryPolicy",
    "deadline_transport",
    "parse_retry_after",
    "request_deadline",
    "retryable_status",
]
