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


def test_a_suppressed_alert_is_stored_never_retried_and_not_a_sent_one(engine):
    from evalops.warehouse import last_sent_alerts

    def regression(day, suppressed=False, version="2.0"):
        alert, _ = record_alert(engine, kind="regression", retriever="r", day=day, severity="critical", message="m",
                                version=version, measure="nDCG@10", fingerprint_hash="fp", suppressed=suppressed)
        return alert

    first = regression(DAY)
    mark_alert_delivery(engine, first.id, status="delivered")
    quiet = regression(DAY + dt.timedelta(days=1), suppressed=True)
    regression(DAY, version="3.0")  # another version: another series
    assert quiet.delivery_status == "suppressed"
    since = dt.datetime.now(dt.timezone.utc) - dt.timedelta(days=1)
    assert quiet.id not in [a.id for a in retryable_alerts(engine, since)]
    sent = last_sent_alerts(engine, kind="regression", retriever="r", version="2.0", measure="nDCG@10",
                            fingerprint_hash="fp", before=DAY + dt.timedelta(days=2))
    assert [a.id for a in sent] == [first.id]  # the suppressed day is not a sent one
    assert last_sent_alerts(engine, kind="regression", retriever="r", version="2.0", measure="nDCG@10",
                            fingerprint_hash="fp", before=DAY) == []  # only days before
