"""Misbehaving local servers for the fault-injection suite: each one is a real socket on 127.0.0.1."""

from __future__ import annotations

import json
import socket
import threading
import time
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


def drip(conn: socket.socket, data: bytes, interval: float, stop: threading.Event) -> None:
    """Send ``data`` one byte every ``interval`` seconds until it is all sent or ``stop`` is set."""
    for i in range(len(data)):
        if stop.is_set():
            return
        conn.sendall(data[i : i + 1])
        time.sleep(interval)


class Dripper:
    """Accepts HTTP requests and answers one byte every ``interval`` seconds (headers included), forever."""

    def __init__(self, interval: float = 0.2):
        self.interval = interval
        self._sock = socket.create_server(("127.0.0.1", 0))
        self._stop = threading.Event()
        self.connections = 0
        threading.Thread(target=self._serve, daemon=True).start()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self._sock.getsockname()[1]}/search"

    def _serve(self) -> None:
        self._sock.settimeout(0.1)
        while not self._stop.is_set():
            try:
                conn, _ = self._sock.accept()
            except OSError:
                continue
            self.connections += 1
            threading.Thread(target=self._drip, args=(conn,), daemon=True).start()

    def _drip(self, conn: socket.socket) -> None:
        reply = b'HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 100000\r\n\r\n{"results": ['
        try:
            conn.recv(65536)
            drip(conn, reply + b" " * 100000, self.interval, self._stop)
        except OSError:
            pass
        finally:
            conn.close()

    def stop(self) -> None:
        self._stop.set()
        self._sock.close()


class BlackHole:
    """A listening port that accepts connections and never says a byte (a hung database or service)."""

    def __init__(self) -> None:
        self._sock = socket.create_server(("127.0.0.1", 0), backlog=64)
        self._held: list[socket.socket] = []
        self._stop = threading.Event()
        threading.Thread(target=self._serve, daemon=True).start()

    @property
    def port(self) -> int:
        return self._sock.getsockname()[1]

    def _serve(self) -> None:
        self._sock.settimeout(0.1)
        while not self._stop.is_set():
            try:
                conn, _ = self._sock.accept()
            except OSError:
                continue
            self._held.append(conn)

    def stop(self) -> None:
        self._stop.set()
        for c in self._held:
            c.close()
        self._sock.close()


class Webhook:
    """A webhook receiver whose behaviour per request comes from ``script`` (a list of actions, last repeats).

    Actions: ``("ok",)``, ``("status", code)``, ``("slow", seconds)`` (answers 200 after sleeping: the body
    has been received, so the alert *was* delivered even if the sender gave up). Every request body and
    ``Idempotency-Key`` header is kept in ``received``.
    """

    def __init__(self, script: list[tuple] | Callable[[int], tuple]):
        self.received: list[dict] = []
        self._lock = threading.Lock()
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self):  # noqa: N802
                length = int(self.headers.get("Content-Length", "0"))
                body = json.loads(self.rfile.read(length) or b"{}")
                with outer._lock:
                    n = len(outer.received)
                    outer.received.append({"body": body, "key": self.headers.get("Idempotency-Key")})
                action = script(n) if callable(script) else script[min(n, len(script) - 1)]
                if action[0] == "slow":
                    time.sleep(action[1])
                code = action[1] if action[0] == "status" else 200
                try:
                    self.send_response(code)
                    self.send_header("Content-Length", "2")
                    self.end_headers()
                    self.wfile.write(b"ok")
                except OSError:
                    pass

            def log_message(self, *args):
                pass

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        threading.Thread(target=self._server.serve_forever, daemon=True).start()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self._server.server_address[1]}/hook/T000/B000/SECRETHOOK"

    def distinct_keys(self) -> set[str]:
        return {r["key"] for r in self.received}

    def stop(self) -> None:
        self._server.shutdown()
        self._server.server_close()


def dead_port() -> int:
    """A port nothing listens on (bound, then closed)."""
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


class SearchService:
    """An HTTP retriever that answers every query with the same ``doc_ids`` (rank order), after failing the
    first ``fail_first`` requests with a 503 (so retries happen). Keeps every request's headers and body.
    ``on_first``: called once, when the first request arrives, before it is answered (a fault to inject)."""

    def __init__(self, doc_ids: list[str], fail_first: int = 0, fail_ids: frozenset[str] = frozenset(),
                 on_first: Callable[[], None] | None = None):
        self.requests: list[dict] = []
        self._lock = threading.Lock()
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self):  # noqa: N802
                body = json.loads(self.rfile.read(int(self.headers.get("Content-Length", "0"))) or b"{}")
                with outer._lock:
                    n = len(outer.requests)
                    outer.requests.append({"headers": dict(self.headers), "body": body, "path": self.path})
                if n == 0 and on_first is not None:
                    on_first()
                if n < fail_first or body.get("query_id") in fail_ids:
                    payload, code = b'{"error": "warming up"}', 503
                else:
                    k = int(body.get("k", 10))
                    results = [{"doc_id": d, "score": float(len(doc_ids) - i)} for i, d in enumerate(doc_ids[:k])]
                    payload, code = json.dumps({"query_id": body.get("query_id"), "results": results}).encode(), 200
                self.send_response(code)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)

            def log_message(self, *args):
                pass

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        threading.Thread(target=self._server.serve_forever, daemon=True).start()

    @property
    def port(self) -> int:
        return self._server.server_address[1]

    def stop(self) -> None:
        self._server.shutdown()
        self._server.server_close()
