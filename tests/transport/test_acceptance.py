"""The one HTTP client against real sockets on 127.0.0.1: the overall deadline holds against a dripping
body, and a 429's ``Retry-After`` is honoured, seen from the server's receive times."""

from __future__ import annotations

import email.utils
import json
import time

import pytest

from evalops.judges import JudgeItem, OpenAIJudge, OpenAISettings
from evalops.retrievers import HttpRetriever, Query, RetryPolicy
from tests.transport.servers import Scripted

pytestmark = pytest.mark.timeout(120, method="thread")  # a hang guard, not a duration assertion

ITEM = JudgeItem("context_relevance", "vitamin d deficiency", context="Vitamin D deficiency and bone loss.")
# A well-formed relevant verdict: were it read to the end, the judge would accept it as the label 1.0.
VERDICT = json.dumps({"choices": [{"message": {"content": '{"relevant": true}'}, "finish_reason": "stop"}]},
                     separators=(",", ":")).encode()


def judge_for(url: str, **overrides) -> OpenAIJudge:
    settings = dict(base_url=url, model="fake-judge", max_retries=2, backoff_base=0.001, backoff_max=0.01,
                    request_timeout=3.0, deadline_seconds=30.0, max_concurrency=1)
    settings.update(overrides)
    return OpenAIJudge(OpenAISettings(**settings), api_key="sk-test")


def test_the_verdict_is_a_label_when_it_arrives_in_time():
    server = Scripted([(200, {}, VERDICT, 0.0)])
    try:
        with judge_for(server.url) as judge:
            [j] = judge.judge([ITEM])
    finally:
        server.stop()
    assert j.label == 1.0 and j.missing is None


def test_a_judge_call_against_a_dripping_server_ends_at_its_deadline_with_the_item_missing():
    # One byte every 0.2 s: each read gets data well within the 3 s read timeout, so only an overall
    # deadline can end it; read to the end (about 17 s) the verdict would be accepted.
    server = Scripted([(200, {}, VERDICT, 0.2)])
    deadline, read_timeout = 2.0, 3.0
    try:
        with judge_for(server.url, deadline_seconds=deadline, request_timeout=read_timeout) as judge:
            [j] = judge.judge([ITEM])
    finally:
        server.stop()
    # read to the end the verdict would be accepted: the overall deadline, not the read timeout, ended it
    # (how long it took is a benchmark figure, not a test's: 2.00 s measured against 16.6 s before)
    assert j.label is None, "a label read past the deadline was accepted"
    assert j.missing.startswith("deadline passed after 1 attempts"), j.missing


def _retry_after_in_3_seconds_as_a_date() -> str:
    # An HTTP-date has whole seconds: 4 s ahead, truncated, is at least 3 s ahead.
    return email.utils.formatdate(time.time() + 4, usegmt=True)


@pytest.mark.parametrize("retry_after", ["3", "date"])
def test_a_judge_429_is_retried_after_its_retry_after(retry_after):
    value = _retry_after_in_3_seconds_as_a_date() if retry_after == "date" else retry_after
    server = Scripted([(429, {"Retry-After": value}, b"{}", 0.0), (200, {}, VERDICT, 0.0)])
    try:
        with judge_for(server.url) as judge:  # its own backoff is 1 to 10 ms
            [j] = judge.judge([ITEM])
    finally:
        server.stop()
    assert j.label == 1.0 and j.retries == 1
    first, second = server.received
    assert second - first >= 3.0, f"retried {second - first:.3f} s after the 429 (Retry-After: {value})"


def test_a_retriever_429_is_retried_after_its_retry_after():
    body = json.dumps({"results": [{"doc_id": "d1", "score": 1.0}]}).encode()
    server = Scripted([(429, {"Retry-After": "3"}, b"{}", 0.0), (200, {}, body, 0.0)])
    try:
        with HttpRetriever(server.url, retry=RetryPolicy(max_retries=2, backoff=0.001, backoff_max=0.01)) as r:
            [res] = r.retrieve([Query("q1", "refunds")], 5)
    finally:
        server.stop()
    assert res.ok and res.retries == 1
    first, second = server.received
    assert second - first >= 3.0, f"retried {second - first:.3f} s after the 429"


def test_a_retry_after_longer_than_the_deadline_is_not_waited_for():
    server = Scripted([(429, {"Retry-After": "30"}, b"{}", 0.0)])
    try:
        with judge_for(server.url, deadline_seconds=2.0) as judge:
            [j] = judge.judge([ITEM])
    finally:
        server.stop()
    assert j.label is None and j.missing == "deadline passed after 1 attempts (last: rate limited (HTTP 429))"
    assert len(server.received) == 1


def test_a_webhook_answered_by_a_dripping_server_ends_at_its_timeout_as_delivery_unknown():
    from evalops.alerting import Alert
    from evalops.alerting.notifiers import DeliveryUnknown, WebhookNotifier

    server = Scripted([(200, {}, b"ok" * 200, 0.2)])  # 80 s to drip, each byte well within the timeout
    alert = Alert(kind="regression", severity="critical", day="2025-03-01", title="t", message="m")
    try:
        with pytest.raises(DeliveryUnknown, match="timed out after 1 s; the alert may have arrived"):
            WebhookNotifier(server.url, timeout=1.0).send(alert)
    finally:
        server.stop()
    assert len(server.received) == 1  # one attempt: the delivery store owns the retries
