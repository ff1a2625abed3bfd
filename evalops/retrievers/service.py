"""A small local HTTP service that speaks the adapter's JSON schema (see :mod:`evalops.retrievers.http`).

``LocalService(handler)`` serves ``POST`` requests on 127.0.0.1 (a free port by default) from a thread.
``handler(body, headers) -> (status, payload)`` is a plain function: ``payload`` is a dict (sent as JSON)
or bytes (sent as is), so tests inject slow answers, 5xx, 4xx or broken JSON without patching anything.
:func:`retriever_handler` turns any Retriever into such a handler, which makes a built-in retriever
available as a service (the throughput benchmark and demos use it). Standard library only.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Mapping
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from evalops.retrievers.base import HistoryTurn, Query, Retriever, coerce_results

__all__ = ["LocalService", "retriever_handler"]

Handler = Callable[[dict[str, Any], Mapping[str, str]], tuple[int, Any]]


def retriever_handler(retriever: Retriever) -> Handler:
    """A handler answering ``{"query_id", "query", "k"}`` (and a turn's ``history``) with ``retriever``'s top
    k (500 on its failure), and its generated ``answer`` when it returns one (a RAG endpoint)."""

    def handle(body: dict[str, Any], headers: Mapping[str, str]) -> tuple[int, Any]:
        history = tuple(HistoryTurn(str(h["question"]), None if h.get("answer") is None else str(h["answer"]))
                        for h in body.get("history") or ())
        query = Query(str(body["query_id"]), str(body["query"]), history)
        result = coerce_results([query], retriever.retrieve([query], int(body["k"])), int(body["k"]))[0]
        if not result.ok:
            return 500, {"error": result.error}
        body = {"query_id": query.id, "results": [{"doc_id": d, "score": s} for d, s in result.ranked]}
        if result.answer is not None:
            body["answer"] = result.answer
        return 200, body

    return handle


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    request_queue_size = 128  # the socketserver default of 5 resets bursts of new connections


class LocalService:
    """``with LocalService(handler) as svc: ... svc.url ...``; ``requests`` counts the calls served."""

    def __init__(self, handler: Handler, host: str = "127.0.0.1", port: int = 0):
        self.handler = handler
        self.requests = 0
        self._lock = threading.Lock()
        service = self

        class _RequestHandler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"  # keep-alive, as a real service would
            # Headers and body go out in two writes; with Nagle's algorithm the second waits for the
            # client's delayed ACK (~40 ms per request).
            disable_nagle_algorithm = True

            def do_POST(self) -> None:  # noqa: N802 - the http.server naming
                length = int(self.headers.get("Content-Length", 0))
                raw = self.rfile.read(length)
                with service._lock:
                    service.requests += 1
                try:
                    body = json.loads(raw)
                except ValueError:
                    status, payload = 400, {"error": "request body is not JSON"}
                else:
                    status, payload = service.handler(body, dict(self.headers.items()))
                data = payload if isinstance(payload, bytes) else json.dumps(payload).encode()
                try:
                    self.send_response(status)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(data)))
                    self.end_headers()
                    self.wfile.write(data)
                except (BrokenPipeError, ConnectionResetError):
                    pass  # the client gave up (a timeout test); nothing to answer

            def log_message(self, format: str, *args: Any) -> None:
                pass  # no per-request lines on stderr

        self._server = _Server((host, port), _RequestHandler)
        self._thread = threading.Thread(
            target=self._server.serve_forever, kwargs={"poll_interval": 0.05}, name="evalops-local-service", daemon=True
        )

    @property
    def url(self) -> str:
        host, port = self._server.server_address[:2]
        return f"http://{host}:{port}/search"

    def start(self) -> LocalService:
        self._thread.start()
        return self

    def stop(self) -> None:
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(timeout=5)

    def __enter__(self) -> LocalService:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()
