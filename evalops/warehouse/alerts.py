"""Alerts: stored first (idempotently, under a de-duplication key), then marked delivered or not.

The de-duplication key is ``kind|retriever|version|measure|fingerprint|day``: the same regression found
again on the same day (a retry, a re-run) is the same alert and is not sent twice.

An alert stored ``suppressed`` (a regression already sent, unchanged, within the reminder cadence of
:mod:`evalops.alerting.cadence`) is never sent nor retried; :func:`last_sent_alerts` finds the alerts of a
series that were sent.

Delivery is recorded twice over: per notifier in ``alert_deliveries`` (so a retry goes only where the alert
did not arrive; ``pending`` there is an attempt that started and whose outcome was never recorded) and as
the alert's overall ``delivery_status`` (``pending``, ``delivered``,
``undelivered`` or ``unknown``: a timed-out attempt the receiver may have got).
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from sqlalchemy import select, update

from evalops.alerting.model import dedup_key
from evalops.errors import InputError, WarehouseError
from evalops.util.utc import as_utc
from evalops.warehouse._db import insert_for, now_utc, transaction
from evalops.warehouse.domain import AlertRow
from evalops.warehouse.tables import DELIVERY_STATUSES, alert_deliveries as deliveries, alerts

if TYPE_CHECKING:  # pragma: no cover
    import pandas as pd
    from sqlalchemy.engine import Engine

__all__ = [
    "alert_dedup_key",
    "alert_deliveries",
    "last_sent_alerts",
    "list_alerts",
    "delivery_text",
    "mark_alert_delivery",
    "mark_notifier_attempt",
    "mark_notifier_delivery",
    "record_alert",
    "retryable_alerts",
]

SEVERITIES = ("info", "warning", "critical")


def alert_dedup_key(
    kind: str, retriever: str, version: str | None, measure: str | None, fingerprint_hash: str | None, day: dt.date
) -> str:
    """The natural key of an alert: :func:`evalops.alerting.model.dedup_key` of its day."""
    return dedup_key(kind, retriever, version, measure, fingerprint_hash, day.isoformat())


def record_alert(
    engine: Engine,
    *,
    kind: str,
    retriever: str,
    day: dt.date,
    severity: str,
    message: str,
    version: str | None = None,
    measure: str | None = None,
    fingerprint_hash: str | None = None,
    payload: Mapping[str, Any] | None = None,
    run_id: int | None = None,
    ab_test_id: int | None = None,
    suppressed: bool = False,
) -> tuple[AlertRow, bool]:
    """Store an alert unless the same one is already stored; returns ``(alert, created)``.

    A new alert starts ``pending`` (``suppressed`` when it is not to be sent). When ``created`` is False the
    stored alert is returned unchanged, so the caller can see whether it was already delivered.
    """
    if not kind or not retriever or not message:
        raise InputError("an alert needs a kind, a retriever and a message")
    if severity not in SEVERITIES:
        raise InputError(f"alert severity {severity!r} is not one of {list(SEVERITIES)}")
    if isinstance(day, dt.datetime) or not isinstance(day, dt.date):
        raise InputError(f"alert day must be a date (the logical date's UTC day), got {day!r}")
    key = alert_dedup_key(kind, retriever, version, measure, fingerprint_hash, day)
    values = {
        "dedup_key": key,
        "kind": kind,
        "retriever": retriever,
        "version": version,
        "measure": measure,
        "fingerprint_hash": fingerprint_hash,
        "day": day,
        "severity": severity,
        "message": message,
        "payload": dict(payload or {}),
        "run_id": run_id,
        "ab_test_id": ab_test_id,
        "created_at": now_utc(),
        "delivery_status": "suppressed" if suppressed else "pending",
        "delivery_attempts": 0,
        "delivered_at": None,
        "delivery_error": None,
    }
    with transaction(engine, f"recording alert {key}") as conn:
        stmt = insert_for(conn, alerts).values(**values).on_conflict_do_nothing(index_elements=["dedup_key"])
        created = conn.execute(stmt.returning(alerts.c.id)).first() is not None
        row = conn.execute(select(alerts).where(alerts.c.dedup_key == key)).mappings().one()
    return _alert(row), created


def mark_alert_delivery(
    engine: Engine, alert_id: int, *, delivered: bool | None = None, status: str | None = None,
    error: str | None = None, at: dt.datetime | None = None,
) -> AlertRow:
    """Record the overall outcome of one delivery attempt (``error`` says why it failed). Give ``status``
    (one of the delivery statuses) or ``delivered`` (True for ``delivered``, False for ``undelivered``)."""
    if status is None:
        if delivered is None:
            raise InputError("mark_alert_delivery needs a status or delivered=True/False")
        status = "delivered" if delivered else "undelivered"
    if status not in DELIVERY_STATUSES or status == "pending":
        raise InputError(f"delivery status {status!r} is not one of delivered, undelivered, unknown")
    delivered = status == "delivered"
    if not delivered and not error:
        raise InputError("an undelivered alert needs the error that stopped its delivery")
    when = as_utc(at) if at is not None else now_utc()
    with transaction(engine, f"marking the delivery of alert {alert_id}") as conn:
        result = conn.execute(
            update(alerts)
            .where(alerts.c.id == alert_id)
            .values(
                delivery_status=status,
                delivery_attempts=alerts.c.delivery_attempts + 1,
                delivered_at=when if delivered else None,
                delivery_error=None if delivered else error,
            )
        )
        if result.rowcount != 1:
            raise WarehouseError(f"there is no alert with id {alert_id}")
        row = conn.execute(select(alerts).where(alerts.c.id == alert_id)).mappings().one()
    return _alert(row)


def mark_notifier_delivery(
    engine: Engine, alert_id: int, notifier: str, *, status: str, error: str | None = None,
    next_attempt_at: dt.datetime | None = None, at: dt.datetime | None = None,
) -> None:
    """Record one attempt at one notifier (an upsert on ``(alert_id, notifier)``; attempts count up)."""
    if status not in ("delivered", "undelivered", "unknown"):
        raise InputError(f"delivery status {status!r} is not one of delivered, undelivered, unknown")
    when = as_utc(at) if at is not None else now_utc()
    values = {
        "alert_id": int(alert_id), "notifier": notifier, "status": status, "attempts": 1,
        "last_attempt_at": when, "next_attempt_at": as_utc(next_attempt_at) if next_attempt_at else None,
        "delivered_at": when if status == "delivered" else None, "error": error,
    }
    with transaction(engine, f"recording the delivery of alert {alert_id} to {notifier}") as conn:
        stmt = insert_for(conn, deliveries).values(**values)
        stmt = stmt.on_conflict_do_update(
            index_elements=["alert_id", "notifier"],
            set_={**{c: stmt.excluded[c] for c in values if c not in ("alert_id", "notifier", "attempts")},
                  "attempts": deliveries.c.attempts + 1},
        )
        conn.execute(stmt)


def mark_notifier_attempt(engine: Engine, alert_id: int, notifier: str, *, at: dt.datetime | None = None) -> None:
    """Record that an attempt at one notifier starts (``pending``, ``last_attempt_at`` = ``at``), before the
    send: a process killed between the send and :func:`mark_notifier_delivery` leaves this row, and the next
    attempt knows the alert may have arrived. ``attempts`` counts recorded outcomes only."""
    when = as_utc(at) if at is not None else now_utc()
    values = {"alert_id": int(alert_id), "notifier": notifier, "status": "pending", "attempts": 0,
              "last_attempt_at": when, "next_attempt_at": None, "delivered_at": None, "error": None}
    with transaction(engine, f"recording an attempt to deliver alert {alert_id} to {notifier}") as conn:
        stmt = insert_for(conn, deliveries).values(**values)
        conn.execute(stmt.on_conflict_do_update(index_elements=["alert_id", "notifier"],
                                                set_={"status": "pending", "last_attempt_at": when}))


def alert_deliveries(engine: Engine, alert_ids: list[int]) -> dict[int, dict[str, dict[str, Any]]]:
    """``{alert_id: {notifier: {"status", "attempts", "next_attempt_at", "error", ...}}}`` for these alerts."""
    out: dict[int, dict[str, dict[str, Any]]] = {int(i): {} for i in alert_ids}
    if not alert_ids:
        return out
    with transaction(engine, "reading alert deliveries") as conn:
        rows = conn.execute(select(deliveries).where(deliveries.c.alert_id.in_([int(i) for i in alert_ids])))
        for row in rows.mappings():
            out[row["alert_id"]][row["notifier"]] = dict(row)
    return out


def retryable_alerts(engine: Engine, created_since: dt.datetime) -> list[AlertRow]:
    """Alerts not delivered (pending, undelivered, unknown; never suppressed ones) created at or after
    ``created_since``, oldest first."""
    stmt = (
        select(alerts)
        .where(alerts.c.delivery_status.not_in(("delivered", "suppressed")),
               alerts.c.created_at >= as_utc(created_since))
        .order_by(alerts.c.created_at, alerts.c.id)
    )
    with transaction(engine, "reading alerts to retry") as conn:
        return [_alert(row) for row in conn.execute(stmt).mappings()]


def last_sent_alerts(
    engine: Engine, *, kind: str, retriever: str, version: str | None, measure: str | None,
    fingerprint_hash: str | None, before: dt.date,
) -> list[AlertRow]:
    """The alerts of this (kind, retriever, version, measure, fingerprint) from days before ``before`` that
    were not suppressed, newest day first (the caller matches the rest of the series in the payload)."""

    def same(column: Any, value: Any) -> Any:
        return column.is_(None) if value is None else column == value

    stmt = (
        select(alerts)
        .where(alerts.c.kind == kind, alerts.c.retriever == retriever, same(alerts.c.version, version),
               same(alerts.c.measure, measure), same(alerts.c.fingerprint_hash, fingerprint_hash),
               alerts.c.day < before, alerts.c.delivery_status != "suppressed")
        .order_by(alerts.c.day.desc(), alerts.c.id.desc())
    )
    with transaction(engine, "reading the alerts sent for a regression") as conn:
        return [_alert(row) for row in conn.execute(stmt).mappings()]


def list_alerts(
    engine: Engine, *, delivery_status: str | None = None, retriever: str | None = None, since: dt.date | None = None,
    kind: str | None = None,
) -> pd.DataFrame:
    """Stored alerts, oldest first; ``delivery_status="undelivered"`` lists the ones to retry. ``since``: the
    alerts of that day and later; ``kind``: of that kind only."""
    import pandas as pd

    stmt = select(alerts).order_by(alerts.c.created_at, alerts.c.id)
    if delivery_status is not None:
        stmt = stmt.where(alerts.c.delivery_status == delivery_status)
    if kind is not None:
        stmt = stmt.where(alerts.c.kind == kind)
    if retriever is not None:
        stmt = stmt.where(alerts.c.retriever == retriever)
    if since is not None:
        stmt = stmt.where(alerts.c.day >= since)
    with transaction(engine, "reading alerts") as conn:
        rows = conn.execute(stmt).mappings().all()
    columns = list(AlertRow.__dataclass_fields__)
    return pd.DataFrame([{c: r[c] for c in columns} for r in rows], columns=columns)


def _alert(row: Mapping[str, Any]) -> AlertRow:
    """The one place a stored alert row becomes a domain object."""
    return AlertRow(**{name: row[name] for name in AlertRow.__dataclass_fields__})


# the notifier that only writes to the process's (or the task's) log: nobody is told by it alone
LOG_NOTIFIER = "log"


def delivery_text(status: str, attempts: int, notifiers: Mapping[str, Mapping[str, Any]]) -> str:
    """How an alert's delivery reads for a person: ``logged only`` when the log was the only notifier that
    had it (no webhook or e-mail is configured: nobody was told), ``delivered to webhook, email`` otherwise,
    and the status with its attempts when it is not delivered. ``notifiers``: the alert's per-notifier rows
    (:func:`alert_deliveries`). The stored ``delivery_status`` counts the log as a delivery."""
    plural = "" if attempts == 1 else "s"
    if status == "delivered":
        told = sorted(name for name, row in notifiers.items()
                      if name != LOG_NOTIFIER and row.get("status") == "delivered")
        if not told:
            return "logged only"
        return f"delivered to {', '.join(told)}" + (f" ({attempts} attempts)" if attempts > 1 else "")
    if status == "suppressed":
        return "suppressed (sent earlier)"
    return f"{status} ({attempts} attempt{plural})"
