"""Webhook delivery against a real HTTP server on 127.0.0.1, including the server being down."""

from __future__ import annotations

import logging

import pytest

from evalops.alerting import (
    LogNotifier,
    NotificationError,
    WebhookNotifier,
    deliver_alerts,
    idempotency_key,
    resolve_webhook_url,
    validation_alert,
)
from tests.alerting.hook_server import SECRET_PATH, dead_url, hook_server, url_of

@pytest.fixture
def server():
    with hook_server() as running:
        yield running


@pytest.fixture
def alert():
    return validation_alert(stage="query_logs", summary="12% malformed rows (max 5%)", day="2024-06-02",
                            source="include/logs")


def test_delivers_slack_payload(server, alert, store):
    outcomes = deliver_alerts([alert], store, [WebhookNotifier(url_of(server))])
    assert outcomes[0].delivered and not outcomes[0].errors
    path, content_type, payload = server.received[0]
    assert path == SECRET_PATH
    assert content_type == "application/json"
    # the path's slash gets a word joiner (nothing in an alert is linked but its report: test_autolinks)
    assert payload == {"text": alert.message.replace("include/logs", "include/\u2060logs"),
                       "alert_key": idempotency_key(alert)}
    assert store.rows[alert.dedup_key]["delivered"] is True


def test_server_down_keeps_alert_stored_and_undelivered(alert, store, caplog):
    url = dead_url()
    caplog.set_level(logging.DEBUG)
    outcomes = deliver_alerts([alert], store, [LogNotifier(), WebhookNotifier(url, timeout=2)])
    assert outcomes[0].delivered is False
    row = store.rows[alert.dedup_key]
    assert row["alert"] == alert and row["delivered"] is False
    assert row["error"].startswith("webhook: webhook unreachable")
    assert "s3cr3t" not in row["error"]
    assert "s3cr3t" not in caplog.text
    assert "query_logs" in caplog.text  # the log notifier still wrote it


def test_http_error_status_is_undelivered_and_retried_next_time(server, alert, store):
    server.status = 500
    first = deliver_alerts([alert], store, [WebhookNotifier(url_of(server))])
    assert first[0].delivered is False and "HTTP 500" in first[0].errors[0]
    server.status = 200
    second = deliver_alerts([alert], store, [WebhookNotifier(url_of(server))])
    assert second[0].delivered is True and second[0].created is False
    assert len(store.rows) == 1
    assert len(server.received) == 2
    third = deliver_alerts([alert], store, [WebhookNotifier(url_of(server))])
    assert third[0].skipped and len(server.received) == 2  # delivered once: not sent again


def test_a_timeout_is_unknown_not_undelivered(server, alert, store):
    server.delay = 1.5
    outcomes = deliver_alerts([alert], store, [WebhookNotifier(url_of(server), timeout=0.3)])
    assert outcomes[0].delivered is False and outcomes[0].status == "unknown"
    assert "timed out" in outcomes[0].errors[0] and "may have arrived" in outcomes[0].errors[0]
    assert store.rows[alert.dedup_key]["status"] == "unknown"


def test_slack_text_cannot_mention_a_channel_or_make_a_link(server, store):
    evil = validation_alert(stage="query_logs", summary="<!channel> <http://evil|click> & \u202e" + "x" * 20000,
                            day="2024-06-02", source="include/logs")
    deliver_alerts([evil], store, [WebhookNotifier(url_of(server))])
    text = server.received[0][2]["text"]
    assert "<" not in text and ">" not in text and "<!" not in text
    assert "&lt;!channel&gt; &lt;http:\u2060/\u2060/\u2060evil|click&gt; &amp;" in text
    assert "\u202e" not in text and len(text) < 4000 and "more characters)" in text


def test_url_never_logged_on_success(server, alert, store, caplog):
    caplog.set_level(logging.DEBUG)
    notifier = WebhookNotifier(url_of(server))
    deliver_alerts([alert], store, [notifier])
    assert server.received
    assert "s3cr3t" not in caplog.text
    assert "s3cr3t" not in repr(notifier)


def test_rejects_non_http_url():
    with pytest.raises(NotificationError, match="http"):
        WebhookNotifier("ftp://example.invalid/x")


def test_url_resolved_from_environment(monkeypatch):
    monkeypatch.setenv("EVALOPS_WEBHOOK_URL", "https://hooks.example.test/x")
    assert resolve_webhook_url("EVALOPS_WEBHOOK_URL") == "https://hooks.example.test/x"
    monkeypatch.delenv("EVALOPS_WEBHOOK_URL")
    assert resolve_webhook_url("EVALOPS_WEBHOOK_URL", conn_id=None) is None
