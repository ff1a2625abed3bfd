"""A dripping server, a black hole and a dead port behind an HTTP retriever: every call ends, nothing hangs."""

from __future__ import annotations

import pytest
from tests.faults.servers import BlackHole, Dripper, dead_port

from evalops.retrievers import HttpRetriever, Query, RetryPolicy, retrieve_run
from evalops.retrievers.scoring import FailureBudgetExceeded

NO_RETRY = RetryPolicy(max_retries=0)
QUERIES = [Query(f"q{i}", f"question {i}") for i in range(300)]


@pytest.fixture
def dripper():
    d = Dripper(interval=0.2)
    yield d
    d.stop()


def test_a_server_dripping_one_byte_at_a_time_hits_the_overall_deadline(dripper):
    # Each byte (every 0.2 s) arrives well within the stall timeout, even on a loaded machine: only the
    # overall deadline can end this request.
    with HttpRetriever(dripper.url, timeout=4.0, stall_timeout=3.0, retry=NO_RETRY) as r:
        (res,) = r.retrieve(QUERIES[:1], 10)
    assert not res.ok
    assert "overall deadline of 4 s" in res.error


def test_a_silent_server_is_detected_as_stalled():
    hole = BlackHole()
    try:
        with HttpRetriever(f"http://127.0.0.1:{hole.port}/", timeout=30, stall_timeout=0.5, retry=NO_RETRY) as r:
            (res,) = r.retrieve(QUERIES[:1], 10)
    finally:
        hole.stop()
    assert not res.ok and "stalled: no data for 0.5 s" in res.error


def test_a_dead_service_opens_the_circuit_breaker_after_the_budget_is_spent():
    url = f"http://127.0.0.1:{dead_port()}/search"
    calls = []
    retry = RetryPolicy(max_retries=3, backoff=0.05, backoff_max=0.1)
    with HttpRetriever(url, timeout=2, retry=retry, concurrency=4) as r:
        original = r._client._attempt

        def counting(method, url, budget, kwargs):
            calls.append(kwargs["json"]["query_id"])
            return original(method, url, budget, kwargs)

        r._client._attempt = counting
        with pytest.raises(FailureBudgetExceeded) as info:
            retrieve_run(r, QUERIES, k=10, failure_budget=0.02)
    result = info.value.result
    assert len(result.failed) == 300
    not_called = [q for q, why in result.failed.items() if why.startswith("not called: the circuit breaker")]
    # 2 % of 300 allows 6 failures: the 7th opens the breaker; those already in flight then stop retrying
    # (how many are in flight depends on the machine's load, so the bounds leave room).
    assert len(not_called) >= 240
    assert len(calls) < 150  # without the breaker: 300 queries x 4 attempts = 1200 calls
    assert r.breaker is None  # detached after the run
