"""A webhook that is slow, times out, then succeeds: the alert arrives under one key, and its state is right."""

from __future__ import annotations

import datetime as dt

import pytest

from evalops.alerting import LogNotifier, WebhookNotifier, deliver_alerts, retry_alerts, validation_alert
from evalops.pipeline.store import WarehouseAlertStore
from evalops.util.safetext import unlinked
from evalops.warehouse import alert_deliveries, create_warehouse_engine, list_alerts, upgrade
from tests.faults.servers import Webhook, dead_port


@pytest.fixture
def engine(tmp_path):
    eng = create_warehouse_engine(f"sqlite:///{tmp_path / 'wh.db'}")
    upgrade(eng)
    yield eng
    eng.dispose()


@pytest.fixture
def alert():
    return validation_alert(stage="gold_set", summary="3 duplicate judgments", day="2024-06-02", source="gold/")


def test_slow_then_timed_out_then_delivered_reaches_the_receiver_under_one_key(engine, alert):
    # The slow answer comes long after the sender's timeout, and the timeout leaves a loaded machine ample
    # time for the prompt one: the outcome depends on which request is slow, not on the machine's speed.
    hook = Webhook([("slow", 20.0), ("ok",)])
    store = WarehouseAlertStore(engine)
    notifiers = [LogNotifier(), WebhookNotifier(hook.url, timeout=3.0)]
    try:
        first = deliver_alerts([alert], store, notifiers)
        assert first[0].status == "unknown" and first[0].per_notifier == {"log": "delivered", "webhook": "unknown"}
        (row,) = list_alerts(engine).itertuples()
        assert row.delivery_status == "unknown"

        now = dt.datetime.now(dt.timezone.utc)
        assert retry_alerts(store, notifiers, now=now)[0].status == "unknown"  # backoff: not yet sent again
        assert len(hook.received) == 1
        later = retry_alerts(store, notifiers, now=now + dt.timedelta(minutes=6))
        assert later[0].status == "delivered"
        assert retry_alerts(store, notifiers, now=now + dt.timedelta(hours=1)) == []  # nothing left to retry
    finally:
        hook.stop()
    assert len(hook.received) == 2 and len(hook.distinct_keys()) == 1
    first_body, second_body = (r["body"] for r in hook.received)
    assert first_body["alert_key"] == second_body["alert_key"] == hook.received[0]["key"]
    assert "redelivery" not in first_body and second_body["redelivery"] is True
    assert second_body["redelivery_reason"] == "timed out"
    assert second_body["text"].startswith("[evalops: re-sent alert")
    states = alert_deliveries(engine, [row.id])[row.id]
    assert states["webhook"]["status"] == "delivered" and states["webhook"]["attempts"] == 2
    assert states["log"]["attempts"] == 1  # the log had it the first time: never sent there again
    assert list_alerts(engine).iloc[0]["delivery_status"] == "delivered"


def test_a_dead_webhook_is_undelivered_and_given_up_after_the_maximum_age(engine, alert):
    store = WarehouseAlertStore(engine)
    dead = [WebhookNotifier(f"http://127.0.0.1:{dead_port()}/hook", timeout=1)]
    assert deliver_alerts([alert], store, dead)[0].status == "undelivered"
    far = dt.datetime.now(dt.timezone.utc) + dt.timedelta(days=8)
    assert retry_alerts(store, dead, now=far, max_age=dt.timedelta(days=7)) == []
    assert list_alerts(engine).iloc[0]["delivery_status"] == "undelivered"


class _Killed(BaseException):
    """The process dying between the send and the record (not an exception any handler catches)."""


class _KilledAfterSending(WarehouseAlertStore):
    def mark_notifier_delivery(self, alert_id, notifier, **kwargs):
        if notifier == "webhook":
            raise _Killed
        super().mark_notifier_delivery(alert_id, notifier, **kwargs)


def test_an_alert_sent_again_after_a_kill_before_its_delivery_was_recorded_is_marked_a_redelivery(engine, alert):
    hook = Webhook([("ok",)])
    try:
        with pytest.raises(_Killed):
            deliver_alerts([alert], _KilledAfterSending(engine), [WebhookNotifier(hook.url, timeout=3.0)])
        (row,) = list_alerts(engine).itertuples()
        started = alert_deliveries(engine, [row.id])[row.id]["webhook"]
        assert row.delivery_status == "pending" and started["status"] == "pending" and started["attempts"] == 0

        rerun = deliver_alerts([alert], WarehouseAlertStore(engine), [WebhookNotifier(hook.url, timeout=3.0)])
        assert rerun[0].status == "delivered"
    finally:
        hook.stop()
    first, second = (r["body"] for r in hook.received)
    assert "redelivery" not in first and not first["text"].startswith("[evalops: re-sent")
    assert second["redelivery"] is True and second["redelivery_reason"] == "unconfirmed"
    assert second["alert_key"] == first["alert_key"] == hook.received[1]["key"] == hook.received[0]["key"]
    assert second["first_attempt_at"] == row.created_at.isoformat()
    assert second["previous_attempt_at"] == started["last_attempt_at"].isoformat()
    # the text goes out as every alert's does: no separator a chat app would auto-link (safetext.unlinked)
    assert second["text"].startswith(unlinked(f"[evalops: re-sent alert {alert.dedup_key}; the previous attempt was "
                                              "never confirmed"))
    states = alert_deliveries(engine, [row.id])[row.id]
    assert states["webhook"]["status"] == "delivered" and states["webhook"]["attempts"] == 1
