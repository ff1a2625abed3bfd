"""A response body is read up to ``max_response_bytes`` and no further: a longer one (declared, streamed or
compressed) ends the attempt as an error naming the bound, not retried, before it is held in memory."""

from __future__ import annotations

import gzip

import httpx
import pytest

from evalops.errors import ConfigError
from evalops.retrievers.base import Query
from evalops.retrievers.http import HttpRetriever
from evalops.transport import HttpClient, ResponseTooLarge, RetryPolicy

CAP = 64 << 10


def _streaming(pieces: list[int]):
    """A transport whose body is streamed in pieces of the given sizes; ``sent`` counts what it produced."""
    sent: list[int] = []
    calls: list[int] = []

    def body():
        for size in pieces:
            sent.append(size)
            yield b"x" * size

    def handler(request: httpx.Request) -> httpx.Response:
        calls.append(1)
        return httpx.Response(200, content=body())

    return httpx.MockTransport(handler), sent, calls


def test_a_streamed_body_past_the_bound_stops_the_reading_and_is_not_retried():
    transport, sent, calls = _streaming([16 << 10] * 1000)  # 16 MB if read to the end
    with HttpClient(timeout=5, retry=RetryPolicy(max_retries=3), transport=transport, max_response_bytes=CAP) as client:
        out = client.request("POST", "http://retriever.test/search", json={})
    assert out.kind == "error" and isinstance(out.error, ResponseTooLarge) and out.response is None
    assert "more than max_response_bytes (64KB)" in out.problem
    assert sum(sent) <= CAP + (32 << 10) and len(calls) == 1


def test_a_declared_length_past_the_bound_is_refused_before_reading():
    def handler(request: httpx.Request) -> httpx.Response:
        return httpx.Response(200, headers={"content-length": str(10 << 30)}, content=b"{}")

    with HttpClient(timeout=5, transport=httpx.MockTransport(handler), max_response_bytes=CAP) as client:
        out = client.request("GET", "http://retriever.test/")
    assert "declares 10,737,418,240 bytes" in out.problem


def test_a_compressed_body_is_bounded_by_what_it_decompresses_to():
    bomb = gzip.compress(b" " * (4 << 20))  # 4 KB on the wire

    def handler(request: httpx.Request) -> httpx.Response:
        return httpx.Response(200, headers={"content-encoding": "gzip"}, content=bomb)

    with HttpClient(timeout=5, transport=httpx.MockTransport(handler), max_response_bytes=CAP) as client:
        out = client.request("GET", "http://retriever.test/")
    assert isinstance(out.error, ResponseTooLarge)


def test_a_body_within_the_bound_is_read_whole():
    transport, sent, _ = _streaming([1000, 2000, 3000])
    with HttpClient(timeout=5, transport=transport, max_response_bytes=6000) as client:
        out = client.request("GET", "http://retriever.test/")
    assert out.ok and out.response.content == b"x" * 6000 and out.response.text == "x" * 6000


def test_the_bound_must_be_a_positive_whole_number():
    for bad in (0, -1, 1.5, True):
        with pytest.raises(ConfigError, match="max_response_bytes"):
            HttpClient(timeout=5, max_response_bytes=bad)


def test_the_http_retriever_fails_the_query_naming_its_url_and_the_bound():
    transport, _, calls = _streaming([8 << 10] * 100)
    with HttpRetriever("http://retriever.test/search", transport=transport, max_response_bytes=CAP,
                       retry=RetryPolicy(max_retries=2), sleep=lambda s: None) as retriever:
        [result] = retriever.retrieve([Query("q1", "refunds")], 10)
    assert not result.ok and len(calls) == 1
    assert "http://retriever.test/search: the response body passed 65,536 bytes" in result.error
    assert "max_response_bytes (64KB)" in result.error


def test_the_registry_takes_the_bound_within_its_range(tmp_path):
    from evalops.retrievers.schema import parse_entry

    entry = {"name": "s", "version": "1", "adapter": "http", "deployed": True, "owner": "me",
             "params": {"url": "http://h/s", "max_response_bytes": 10}}
    with pytest.raises(ConfigError, match="max_response_bytes"):
        parse_entry(entry, tmp_path / "retrievers.yaml", 1)
    entry["params"]["max_response_bytes"] = 1 << 20
    assert parse_entry(entry, tmp_path / "retrievers.yaml", 1).params["max_response_bytes"] == 1 << 20
