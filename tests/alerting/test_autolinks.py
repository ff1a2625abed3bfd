"""Untrusted text in an alert never becomes a link in the medium that shows it: chat apps (Slack, Teams),
PagerDuty's web app and mail clients link ``evil.example/login``, ``http://...`` and ``user@host.tld`` with
no markup at all, so every such separator gets a word joiner (U+2060) in the rendered payload; the report's
own location, which evalops wrote, stays linkable."""

from __future__ import annotations

import re

import pytest

from evalops.alerting import Alert, EmailNotifier, Severity, WebhookNotifier
from evalops.alerting.channels import PagerDutyNotifier, adaptive_card
from evalops.util.safetext import WORD_JOINER, unlinked

WJ = WORD_JOINER
REPORT = "https://reports.example.org/2024-06-02/index.html"
HOSTILE = "login at evil.example/login or http://evil.example/x, mail user@host.tld, ｅｖｉｌ．ｅｘａｍｐｌｅ"
# what a linker would take for a link: a scheme, a dotted name with a letter label, or an address
LINKABLE = re.compile(r"[a-z]+://|[A-Za-z0-9-]+[.．。][A-Za-z]{2,}|[\w.+-]@[\w-]", re.IGNORECASE)


def _alert() -> Alert:
    return Alert(kind="regression", severity=Severity.CRITICAL, day="2024-06-02", title=f"drop on {HOSTILE}",
                 message=f"nDCG@10: 0.4567 -> 0.4012 at 12:00\nworst query q1: \"{HOSTILE}\"\nreport: {REPORT}",
                 retriever="handbook-search", version="2.0", measure="nDCG@10", fingerprint="fp1",
                 report_location=REPORT)


def _linkable(text: str) -> list[str]:
    return LINKABLE.findall(text.replace(REPORT, ""))


@pytest.mark.parametrize(("text", "expected"), [
    ("evil.example/login", f"evil.{WJ}example/{WJ}login"),
    ("http://evil.example", f"http:{WJ}/{WJ}/{WJ}evil.{WJ}example"),
    ("user@host.tld", f"user@{WJ}host.{WJ}tld"),
    ("ｅｖｉｌ．ｅｘａｍｐｌｅ", f"ｅｖｉｌ．{WJ}ｅｘａｍｐｌｅ"),
    ("0.4567 -> 0.4012 at 12:00. Done: yes", "0.4567 -> 0.4012 at 12:00. Done: yes"),  # numbers, sentences
])
def test_unlinked(text: str, expected: str) -> None:
    assert unlinked(text) == expected


def test_the_trusted_report_location_stays_linkable() -> None:
    assert unlinked(f"see {REPORT} not evil.example", [REPORT]) == f"see {REPORT} not evil.{WJ}example"


def test_slack_payload() -> None:
    text = WebhookNotifier("https://hooks.example/x").payload(_alert())["text"]
    assert f'"login at evil.{WJ}example/{WJ}login or http:{WJ}/{WJ}/{WJ}evil.{WJ}example/{WJ}x, mail ' \
           f'user@{WJ}host.{WJ}tld' in text
    assert f"report: {REPORT}" in text and "0.4567 -&gt; 0.4012 at 12:00" in text
    assert _linkable(text) == []


def test_teams_card() -> None:
    card = adaptive_card(_alert())["attachments"][0]["content"]
    texts = [run["text"] for block in card["body"] for run in block["inlines"]]
    assert texts[0] == f"drop on {unlinked(HOSTILE)}"
    assert texts[-1] == f"report: {REPORT}"
    assert [t for t in texts if _linkable(t)] == []


def test_pagerduty_event() -> None:
    event = PagerDutyNotifier("k" * 32, url="https://events.example/v2/enqueue").payload(_alert())
    assert event["payload"]["summary"] == f"drop on {unlinked(HOSTILE)}"
    assert event["payload"]["custom_details"]["report"] == REPORT
    assert _linkable(event["payload"]["summary"]) == _linkable(event["payload"]["custom_details"]["message"]) == []


def test_email_both_parts() -> None:
    msg = EmailNotifier(["oncall@example.com"]).compose(_alert(), "evalops@example.com")
    plain_part = msg.get_body(("plain",)).get_content()
    html_part = msg.get_body(("html",)).get_content()
    assert f"user@{WJ}host.{WJ}tld" in plain_part and f"user@{WJ}host.{WJ}tld" in html_part
    assert f"report: {REPORT}" in plain_part
    assert _linkable(plain_part) == _linkable(html_part) == _linkable(str(msg["Subject"])) == []
