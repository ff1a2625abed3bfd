"""A Slack-compatible webhook receiver on 127.0.0.1 for tests: records each POST, answers ``status``."""

from __future__ import annotations

import contextlib
import json
import socket
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

SECRET_PATH = "/services/T000/B000/s3cr3t-t0ken"


class _Hook(BaseHTTPRequestHandler):
    def do_POST(self):  # noqa: N802 (http.server's naming)
        length = int(self.headers.get("Content-Length", 0))
        body = self.rfile.read(length)
        server = self.server
        server.received.append((self.path, self.headers.get("Content-Type"), json.loads(body)))
        if server.delay:
            time.sleep(server.delay)
        try:
            self.send_response(server.status)
            self.end_headers()
            self.wfile.write(b"ok")
        except (BrokenPipeError, ConnectionResetError):  # the client gave up (timeout test)
            pass

    def log_message(self, *args):  # keep test output quiet
        pass


@contextlib.contextmanager
def hook_server() -> Iterator[ThreadingHTTPServer]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Hook)
    server.received = []
    server.status = 200
    server.delay = 0.0
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield server
    finally:
        server.shutdown()
        server.server_close()
        thread.join(5)


def url_of(server) -> str:
    host, port = server.server_address[:2]
    return f"http://{host}:{port}{SECRET_PATH}"


def dead_url() -> str:
    """A URL on 127.0.0.1 where nothing listens (a port bound, then released)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    return f"http://127.0.0.1:{port}{SECRET_PATH}"
