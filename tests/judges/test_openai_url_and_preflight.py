"""The judge's URL is joined as a URL (an Azure-style deployment keeps its ``?api-version=``), and the
preflight request turns an unreachable or unauthorised endpoint into one line before any judging."""

from __future__ import annotations

import pytest

from evalops.judges import JudgeItem, OpenAIJudge, OpenAISettings
from evalops.judges.fakeserver import FakeChatServer, Reply
from evalops.judges.openai import endpoint_url
from tests.judges.conftest import closed_port

ITEM = JudgeItem("context_relevance", "vitamin d deficiency", context="Vitamin D deficiency and bone loss.")


@pytest.mark.parametrize("base, url", [
    ("https://x.openai.azure.com/openai/deployments/d?api-version=2024-02-01",
     "https://x.openai.azure.com/openai/deployments/d/chat/completions?api-version=2024-02-01"),
    ("https://x.openai.azure.com/openai/deployments/d/?api-version=2024-02-01#frag",
     "https://x.openai.azure.com/openai/deployments/d/chat/completions?api-version=2024-02-01"),
    ("http://127.0.0.1:8000/v1", "http://127.0.0.1:8000/v1/chat/completions"),
    ("http://127.0.0.1:8000/v1/", "http://127.0.0.1:8000/v1/chat/completions"),
    ("http://127.0.0.1:8000", "http://127.0.0.1:8000/chat/completions"),
])
def test_endpoint_url_keeps_the_query_string(base, url):
    assert endpoint_url(base, "chat/completions") == url


def test_an_azure_style_endpoint_is_called_at_its_deployment_with_the_api_version():
    with FakeChatServer() as server:
        host = server.url.rsplit("/v1", 1)[0]
        base = f"{host}/openai/deployments/judge-4o?api-version=2024-02-01"
        with OpenAIJudge(OpenAISettings(base_url=base, model="judge-4o", max_retries=0), api_key="k") as judge:
            assert judge.preflight() is None
            [j] = judge.judge([ITEM])
    assert j.missing is None and j.label == 1.0
    assert server.paths == ["/openai/deployments/judge-4o/chat/completions?api-version=2024-02-01"] * 2


def test_the_preflight_names_a_closed_port_and_the_missing_key(monkeypatch):
    monkeypatch.delenv("NO_SUCH_JUDGE_KEY", raising=False)
    url = f"http://127.0.0.1:{closed_port()}/v1"
    with OpenAIJudge(OpenAISettings(base_url=url, model="m", api_key_env="NO_SUCH_JUDGE_KEY",
                                    preflight_timeout=5)) as judge:
        cause = judge.preflight()
    assert cause == (f"judge preflight: cannot connect to {url}/chat/completions (connection refused); "
                     "no API key was found ($NO_SUCH_JUDGE_KEY is unset)")


@pytest.mark.parametrize("status, expected", [
    (401, "refused the credentials (HTTP 401)"),
    (403, "refused the credentials (HTTP 403)"),
    (404, "answered HTTP 404 (check judge.base_url and judge.model 'm')"),
    (500, "answered HTTP 500: "),
    (429, None),
])
def test_the_preflight_reads_the_answer(status, expected):
    with FakeChatServer(script=[Reply(status, {"error": {"message": "nope"}})]) as server:
        with OpenAIJudge(OpenAISettings(base_url=server.url, model="m"), api_key="k") as judge:
            cause = judge.preflight()
    assert server.requests == 1  # one request, never retried
    assert server.bodies[0]["max_tokens"] == 1
    if expected is None:
        assert cause is None
    else:
        assert cause.startswith(f"judge preflight: {server.url}/chat/completions ") and expected in cause
        assert "no API key" not in cause


OK = Reply(200, {"id": "x", "choices": [{"index": 0, "message": {"role": "assistant", "content": "OK"},
                                         "finish_reason": "length"}]})
HTML = {"Content-Type": "text/html; charset=utf-8"}


@pytest.mark.parametrize("reply, expected", [
    (Reply(302, b"", {"Location": "https://login.example/sso?token=s3cret"}),
     "answered HTTP 302, a redirect to https://login.example/sso?token=*** (redirects are not followed: "
     "set judge.base_url to the endpoint itself)"),
    (Reply(301, b"", {}), "answered HTTP 301, a redirect to nowhere"),
    (Reply(200, b"<html>\x1b[31mcaptive portal\n\xff</html>", HTML),
     "answered HTTP 200 that is not a chat completion (the body is not JSON): text/html; charset=utf-8, "
     "34 bytes: <html>\\x1b[31mcaptive portal\\n\\xff</html>"),
    (Reply(200, b"", {}), "answered HTTP 200 that is not a chat completion (the body is not JSON): "
                          "application/json, empty body"),
    (Reply(200, [1, 2]), "(the JSON is not an object)"),
    (Reply(200, {"status": "ok"}), "(no choices)"),
    (Reply(200, {"choices": [{"text": "OK"}]}), "(no choices[0].message.content)"),
    (Reply(200, {"choices": [{"message": {"content": 7}}]}), "(choices[0].message.content is not a string)"),
    (Reply(500, b"x" * 300, HTML), "answered HTTP 500: text/html; charset=utf-8, 300 bytes: " + "x" * 120 + "..."),
    (OK, None),
    (Reply(200, {"choices": [{"message": {"role": "assistant", "content": None}}]}), None),
])
def test_the_preflight_needs_a_chat_completion_and_says_what_came_back(reply, expected):
    """A redirect (not followed) and a 2xx that is not a chat completion fail the preflight: the cause names
    the endpoint, never the key, and shows the status, the content type and the first bytes, escaped."""
    with FakeChatServer(script=[reply]) as server:
        with OpenAIJudge(OpenAISettings(base_url=server.url, model="m"), api_key="sk-secret-key") as judge:
            cause = judge.preflight()
    assert server.requests == 1  # the redirect is not followed
    if expected is None:
        assert cause is None
        return
    assert cause.startswith(f"judge preflight: {server.url}/chat/completions answered HTTP ")
    assert expected in cause
    assert "sk-secret-key" not in cause and "s3cret" not in cause
    assert cause.isprintable() and cause.isascii()
