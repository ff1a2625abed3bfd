"""Per-notifier delivery state and the alerts to retry, on both backends."""

from __future__ import annotations

import datetime as dt

import pytest

from evalops.errors import InputError
from evalops.warehouse import (
    alert_deliveries,
    list_alerts,
    mark_alert_delivery,
    mark_notifier_delivery,
    record_alert,
    retryable_alerts,
)

DAY = dt.date(2024, 6, 2)


def _alert(engine, kind="validation_failed:gold_set"):
    alert, _ = record_alert(engine, kind=kind, retriever="*", day=DAY, severity="critical", message="m")
    return alert


def test_delivery_is_kept_per_notifier_and_attempts_count_up(engine):
    alert = _alert(engine)
    later = dt.datetime(2030, 1, 1, tzinfo=dt.timezone.utc)
    mark_notifier_delivery(engine, alert.id, "log", status="delivered")
    mark_notifier_delivery(engine, alert.id, "webhook", status="unknown", error="webhook: timed out", next_attempt_at=later)
    mark_alert_delivery(engine, alert.id, status="unknown", error="webhook: timed out")
    mark_notifier_delivery(engine, alert.id, "webhook", status="delivered")
    states = alert_deliveries(engine, [alert.id])[alert.id]
    assert states["log"]["status"] == "delivered" and states["log"]["attempts"] == 1
    assert states["webhook"]["status"] == "delivered" and states["webhook"]["attempts"] == 2
    assert states["webhook"]["next_attempt_at"] is None and states["webhook"]["error"] is None
    assert list(list_alerts(engine)["delivery_status"]) == ["unknown"]


def test_retryable_alerts_are_the_undelivered_ones_within_the_maximum_age(engine):
    pending = _alert(engine, "a")
    unknown = _alert(engine, "b")
    done = _alert(engine, "c")
    mark_alert_delivery(engine, unknown.id, status="unknown", error="timed out")
    mark_alert_delivery(engine, done.id, status="delivered")
    since = dt.datetime.now(dt.timezone.utc) - dt.timedelta(days=1)
    assert [a.id for a in retryable_alerts(engine, since)] == [pending.id, unknown.id]
    assert retryable_alerts(engine, dt.datetime.now(dt.timezone.utc) + dt.timedelta(days=1)) == []


def test_bad_statuses_are_refused(engine):
    alert = _alert(engine)
    with pytest.raises(InputError):
        mark_notifier_delivery(engine, alert.id, "webhook", status="pending")
    with pytest.raises(InputError):
        mark_alert_delivery(engine, alert.id, status="lost", error="x")
