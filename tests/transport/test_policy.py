"""The retry policy and the client's stopping rules, table by table (httpx's MockTransport, no sockets)."""

from __future__ import annotations

import datetime as dt
import random

import httpx
import pytest

from evalops.errors import ConfigError
from evalops.transport import CircuitBreaker, HttpClient, RetryPolicy, parse_retry_after, retryable_status

NOW = dt.datetime(2026, 3, 1, 12, 0, 0, tzinfo=dt.timezone.utc)


@pytest.mark.parametrize(
    ("header", "seconds"),
    [
        (None, None),
        ("3", 3.0),
        (" 1.5 ", 1.5),
        ("-4", 0.0),
        ("nan", None),
        ("soon", None),
        ("Sun, 01 Mar 2026 12:00:07 GMT", 7.0),
        ("Sun, 01 Mar 2026 11:59:00 GMT", 0.0),  # a date in the past: retry now
    ],
)
def test_retry_after_in_seconds_and_as_an_http_date(header, seconds):
    assert parse_retry_after(header, now=NOW) == seconds


@pytest.mark.parametrize(("status", "transient"), [(200, False), (301, False), (404, False), (429, True),
                                                   (500, True), (503, True)])
def test_only_429_and_5xx_are_transient(status, transient):
    assert retryable_status(status) is transient


def test_waits_are_jittered_within_half_to_the_whole_doubling_backoff():
    policy = RetryPolicy(backoff=1.0, backoff_max=5.0)
    rng = random.Random(7)
    for retry, ceiling in [(1, 1.0), (2, 2.0), (3, 4.0), (4, 5.0), (9, 5.0)]:
        waits = [policy.wait(retry, rng) for _ in range(200)]
        assert all(ceiling / 2 <= w <= ceiling for w in waits)
        assert max(waits) - min(waits) > ceiling / 4  # jittered, not one value


def test_retry_after_is_a_floor_on_the_wait():
    policy = RetryPolicy(backoff=1.0, backoff_max=5.0)
    rng = random.Random(1)
    assert policy.wait(1, rng, retry_after=3.0) == 3.0
    assert 2.0 <= policy.wait(3, rng, retry_after=0.5) <= 4.0


def test_a_negative_policy_is_refused():
    with pytest.raises(ConfigError, match="must be finite and >= 0"):
        RetryPolicy(max_retries=-1)


def client_for(handler, **kwargs) -> tuple[HttpClient, list[float]]:
    waits: list[float] = []
    return HttpClient(timeout=1.0, transport=httpx.MockTransport(handler), sleep=waits.append,
                      rng=random.Random(0), **kwargs), waits


def test_a_retry_after_beyond_its_maximum_gives_up_at_once():
    calls = []

    def handler(request):
        calls.append(request)
        return httpx.Response(429, headers={"Retry-After": "120"})

    client, waits = client_for(handler, retry=RetryPolicy(max_retries=3, retry_after_max=60))
    out = client.request("POST", "http://svc.test/x", json={})
    assert (out.stopped, out.attempts, out.retry_after, waits, len(calls)) == ("retry_after", 1, 120.0, [], 1)


def test_an_open_breaker_stops_before_any_attempt_and_between_retries():
    calls = []

    def handler(request):
        calls.append(request)
        breaker.record(False)  # each failure the run sees
        return httpx.Response(500)

    breaker = CircuitBreaker(total=10, budget=0.1)  # allows 1 failure; the 2nd opens it
    client, waits = client_for(handler, retry=RetryPolicy(max_retries=5, backoff=0.01))
    out = client.request("GET", "http://svc.test/x", breaker=breaker)
    assert (out.stopped, out.attempts, len(calls)) == ("breaker", 2, 2)
    again = client.request("GET", "http://svc.test/x", breaker=breaker)
    assert (again.stopped, again.attempts, again.response, len(calls)) == ("breaker", 0, None, 2)


def test_a_final_status_is_returned_without_retry():
    client, waits = client_for(lambda request: httpx.Response(404, text="no such model"))
    out = client.request("POST", "http://svc.test/x", json={})
    assert out.stopped is None and out.response.status_code == 404 and out.attempts == 1 and waits == []
