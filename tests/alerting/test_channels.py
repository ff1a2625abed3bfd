"""Teams (an Adaptive Card) and PagerDuty (Events API v2) delivery against a real HTTP server on 127.0.0.1."""

from __future__ import annotations

import json
import logging

import pytest

from evalops.alerting import Alert, Severity, deliver_alerts, idempotency_key
from evalops.alerting.channels import (
    ADAPTIVE_CARD,
    PAGERDUTY_SEVERITY,
    PagerDutyNotifier,
    TeamsNotifier,
    resolve_pagerduty_key,
)
from evalops.util.safetext import unlinked
from tests.alerting.hook_server import hook_server, url_of

ROUTING_KEY = "R0UT1NGk3y0000000000000000000000"
EVIL = "see [click here](http://evil.example/x) **now** <at>everyone</at> {{DATE(2017-02-14T06:08:00Z)}} \u202e"


@pytest.fixture
def server():
    with hook_server() as running:
        yield running


def _alert(severity: str = Severity.CRITICAL, **overrides) -> Alert:
    fields = dict(kind="regression", severity=severity, day="2024-06-02", title=f"handbook-search 2.0 {EVIL}",
                  message=f"nDCG@10 dropped\nworst query q1: {EVIL}", retriever="handbook-search",
                  version="2.0", measure="nDCG@10", fingerprint="fp1")
    return Alert(**{**fields, **overrides})


def _texts(card: dict) -> list[str]:
    return [run["text"] for block in card["body"] for run in block["inlines"]]


def test_teams_gets_an_adaptive_card_whose_text_is_never_read_as_markdown(server, store):
    alert = _alert()
    outcomes = deliver_alerts([alert], store, [TeamsNotifier(url_of(server))])
    assert outcomes[0].delivered
    _, content_type, payload = server.received[0]
    assert content_type == "application/json"
    assert payload["type"] == "message" and len(payload["attachments"]) == 1
    attachment = payload["attachments"][0]
    assert attachment["contentType"] == ADAPTIVE_CARD == "application/vnd.microsoft.card.adaptive"
    card = attachment["content"]
    assert card["type"] == "AdaptiveCard" and card["version"] == "1.4"
    # every text is a TextRun (no markdown, per the schema); no TextBlock could turn [label](url) into a link
    assert {block["type"] for block in card["body"]} == {"RichTextBlock"}
    assert {run["type"] for block in card["body"] for run in block["inlines"]} == {"TextRun"}
    assert "\"TextBlock\"" not in json.dumps(payload)
    texts = _texts(card)
    assert texts[0].startswith("handbook-search 2.0 see [click here]")  # shown as typed, not as a link
    # and with a word joiner after the separators Teams would link by itself (test_autolinks)
    assert texts[1:] == ["nDCG@\u206010 dropped", f"worst query q1: {unlinked(EVIL.replace(chr(0x202e), ''))}"]
    assert "\u202e" not in json.dumps(payload, ensure_ascii=False)


def test_a_teams_card_is_cut_at_the_message_limit(server, store):
    deliver_alerts([_alert(message="x" * 20000)], store, [TeamsNotifier(url_of(server))])
    body = _texts(server.received[0][2]["attachments"][0]["content"])[1]
    assert len(body) < 4000 and "more characters)" in body


def test_pagerduty_triggers_one_event_per_alert_with_a_stable_dedup_key(server, store):
    critical, warning = _alert(), _alert(Severity.WARNING, kind="retriever_partial")
    notifier = PagerDutyNotifier(ROUTING_KEY, url=url_of(server))
    server.status = 202  # PagerDuty's answer
    assert all(o.delivered for o in deliver_alerts([critical, warning], store, [notifier]))
    first, second = (body for _, _, body in server.received)
    assert first["routing_key"] == ROUTING_KEY and first["event_action"] == "trigger"
    assert first["dedup_key"] == idempotency_key(critical) != second["dedup_key"]
    assert first["payload"]["severity"] == "critical" and second["payload"]["severity"] == "warning"
    assert first["payload"]["summary"].startswith("handbook-search 2.0 see [click here]")
    assert first["payload"]["custom_details"]["measure"] == "nDCG@10"
    assert "\u202e" not in json.dumps(first, ensure_ascii=False)
    # the same alert sent again (a retry, a re-run of the day) carries the same dedup_key
    notifier.send(critical)
    assert server.received[-1][2]["dedup_key"] == first["dedup_key"]


def test_severity_mapping_is_explicit():
    assert PAGERDUTY_SEVERITY == {"critical": "critical", "warning": "warning"}
    body = PagerDutyNotifier(ROUTING_KEY, url="http://127.0.0.1:9/x").payload(_alert(severity="odd"))
    assert body["payload"]["severity"] == "error"  # an unknown severity still pages


def test_pagerduty_refusal_is_undelivered_and_the_key_is_never_written(server, store, caplog):
    caplog.set_level(logging.DEBUG)
    server.status = 400
    alert = _alert()
    notifier = PagerDutyNotifier(ROUTING_KEY, url=url_of(server))
    outcomes = deliver_alerts([alert], store, [notifier])
    assert outcomes[0].delivered is False and "HTTP 400" in outcomes[0].errors[0]
    assert ROUTING_KEY not in repr(store.rows) and ROUTING_KEY not in caplog.text
    assert ROUTING_KEY not in repr(notifier)


def test_pagerduty_key_from_the_environment(monkeypatch):
    monkeypatch.setenv("EVALOPS_PAGERDUTY_ROUTING_KEY", f" {ROUTING_KEY} ")
    assert resolve_pagerduty_key("EVALOPS_PAGERDUTY_ROUTING_KEY", conn_id=None) == ROUTING_KEY
    monkeypatch.delenv("EVALOPS_PAGERDUTY_ROUTING_KEY")
    assert resolve_pagerduty_key("EVALOPS_PAGERDUTY_ROUTING_KEY", conn_id=None) is None


def test_the_registry_picks_teams_and_pagerduty_from_the_settings(tmp_path, monkeypatch):
    from evalops.config import load_config
    from evalops.pipeline.notify import notifiers_for

    monkeypatch.setenv("EVALOPS_WEBHOOK_URL", "https://example.invalid/workflows/x")
    monkeypatch.setenv("EVALOPS_PAGERDUTY_ROUTING_KEY", ROUTING_KEY)
    env = {"EVALOPS_ALERTING__WEBHOOK_FORMAT": "teams"}
    cfg = load_config(tmp_path, environ=env)
    assert [n.name for n in notifiers_for(cfg.alerting)] == ["log", "teams", "pagerduty"]
    cfg = load_config(tmp_path, environ={})
    monkeypatch.delenv("EVALOPS_PAGERDUTY_ROUTING_KEY")
    assert [n.name for n in notifiers_for(cfg.alerting)] == ["log", "webhook"]


def test_a_named_routing_key_variable_that_is_missing_stops_the_run_before_any_work(tmp_path):
    from evalops.config import load_config
    from evalops.errors import ConfigError

    env = {"EVALOPS_ALERTING__PAGERDUTY_KEY_ENV": "TEAM_PD_KEY"}
    cfg = load_config(tmp_path, environ=env)
    with pytest.raises(ConfigError, match="TEAM_PD_KEY is not set.*PagerDuty routing key"):
        cfg.check_secrets(env)
    cfg.check_secrets({**env, "TEAM_PD_KEY": ROUTING_KEY})
