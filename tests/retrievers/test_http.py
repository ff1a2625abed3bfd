"""The HTTP adapter against a real HTTP server on 127.0.0.1 (and httpx's MockTransport for the schedule)."""

from __future__ import annotations

import logging
import threading
import time
from collections import Counter

import httpx
import pytest

from evalops.errors import ConfigError
from evalops.retrievers import AuthHeader, HttpRetriever, Query, RetryPolicy, retrieve_run

FAST = RetryPolicy(max_retries=3, backoff=0.01, backoff_max=0.05)
QUERIES = [Query(f"q{i}", f"question number {i}") for i in range(6)]


def answer(body, headers):
    qid = body["query_id"]
    return 200, {"query_id": qid, "results": [{"doc_id": f"{qid}-d{r}", "score": 10.0 - r} for r in range(body["k"])]}


def attempts_counter():
    counts: Counter[str] = Counter()
    lock = threading.Lock()

    def bump(qid: str) -> int:
        with lock:
            counts[qid] += 1
            return counts[qid]

    return counts, bump


def test_normal_responses_keep_rank_order_and_send_the_schema(service):
    seen = []

    def handler(body, headers):
        seen.append(body)
        return answer(body, headers)

    svc = service(handler)
    with HttpRetriever(svc.url, concurrency=4, retry=FAST, body={"collection": "handbook"}) as r:
        results = r.retrieve(QUERIES, 3)
    assert [x.query_id for x in results] == [q.id for q in QUERIES]
    assert all(x.ok and x.retries == 0 for x in results)
    assert results[2].ranked == (("q2-d0", 10.0), ("q2-d1", 9.0), ("q2-d2", 8.0))
    assert {b["query_id"]: b for b in seen}["q2"] == {"collection": "handbook", "query_id": "q2", "query": "question number 2", "k": 3}


def test_unscored_results_and_integer_doc_ids(service):
    svc = service(lambda body, h: (200, {"results": [{"doc_id": 7}, {"doc_id": "3", "score": None}]}))
    with HttpRetriever(svc.url, retry=FAST) as r:
        (res,) = r.retrieve(QUERIES[:1], 10)
    assert res.ranked == (("7", None), ("3", None))


def test_a_rag_endpoint_answer_is_kept_with_its_ranked_list_through_retrieve_run(service):
    answer_text = "Refunds take <b>14</b> days & more."

    def handler(body, headers):
        status, payload = answer(body, headers)
        if body["query_id"] != "q3":  # q3 returns no answer; q4 an explicit null
            payload["answer"] = None if body["query_id"] == "q4" else f"{answer_text} ({body['query_id']})"
        return status, payload

    svc = service(handler)
    with HttpRetriever(svc.url, concurrency=3, retry=FAST) as r:
        results = r.retrieve(QUERIES, 2)
        run = retrieve_run(r, QUERIES, k=2)
    assert results[0].ok and results[0].answer == f"{answer_text} (q0)"
    assert results[0].ranked == (("q0-d0", 10.0), ("q0-d1", 9.0))
    assert results[3].answer is None and results[4].answer is None
    assert run.answers == {q.id: f"{answer_text} ({q.id})" for q in QUERIES if q.id not in ("q3", "q4")}
    assert run.top_documents(1) == {q.id: [f"{q.id}-d0"] for q in QUERIES}


def test_slow_responses_past_the_timeout_fail_after_retries(service):
    def slow(body, headers):
        time.sleep(0.6)
        return answer(body, headers)

    svc = service(slow)
    with HttpRetriever(svc.url, timeout=0.1, concurrency=2, retry=RetryPolicy(max_retries=1, backoff=0.01)) as r:
        results = r.retrieve(QUERIES[:2], 5)
    assert [x.ok for x in results] == [False, False]
    assert results[0].retries == 1
    assert results[0].error == (
        "query 'q0': exceeded the overall deadline of 0.1 s (a slow or dripping response) (gave up after 2 attempts)"
    )
    assert svc.requests == 4  # two queries x (1 try + 1 retry)


@pytest.mark.parametrize("status", [301, 302, 307, 400, 404, 422])
def test_redirects_and_client_errors_are_not_retried(service, status):
    svc = service(lambda body, h: (status, {"error": "no"}))
    with HttpRetriever(svc.url, retry=FAST) as r:
        (res,) = r.retrieve(QUERIES[:1], 5)
    assert not res.ok and res.retries == 0 and svc.requests == 1
    assert f"HTTP {status}" in res.error and "not retried" in res.error


@pytest.mark.parametrize("status", [429, 500, 502, 503])
def test_server_errors_and_throttling_are_retried(service, status):
    svc = service(lambda body, h: (status, {"error": "busy"}))
    with HttpRetriever(svc.url, retry=FAST) as r:
        (res,) = r.retrieve(QUERIES[:1], 5)
    assert not res.ok and res.retries == 3 and svc.requests == 4


def test_timeouts_are_excluded_and_counted_not_scored_as_empty(service):
    def slow_for_q3(body, headers):
        if body["query_id"] == "q3":
            time.sleep(20.0)
        return answer(body, headers)

    svc = service(slow_for_q3)
    # a generous timeout, so the other queries never hit it on a loaded machine (q3 is far past it)
    with HttpRetriever(svc.url, timeout=3.0, retry=RetryPolicy(max_retries=0)) as r:
        result = retrieve_run(r, QUERIES, 2, failure_budget=0.5)
    assert result.partial and result.failed_ids == ["q3"]
    assert "q3" not in set(result.run.query_ids.tolist())
    assert len(result.run) == 2 * 5


def test_500s_then_success_are_retried_and_counted(service):
    counts, bump = attempts_counter()

    def flaky(body, headers):
        if bump(body["query_id"]) <= 2:
            return 500, {"error": "overloaded"}
        return answer(body, headers)

    svc = service(flaky)
    waits: list[float] = []
    with HttpRetriever(svc.url, concurrency=3, retry=RetryPolicy(max_retries=3, backoff=0.01), sleep=waits.append) as r:
        result = retrieve_run(r, QUERIES[:3], 2)
    assert not result.partial
    assert result.retries == 6  # 3 queries x 2 retries
    assert svc.requests == 9
    # equal jitter: retry n waits a random time in [d/2, d], d = 0.01 * 2^(n-1)
    first, second = sorted(waits)[:3], sorted(waits)[3:]
    assert all(0.005 <= w <= 0.01 for w in first) and all(0.01 <= w <= 0.02 for w in second), waits
    assert dict(counts) == {"q0": 3, "q1": 3, "q2": 3}


def test_persistent_500_gives_up_after_max_retries(service):
    svc = service(lambda body, h: (503, {"error": "down"}))
    with HttpRetriever(svc.url, retry=FAST) as r:
        (res,) = r.retrieve(QUERIES[:1], 5)
    assert not res.ok and res.retries == 3
    assert res.error.startswith("query 'q0': HTTP 503: ") and res.error.endswith("(gave up after 4 attempts)")
    assert svc.requests == 4


def test_400_is_not_retried(service):
    svc = service(lambda body, h: (400, {"error": "k too large"}))
    with HttpRetriever(svc.url, retry=FAST) as r:
        (res,) = r.retrieve(QUERIES[:1], 5)
    assert svc.requests == 1
    assert res.retries == 0
    assert res.error == 'query \'q0\': HTTP 400 (a client error, not retried): {"error": "k too large"}'


def test_429_is_retried_honouring_retry_after():
    calls = []

    def handler(request: httpx.Request) -> httpx.Response:
        calls.append(request)
        if len(calls) == 1:
            return httpx.Response(429, headers={"Retry-After": "0.03"}, json={})
        return httpx.Response(200, json={"results": [{"doc_id": "a", "score": 1.0}]})

    waits: list[float] = []
    r = HttpRetriever("http://svc.test/search", transport=httpx.MockTransport(handler), retry=FAST, sleep=waits.append)
    (res,) = r.retrieve(QUERIES[:1], 5)
    assert res.ok and res.retries == 1 and waits == [0.03]


@pytest.mark.parametrize(
    ("payload", "expected"),
    [
        (b"{not json", "response is not valid JSON"),
        ({"hits": []}, "malformed response: expected a JSON object with a `results` list"),
        ({"results": [{"score": 1.0}]}, "malformed response: results[0] is not an object with a `doc_id`"),
        ({"results": [{"doc_id": 1.5}]}, "malformed response: results[0].doc_id must be a string, got float"),
        ({"results": [{"doc_id": "a", "score": "high"}]}, "malformed response: results[0].score must be a number or null"),
        ({"query_id": "other", "results": []}, "response is for query 'other'"),
        ({"results": [], "answer": 42}, "malformed response: `answer` must be a string or null, got int"),
        ({"results": [], "answer": ["a"]}, "malformed response: `answer` must be a string or null, got list"),
    ],
)
def test_malformed_responses_name_the_query_and_are_not_retried(service, payload, expected):
    svc = service(lambda body, h: (200, payload))
    with HttpRetriever(svc.url, retry=FAST) as r:
        (res,) = r.retrieve(QUERIES[1:2], 5)
    assert not res.ok
    assert res.error.startswith(f"query 'q1': {expected}")
    assert svc.requests == 1


def test_connection_refused_is_retried_then_fails():
    waits: list[float] = []
    with HttpRetriever("http://127.0.0.1:9/search", retry=RetryPolicy(max_retries=2, backoff=0.01), sleep=waits.append) as r:
        (res,) = r.retrieve(QUERIES[:1], 5)
    assert res.error == "query 'q0': connection failed (ConnectError) (gave up after 3 attempts)"
    assert len(waits) == 2 and 0.005 <= waits[0] <= 0.01 and 0.01 <= waits[1] <= 0.02, waits


def test_auth_header_from_env_is_sent_and_never_logged(service, monkeypatch, caplog):
    secret = "tok-3f9a-very-secret"
    monkeypatch.setenv("HANDBOOK_TOKEN", secret)
    received = []

    def echoing(body, headers):
        received.append(headers.get("Authorization"))
        if body["query_id"] == "q1":  # a careless service echoing the header in its error body
            return 500, {"error": f"bad token {headers.get('Authorization')}"}
        return answer(body, headers)

    svc = service(echoing)
    caplog.set_level(logging.DEBUG)  # includes httpx's and httpcore's own loggers
    for name in ("httpx", "httpcore", "evalops"):
        logging.getLogger(name).setLevel(logging.DEBUG)
    with HttpRetriever(svc.url, auth=AuthHeader(env="HANDBOOK_TOKEN"), retry=FAST) as r:
        results = r.retrieve(QUERIES[:2], 2)
        text_of_retriever = repr(r) + str(vars(r))
    assert f"Bearer {secret}" in received
    assert results[0].ok and not results[1].ok
    assert "bad token ***" in results[1].error
    assert any(rec.name.startswith("httpx") for rec in caplog.records)  # httpx did log, at DEBUG/INFO
    assert any(rec.name.startswith("evalops") and "retrying" in rec.getMessage() for rec in caplog.records)
    assert secret not in caplog.text
    assert secret not in results[1].error
    assert secret not in text_of_retriever


def test_auth_from_a_missing_env_var_is_a_config_error(monkeypatch):
    monkeypatch.delenv("NOT_SET_TOKEN", raising=False)
    with pytest.raises(ConfigError, match="environment variable NOT_SET_TOKEN is not set"):
        HttpRetriever("http://127.0.0.1:9/search", auth=AuthHeader(env="NOT_SET_TOKEN"))


def test_auth_header_without_scheme_uses_the_bare_token(service, monkeypatch):
    monkeypatch.setenv("API_KEY", "k-123")
    got = []
    svc = service(lambda body, h: (got.append(h.get("X-Api-Key")), answer(body, h))[1])
    with HttpRetriever(svc.url, auth=AuthHeader(env="API_KEY", header="X-Api-Key", scheme=None), retry=FAST) as r:
        r.retrieve(QUERIES[:1], 1)
    assert got == ["k-123"]


@pytest.mark.airflow
def test_auth_header_from_an_airflow_connection(service, monkeypatch, tmp_path, caplog):
    monkeypatch.setenv("AIRFLOW_HOME", str(tmp_path / "airflow"))
    monkeypatch.setenv("AIRFLOW__CORE__LOAD_EXAMPLES", "False")
    monkeypatch.setenv("AIRFLOW_CONN_HANDBOOK_SEARCH", '{"conn_type": "http", "password": "conn-secret-42"}')
    got = []
    svc = service(lambda body, h: (got.append(h.get("Authorization")), answer(body, h))[1])
    caplog.set_level(logging.DEBUG)
    with HttpRetriever(svc.url, auth=AuthHeader(conn_id="handbook_search"), retry=FAST) as r:
        (res,) = r.retrieve(QUERIES[:1], 1)
    assert res.ok and got == ["Bearer conn-secret-42"]
    assert "conn-secret-42" not in caplog.text


def test_bad_configuration_is_rejected():
    with pytest.raises(ConfigError, match="url must start with http"):
        HttpRetriever("ftp://x")
    with pytest.raises(ConfigError, match="exactly one of"):
        AuthHeader(env="A", conn_id="b")


def test_a_builtin_served_over_http_gives_the_same_run_as_called_directly(service, small_corpus):
    from evalops.retrievers import BM25Retriever, retriever_handler

    bm25 = BM25Retriever(small_corpus)
    queries = [Query("a", "refund unopened"), Query("b", "出差住宿"), Query("c", "ORDER-2024 declined"), Query("d", "zzz")]
    svc = service(retriever_handler(bm25))
    with HttpRetriever(svc.url, concurrency=4, retry=FAST) as r:
        over_http = retrieve_run(r, queries, 5)
    direct = retrieve_run(bm25, queries, 5)
    assert over_http.run.to_dict() == direct.run.to_dict()
    assert over_http.run.doc_ids.tolist() == direct.run.doc_ids.tolist()


def test_other_httpx_errors_fail_the_query_without_retry():
    calls = []

    def handler(request):
        calls.append(1)
        raise httpx.DecodingError("bad gzip stream")

    r = HttpRetriever("http://svc.test/search", transport=httpx.MockTransport(handler), retry=FAST)
    (res,) = r.retrieve(QUERIES[:1], 5)
    assert res.error == "query 'q0': request failed (DecodingError: bad gzip stream)" and calls == [1]
