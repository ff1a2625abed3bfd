"""The OpenAI-compatible judge against a local fake server: labels, retries, budgets and every malformed answer."""

from __future__ import annotations

import json

import pytest

from evalops.judges import JudgeItem, OpenAIJudge, OpenAISettings
from evalops.judges.fakeserver import FakeChatServer, Reply, completion

ITEM = JudgeItem("context_relevance", "vitamin d deficiency", context="Vitamin D deficiency and bone loss.")


def judge_for(server, **overrides):
    settings = dict(base_url=server.url, model="fake-judge", max_retries=2, backoff_base=0.001, backoff_max=0.01,
                    request_timeout=5.0, deadline_seconds=30.0)
    settings.update(overrides)
    return OpenAIJudge(OpenAISettings(**settings), api_key="sk-secret-test-key")


def test_a_well_formed_answer_is_a_label_with_tokens(fake_server):
    with judge_for(fake_server, price_input_per_1k=0.5, price_output_per_1k=1.5) as judge:
        [j] = judge.judge([ITEM])
    assert j.label == 1.0 and j.missing is None
    assert (j.input_tokens, j.output_tokens) == (100, 10)
    assert j.cost == pytest.approx(100 / 1000 * 0.5 + 10 / 1000 * 1.5)
    body = fake_server.bodies[0]
    assert body["model"] == "fake-judge" and body["temperature"] == 0.0 and body["seed"] == 0
    assert body["response_format"]["type"] == "json_schema"
    assert body["response_format"]["json_schema"]["schema"] == {
        "type": "object", "properties": {"relevant": {"type": "boolean"}}, "required": ["relevant"],
        "additionalProperties": False}
    assert fake_server.headers[0]["Authorization"] == "Bearer sk-secret-test-key"


def test_output_modes_and_sample_seeds(fake_server):
    with judge_for(fake_server, output_mode="json_object", seed=7) as judge:
        judge.judge([ITEM, JudgeItem(ITEM.task, ITEM.query, context=ITEM.context, sample=2)])
    assert [b["response_format"] for b in fake_server.bodies] == [{"type": "json_object"}] * 2
    assert sorted(b["seed"] for b in fake_server.bodies) == [7, 9]


MALFORMED = {
    "prose": (Reply(200, completion("The passage is relevant.")), "not JSON"),
    "broken json": (Reply(200, completion('{"relevant": tru')), "not valid JSON"),
    "wrong type": (Reply(200, completion('{"relevant": "yes"}')), "must be true or false"),
    "extra keys": (Reply(200, completion('{"relevant": true, "score": 3}')), "unexpected keys"),
    "truncated message": (Reply(200, completion('{"relev', finish_reason="length")), "truncated"),
    "truncated body": (Reply(200, b'{"id": "x", "choices": [{"message": {"content": "{\\"rel'), "not JSON"),
    "refusal field": (Reply(200, completion(None, refusal="I can't help with that.")), "refused"),
    "content filter": (Reply(200, completion('{"relevant": true}', finish_reason="content_filter")), "refused"),
    "null content": (Reply(200, completion(None)), "no message content"),
    "no choices": (Reply(200, {"id": "x", "choices": []}), "no choices"),
    "not an object": (Reply(200, [1, 2]), "not a chat completion"),
    "client error": (Reply(400, {"error": {"message": "bad request"}}), "HTTP 400"),
    "rate limited": (Reply(429, {"error": {"message": "slow down"}}), "rate limited (HTTP 429)"),
    "server error": (Reply(503, {"error": {"message": "overloaded"}}), "server error (HTTP 503)"),
}


@pytest.mark.parametrize("case", sorted(MALFORMED))
def test_every_malformed_answer_is_a_missing_label(case):
    reply, reason = MALFORMED[case]
    # Retryable replies are repeated for every attempt, so the retries are exhausted.
    with FakeChatServer(script=[reply] * 3) as server, judge_for(server) as judge:
        [j] = judge.judge([ITEM])
    assert j.label is None, f"{case} became the number {j.label}"
    assert reason in j.missing
    assert "sk-secret-test-key" not in j.missing


def test_rate_limits_and_server_errors_are_retried(fake_server):
    fake_server.script.extend([Reply(429, {}), Reply(502, {})])
    with judge_for(fake_server) as judge:
        [j] = judge.judge([ITEM])
    assert j.label == 1.0 and j.retries == 2
    assert fake_server.requests == 3 and judge.usage.retries == 2


def test_a_timeout_is_retried_then_missing():
    with FakeChatServer(script=[Reply(200, completion('{"relevant": true}'), delay=1.0)] * 2) as server:
        with judge_for(server, request_timeout=0.2, max_retries=1) as judge:
            [j] = judge.judge([ITEM])
    assert j.label is None and "timeout" in j.missing and "after 2 attempts" in j.missing


def test_the_deadline_makes_late_items_missing():
    # The first reply is immediate and the second outlasts the deadline, so which items finish depends on
    # the order of events, not on how fast a loaded machine serves them (the deadline only bounds the first).
    late = Reply(200, completion('{"relevant": true}'), delay=60.0)
    script = [Reply(200, completion('{"relevant": true}')), late, late, late]
    with FakeChatServer(script=script) as server, judge_for(server, deadline_seconds=3.0, max_concurrency=1) as judge:
        out = judge.judge([ITEM] * 4)
    assert out[0].label == 1.0
    assert out[1].label is None and "deadline passed after 1 attempts" in out[1].missing, out[1].missing
    assert all(j.label is None and "deadline passed before the request was sent" in j.missing for j in out[2:])
    assert server.requests == 2


def test_the_token_budget_stops_requests(fake_server):
    with judge_for(fake_server, max_tokens_per_run=200, max_concurrency=1) as judge:
        out = judge.judge([ITEM] * 5)
    assert [j.label for j in out[:2]] == [1.0, 1.0]
    assert all("budget exhausted" in j.missing for j in out[2:])
    assert fake_server.requests == 2 and judge.usage.input_tokens == 200


def test_the_cost_budget_stops_requests(fake_server):
    with judge_for(fake_server, max_cost_per_run=0.15, price_input_per_1k=1.0, max_concurrency=1) as judge:
        out = judge.judge([ITEM] * 3)
    assert [j.ok for j in out] == [True, True, False]


def test_the_key_comes_from_the_environment_and_is_never_shown(fake_server, monkeypatch):
    monkeypatch.setenv("MY_JUDGE_KEY", "sk-from-env")
    judge = OpenAIJudge(OpenAISettings(base_url=fake_server.url, model="m", api_key_env="MY_JUDGE_KEY"))
    judge.judge([ITEM])
    assert fake_server.headers[0]["Authorization"] == "Bearer sk-from-env"
    shown = repr(judge) + json.dumps(judge.settings_dict()) + json.dumps(judge.fingerprint.to_dict())
    assert "sk-from-env" not in shown


def test_concurrency_is_limited():
    import threading

    active, peak, lock = [0], [0], threading.Lock()
    server = FakeChatServer(latency=0.05)
    original = server._httpd.RequestHandlerClass.do_POST

    def counting(handler):
        with lock:
            active[0] += 1
            peak[0] = max(peak[0], active[0])
        try:
            original(handler)
        finally:
            with lock:
                active[0] -= 1

    server._httpd.RequestHandlerClass.do_POST = counting
    with server, judge_for(server, max_concurrency=3) as judge:
        out = judge.judge([ITEM] * 12)
    assert all(j.ok for j in out)
    assert 1 <= peak[0] <= 3


def test_settings_are_checked():
    from evalops.errors import ConfigError

    with pytest.raises(ConfigError, match="output_mode"):
        OpenAISettings(base_url="http://x", model="m", output_mode="xml")
    with pytest.raises(ConfigError, match="unknown judge settings"):
        OpenAISettings.from_mapping({"model": "m", "api_key": "sk"})
    with pytest.raises(ConfigError, match="base_url and a model"):
        OpenAIJudge(OpenAISettings(), api_key="")


def test_a_request_error_that_retrying_cannot_fix_is_missing_at_once(fake_server):
    import httpx

    calls = []

    def handler(request):
        calls.append(request)
        raise httpx.TooManyRedirects("loop", request=request)

    judge = OpenAIJudge(OpenAISettings(base_url="http://judge.invalid/v1", model="m"), api_key="k",
                        transport=httpx.MockTransport(handler))
    [j] = judge.judge([ITEM])
    assert j.label is None and "request failed (TooManyRedirects)" in j.missing and len(calls) == 1


@pytest.mark.parametrize("item, label", [
    (JudgeItem("context_relevance_graded", "vitamin d bone", context="Vitamin D and bone."), 3.0),
    (JudgeItem("context_relevance_reference", "q", reference="Vitamin D helps bone.", context="vitamin d helps bone"), 1.0),
    (JudgeItem("context_recall", "q", reference="Vitamin D helps bone. Iron cures scurvy.",
               contexts=("Vitamin D helps bone growth.", "Other text.")), 0.5),
    (JudgeItem("faithfulness", "q", answer="Bone needs vitamin D. The moon is cheese.",
               contexts=("vitamin D for bone",)), 0.5),
    (JudgeItem("answer_relevance", "vitamin d", answer="Vitamin D is made in skin."), 5.0),
])
def test_every_task_round_trips_through_the_server(fake_server, item, label):
    with judge_for(fake_server) as judge:
        [j] = judge.judge([item])
    assert j.label == pytest.approx(label)
    assert fake_server.bodies[0]["response_format"]["json_schema"]["name"] == item.task
    if item.task in ("faithfulness", "context_recall"):
        key = "claims" if item.task == "faithfulness" else "statements"
        assert len(j.detail[key]) == 2


def test_an_attached_circuit_breaker_stops_calling_once_the_missing_label_budget_is_spent():
    from evalops.transport import CircuitBreaker

    with FakeChatServer(script=[Reply(400, {"error": {"message": "bad request"}})] * 10) as server:
        with judge_for(server, max_concurrency=1) as judge:
            judge.attach_breaker(CircuitBreaker(total=10, budget=0.1, unit="judge items"))  # allows 1
            out = judge.judge([ITEM] * 10)
    assert [j.missing.startswith("HTTP 400") for j in out[:2]] == [True, True]
    assert out[2].missing == "not called: the circuit breaker opened after 2 failed judge items (the failure budget allows 1)"
    assert all(j.missing.startswith("not called: the circuit breaker opened") for j in out[3:])
    assert server.requests == 2
