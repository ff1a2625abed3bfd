"""Webhook delivery against a real HTTP server on 127.0.0.1, including the server being down."""

from __future__ import annotations

import json
import logging
import socket
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from evalops.alerting import (
    LogNotifier,
    NotificationError,
    WebhookNotifier,
    deliver_alerts,
    resolve_webhook_url,
    validation_alert,
)

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


@pytest.fixture
def hook_server():
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


def _url(server) -> str:
    host, port = server.server_address[:2]
    return f"http://{host}:{port}{SECRET_PATH}"


def _free_port_url() -> str:
    """A URL on 127.0.0.1 where nothing listens (bound, then released)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    return f"http://127.0.0.1:{port}{SECRET_PATH}"


@pytest.fixture
def alert():
    return validation_alert(stage="query_logs", summary="12% malformed rows (max 5%)", day="2024-06-02",
                            source="include/logs")


def test_delivers_slack_payload(hook_server, alert, store):
    outcomes = deliver_alerts([alert], store, [WebhookNotifier(_url(hook_server))])
    assert outcomes[0].delivered and not outcomes[0].errors
    path, content_type, payload = hook_server.received[0]
    assert path == SECRET_PATH
    assert content_type == "application/json"
    assert payload == {"text": alert.message}
    assert store.rows[alert.dedup_key]["delivered"] is True


def test_server_down_keeps_alert_stored_and_undelivered(alert, store, caplog):
    url = _free_port_url()
    caplog.set_level(logging.DEBUG)
    outcomes = deliver_alerts([alert], store, [LogNotifier(), WebhookNotifier(url, timeout=2)])
    assert outcomes[0].delivered is False
    row = store.rows[alert.dedup_key]
    assert row["alert"] == alert and row["delivered"] is False
    assert row["error"].startswith("webhook: webhook unreachable")
    assert "s3cr3t" not in row["error"]
    assert "s3cr3t" not in caplog.text
    assert "query_logs" in caplog.text  # the log notifier still wrote it


def test_http_error_status_is_undelivered_and_retried_next_time(hook_server, alert, store):
    hook_server.status = 500
    first = deliver_alerts([alert], store, [WebhookNotifier(_url(hook_server))])
    assert first[0].delivered is False and "HTTP 500" in first[0].errors[0]
    hook_server.status = 200
    second = deliver_alerts([alert], store, [WebhookNotifier(_url(hook_server))])
    assert second[0].delivered is True and second[0].created is False
    assert len(store.rows) == 1
    assert len(hook_server.received) == 2
    third = deliver_alerts([alert], store, [WebhookNotifier(_url(hook_server))])
    assert third[0].skipped and len(hook_server.received) == 2  # delivered once: not sent again


def test_timeout_is_undelivered(hook_server, alert, store):
    hook_server.delay = 1.5
    outcomes = deliver_alerts([alert], store, [WebhookNotifier(_url(hook_server), timeout=0.3)])
    assert outcomes[0].delivered is False
    assert "timed out" in outcomes[0].errors[0]


def test_url_never_logged_on_success(hook_server, alert, store, caplog):
    caplog.set_level(logging.DEBUG)
    notifier = WebhookNotifier(_url(hook_server))
    deliver_alerts([alert], store, [notifier])
    assert hook_server.received
    assert "s3cr3t" not in caplog.text
    assert "s3cr3t" not in repr(notifier)


def test_rejects_non_http_url():
    with pytest.raises(NotificationError, match="http"):
        WebhookNotifier("ftp://example.invalid/x")


def test_url_resolved_from_environment(monkeypatch):
    monkeypatch.setenv("EVALOPS_WEBHOOK_URL", "https://hooks.example.test/x")
    assert resolve_webhook_url() == "https://hooks.example.test/x"
    monkeypatch.delenv("EVALOPS_WEBHOOK_URL")
    assert resolve_webhook_url(conn_id=None) is None
