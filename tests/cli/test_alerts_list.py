"""`evalops alerts list`: the stored alerts with their delivery, filtered by days and kind, as a table or
JSON; and the delivery reads "logged only" when the log was the only notifier (the dashboard said
"delivered (1)", as if someone had been told)."""

from __future__ import annotations

import datetime as dt
import json
import os

import pytest
from click.testing import CliRunner

from evalops.cli import main
from evalops.dashboard.links import Links
from evalops.dashboard.pages import _alert_row
from evalops.exitcodes import ExitCode
from evalops.warehouse import create_warehouse_engine, upgrade
from evalops.warehouse.alerts import delivery_text, mark_alert_delivery, mark_notifier_delivery, record_alert
from evalops.warehouse.dashboard import dashboard_alerts

TODAY = dt.datetime.now(dt.timezone.utc).date()


@pytest.mark.parametrize(("status", "attempts", "notifiers", "reads"), [
    ("delivered", 1, {"log": {"status": "delivered"}}, "logged only"),
    ("delivered", 1, {}, "logged only"),
    ("delivered", 1, {"log": {"status": "delivered"}, "webhook": {"status": "delivered"}}, "delivered to webhook"),
    ("delivered", 2, {"webhook": {"status": "delivered"}, "email": {"status": "delivered"}},
     "delivered to email, webhook (2 attempts)"),
    ("undelivered", 3, {"webhook": {"status": "undelivered"}}, "undelivered (3 attempts)"),
    ("suppressed", 0, {}, "suppressed (sent earlier)"),
])
def test_the_delivery_says_who_was_told(status, attempts, notifiers, reads):
    assert delivery_text(status, attempts, notifiers) == reads


@pytest.fixture
def project(tmp_path, monkeypatch):
    for name in list(os.environ):
        if name.startswith("EVALOPS_"):
            monkeypatch.delenv(name)
    url = f"sqlite:///{tmp_path / 'wh.db'}"
    engine = create_warehouse_engine(url)
    upgrade(engine)
    logged, _ = record_alert(engine, kind="regression", retriever="bm25", version="2.0", measure="nDCG@10",
                             day=TODAY, severity="critical", message="Regression: bm25 2.0\ndetails",
                             payload={"title": "Regression: bm25 2.0"})
    mark_notifier_delivery(engine, logged.id, "log", status="delivered")
    mark_alert_delivery(engine, logged.id, delivered=True)
    hooked, _ = record_alert(engine, kind="retriever_failed", retriever="svc", version="1", day=TODAY - dt.timedelta(days=10),
                             severity="critical", message="Retriever failed: svc 1", payload={"title": "Retriever failed: svc 1"})
    mark_notifier_delivery(engine, hooked.id, "log", status="delivered")
    mark_notifier_delivery(engine, hooked.id, "webhook", status="delivered")
    mark_alert_delivery(engine, hooked.id, delivered=True)
    (tmp_path / "evalops.yaml").write_text(f"warehouse_url: {url}\n")
    monkeypatch.chdir(tmp_path)
    yield engine
    engine.dispose()


def test_alerts_list_shows_each_alert_and_its_delivery(project):
    result = CliRunner().invoke(main, ["alerts", "list"])
    assert result.exit_code == ExitCode.SUCCESS, result.output
    lines = result.output.splitlines()
    assert lines[0].split() == ["day", "┃", "kind", "┃", "severity", "┃", "retriever", "┃", "version", "┃", "measure",
                                "┃", "delivery", "┃", "attempts", "┃", "title"]
    assert "retriever_failed" in lines[2] and "delivered to webhook" in lines[2]  # oldest first
    assert "regression" in lines[3] and "nDCG@10" in lines[3] and "logged only" in lines[3]

    result = CliRunner().invoke(main, ["alerts", "list", "--days", "7", "--format", "json"])
    assert result.exit_code == ExitCode.SUCCESS, result.output
    (only,) = json.loads(result.output)["alerts"]
    assert only["kind"] == "regression" and only["day"] == TODAY.isoformat() and only["attempts"] == 1
    assert only["delivery_status"] == "delivered" and only["delivery"] == "logged only"
    assert only["notifiers"] == {"log": "delivered"} and only["title"] == "Regression: bm25 2.0"

    result = CliRunner().invoke(main, ["alerts", "list", "--kind", "floor"])
    assert result.exit_code == ExitCode.SUCCESS and result.output.strip() == "no alert stored of kind floor"


def test_the_dashboard_says_logged_only(project):
    rows = {a["kind"]: _alert_row(a, Links()) for a in dashboard_alerts(project)}
    assert rows["regression"]["delivery"] == "logged only"
    assert rows["retriever_failed"]["delivery"] == "delivered to webhook"


def test_alerts_list_never_creates_a_warehouse(tmp_path, monkeypatch):
    for name in list(os.environ):
        if name.startswith("EVALOPS_"):
            monkeypatch.delenv(name)
    (tmp_path / "evalops.yaml").write_text("k: 10\n")
    monkeypatch.chdir(tmp_path)
    result = CliRunner().invoke(main, ["alerts", "list"])
    assert result.exit_code == ExitCode.BAD_INPUT and "no warehouse at" in result.output, result.output
    assert not (tmp_path / ".evalops").exists()
