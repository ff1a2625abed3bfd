"""Alerts: stored first (idempotently, under a de-duplication key), then marked delivered or not.

The de-duplication key is ``kind|retriever|version|measure|fingerprint|day``: the same regression found
again on the same day (a retry, a re-run) is the same alert and is not sent twice.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from sqlalchemy import Table, select, update

from evalops.errors import InputError, WarehouseError
from evalops.warehouse._db import insert_for, now_utc, transaction
from evalops.warehouse.domain import Alert
from evalops.warehouse.models import AlertModel
from evalops.warehouse.types import as_utc

if TYPE_CHECKING:  # pragma: no cover
    import pandas as pd
    from sqlalchemy.engine import Engine

__all__ = ["alert_dedup_key", "list_alerts", "mark_alert_delivery", "record_alert"]

alerts: Table = AlertModel.__table__  # type: ignore[assignment]
SEVERITIES = ("info", "warning", "critical")


def alert_dedup_key(
    kind: str, retriever: str, version: str | None, measure: str | None, fingerprint_hash: str | None, day: dt.date
) -> str:
    """The natural key of an alert (missing parts are written as ``-``)."""
    parts = [kind, retriever, version, measure, fingerprint_hash, day.isoformat()]
    return "|".join("-" if p is None else str(p) for p in parts)


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
) -> tuple[Alert, bool]:
    """Store an alert unless the same one is already stored; returns ``(alert, created)``.

    A new alert starts ``pending``. When ``created`` is False the stored alert is returned unchanged, so
    the caller can see whether it was already delivered.
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
        "delivery_status": "pending",
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
    engine: Engine, alert_id: int, *, delivered: bool, error: str | None = None, at: dt.datetime | None = None
) -> Alert:
    """Record the outcome of one delivery attempt (``error`` says why it failed)."""
    if not delivered and not error:
        raise InputError("an undelivered alert needs the error that stopped its delivery")
    when = as_utc(at) if at is not None else now_utc()
    with transaction(engine, f"marking the delivery of alert {alert_id}") as conn:
        result = conn.execute(
            update(alerts)
            .where(alerts.c.id == alert_id)
            .values(
                delivery_status="delivered" if delivered else "undelivered",
                delivery_attempts=alerts.c.delivery_attempts + 1,
                delivered_at=when if delivered else None,
                delivery_error=None if delivered else error,
            )
        )
        if result.rowcount != 1:
            raise WarehouseError(f"there is no alert with id {alert_id}")
        row = conn.execute(select(alerts).where(alerts.c.id == alert_id)).mappings().one()
    return _alert(row)


def list_alerts(
    engine: Engine, *, delivery_status: str | None = None, retriever: str | None = None, since: dt.date | None = None
) -> pd.DataFrame:
    """Stored alerts, oldest first; ``delivery_status="undelivered"`` lists the ones to retry."""
    import pandas as pd

    stmt = select(alerts).order_by(alerts.c.created_at, alerts.c.id)
    if delivery_status is not None:
        stmt = stmt.where(alerts.c.delivery_status == delivery_status)
    if retriever is not None:
        stmt = stmt.where(alerts.c.retriever == retriever)
    if since is not None:
        stmt = stmt.where(alerts.c.day >= since)
    with transaction(engine, "reading alerts") as conn:
        rows = conn.execute(stmt).mappings().all()
    columns = list(Alert.__dataclass_fields__)
    return pd.DataFrame([{c: r[c] for c in columns} for r in rows], columns=columns)


def _alert(row: Mapping[str, Any]) -> Alert:
    """The one place a stored alert row becomes a domain object."""
    return Alert(**{name: row[name] for name in Alert.__dataclass_fields__})
