"""A local fake OpenAI-compatible chat-completions server on 127.0.0.1, for tests, benchmarks and demos.

It answers like a judge model (by token overlap, the lexical judge's rules, read from the fenced fields
of the prompt) with optional ``latency``; ``script`` holds canned replies that are served first, one per
request, to play malformed, truncated, refused and rate-limited answers. ``requests`` counts every request;
``paths`` keeps each request's path and query string. A request whose path (the query string aside) does
not end in ``/chat/completions`` is answered 404.

    with FakeChatServer(latency=0.05) as server:
        settings = OpenAISettings(base_url=server.url, model="fake-judge")
"""

from __future__ import annotations

import json
import re
import threading
import time
from collections import deque
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from evalops.judges.base import JudgeItem
from evalops.judges.lexical import LexicalJudge

__all__ = ["FakeChatServer", "Reply", "completion"]

_FIELD = re.compile(r"<<<(.*?)>>>", re.S)


@dataclass
class Reply:
    """One canned reply: an HTTP status, a raw body (bytes or a JSON-able object), extra headers (a
    ``Content-Type`` among them replaces ``application/json``), a delay."""

    status: int = 200
    body: Any = None
    headers: dict[str, str] = field(default_factory=dict)
    delay: float = 0.0


def completion(content: str | None, *, finish_reason: str = "stop", refusal: str | None = None,
               prompt_tokens: int = 100, completion_tokens: int = 10) -> dict[str, Any]:
    message: dict[str, Any] = {"role": "assistant", "content": content}
    if refusal is not None:
        message["refusal"] = refusal
    return {"id": "chatcmpl-fake", "object": "chat.completion", "model": "fake-judge",
            "choices": [{"index": 0, "message": message, "finish_reason": finish_reason}],
            "usage": {"prompt_tokens": prompt_tokens, "completion_tokens": completion_tokens,
                      "total_tokens": prompt_tokens + completion_tokens}}


def _task_of(body: dict[str, Any]) -> str:
    fmt = body.get("response_format") or {}
    if fmt.get("type") == "json_schema":
        return fmt["json_schema"]["name"]
    return body.get("metadata", {}).get("task", "context_relevance")


def _answer(body: dict[str, Any]) -> str:
    task = _task_of(body)
    user = body["messages"][-1]["content"]
    fields = _FIELD.findall(user)
    query = fields[0] if fields else ""
    if task in ("context_relevance", "context_relevance_graded"):
        item = JudgeItem(task, query, context=fields[1] if len(fields) > 1 else "")
    elif task == "context_relevance_reference":
        item = JudgeItem(task, query, reference=fields[1], context=fields[2])
    elif task == "context_recall":
        item = JudgeItem(task, query, reference=fields[1], contexts=tuple(fields[2:]))
    elif task == "faithfulness":
        item = JudgeItem(task, query, answer=fields[1], contexts=tuple(fields[2:]))
    elif task == "answer_relevance":
        item = JudgeItem(task, query, answer=fields[1])
    else:
        item = JudgeItem(task, "", context=query)
    j = LexicalJudge().judge([item])[0]
    if task in ("context_relevance", "context_relevance_reference"):
        return json.dumps({"relevant": bool(j.label)})
    if task == "context_relevance_graded":
        return json.dumps({"grade": int(j.label or 0)})
    if task == "answer_relevance":
        return json.dumps({"score": int(j.label or 1)})
    return json.dumps(j.detail)


class FakeChatServer:
    def __init__(self, *, latency: float = 0.0, script: list[Reply] | None = None):
        self.latency = latency
        self.script: deque[Reply] = deque(script or [])
        self.requests = 0
        self.bodies: list[dict[str, Any]] = []
        self.headers: list[dict[str, str]] = []
        self.paths: list[str] = []
        self._lock = threading.Lock()
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: Any) -> None:  # keep test output clean
                pass

            def do_POST(self) -> None:  # noqa: N802 - http.server's naming
                length = int(self.headers.get("Content-Length") or 0)
                body = json.loads(self.rfile.read(length) or b"{}")
                with server._lock:
                    server.requests += 1
                    server.bodies.append(body)
                    server.headers.append(dict(self.headers))
                    server.paths.append(self.path)
                    reply = server.script.popleft() if server.script else None
                if not self.path.split("?", 1)[0].rstrip("/").endswith("/chat/completions"):
                    reply = Reply(404, {"error": {"message": f"no route {self.path}"}})
                if reply is None:
                    time.sleep(server.latency)
                    reply = Reply(200, completion(_answer(body)))
                elif reply.delay:
                    time.sleep(reply.delay)
                raw = reply.body if isinstance(reply.body, bytes) else json.dumps(reply.body).encode()
                self.send_response(reply.status)
                if not any(key.lower() == "content-type" for key in reply.headers):
                    self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(raw)))
                for key, value in reply.headers.items():
                    self.send_header(key, value)
                self.end_headers()
                self.wfile.write(raw)

        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._httpd.daemon_threads = True
        self._thread = threading.Thread(target=self._httpd.serve_forever, daemon=True)

    @property
    def judging_requests(self) -> int:
        """The requests that asked for a label: all but the preflights (``max_tokens`` 1, see
        :meth:`evalops.judges.OpenAIJudge.preflight`), which every judge step sends once."""
        with self._lock:
            return sum(1 for body in self.bodies if body.get("max_tokens") != 1)

    @property
    def url(self) -> str:
        host, port = self._httpd.server_address[:2]
        return f"http://{host}:{port}/v1"

    def start(self) -> FakeChatServer:
        self._thread.start()
        return self

    def stop(self) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()

    def __enter__(self) -> FakeChatServer:
        return self.start()

    def __exit__(self, *exc: Any) -> None:
        self.stop()
