"""The pipeline's view of the warehouse: one engine per URL, migrations, and the alert-store adapter."""

from __future__ import annotations

import contextlib
import datetime as dt
import functools
import logging
import threading
from collections.abc import Iterable, Iterator
from typing import TYPE_CHECKING, Any

from evalops.alerting import Alert, StoredAlert
from evalops.alerting.cadence import SentAlert, series_key
from evalops.alerting.delivery import NotifierState
from evalops.warehouse import (
    alert_deliveries,
    create_warehouse_engine,
    current_revision,
    last_sent_alerts,
    mark_alert_delivery,
    mark_notifier_attempt,
    mark_notifier_delivery,
    record_alert,
    renew_lease,
    retryable_alerts,
    upgrade,
)
from evalops.warehouse.config import url_for as warehouse_url_for
from evalops.warehouse.tables import metadata as warehouse_metadata

if TYPE_CHECKING:  # pragma: no cover
    from sqlalchemy.engine import Engine

    from evalops.config import Config

__all__ = ["dispose_engines", "engine_at", "engine_for", "migrate_warehouse", "run_lease", "warehouse_counts",
           "WarehouseAlertStore"]

log = logging.getLogger(__name__)


@functools.lru_cache(maxsize=8)
def _engine(url: str) -> Engine:
    engine = create_warehouse_engine(url)
    _MADE.append(engine)
    return engine


_MADE: list[Engine] = []  # every engine _engine made in this process, for dispose_engines


def dispose_engines() -> None:
    """Close the pooled connections of every warehouse engine this process made (a process that ends
    without the interpreter's shutdown, :func:`evalops.cli._common.exits_fast`, closes them first)."""
    while _MADE:
        _MADE.pop().dispose()
    _engine.cache_clear()


def engine_for(cfg: Config) -> Engine:
    """The warehouse engine for this configuration (cached per URL within a process)."""
    return engine_at(warehouse_url_for(cfg))


def engine_at(url: str) -> Engine:
    """The warehouse engine at ``url`` (cached per URL within a process: :func:`dispose_engines` closes them)."""
    return _engine(url)


def migrate_warehouse(cfg: Config, run: Any = None) -> str:
    """Upgrade the warehouse schema to the newest migration; returns the revision now in force."""
    engine = engine_for(cfg)
    upgrade(engine)
    return current_revision(engine) or "base"


def warehouse_counts(cfg: Config) -> dict[str, int]:
    """Rows per warehouse table (tables not created yet are left out). The demo prints them, and the
    tests compare them, to show that a re-run writes nothing new."""
    from sqlalchemy import func, inspect, select

    engine = engine_for(cfg)
    existing = set(inspect(engine).get_table_names())
    with engine.connect() as conn:
        return {name: conn.execute(select(func.count()).select_from(table)).scalar_one()
                for name, table in sorted(warehouse_metadata.tables.items()) if name in existing}


@contextlib.contextmanager
def run_lease(engine: Engine, seconds: float, run_ids: Iterable[int]) -> Iterator[None]:
    """Keep these ``running`` runs alive while the block runs: renew their ``seconds`` lease (``lease_seconds``)
    now and then every quarter lease in a background thread (the heartbeat). A task that is killed stops
    renewing, the lease expires, and the next run marks the run ``abandoned``."""
    ids = sorted({int(i) for i in run_ids})
    renew_lease(engine, ids, seconds)
    stop = threading.Event()

    def beat() -> None:
        while not stop.wait(seconds / 4):
            try:
                renew_lease(engine, ids, seconds)
            except Exception as exc:  # a missed beat is not fatal; the next one may succeed
                log.warning("could not renew the lease of runs %s: %s", ids, exc)

    thread = threading.Thread(target=beat, name="evalops-lease", daemon=True)
    thread.start()
    try:
        yield
    finally:
        stop.set()
        thread.join(timeout=5)


class WarehouseAlertStore:
    """:class:`evalops.alerting.AlertStore` on the warehouse's ``alerts`` table.

    The warehouse computes the same de-dup key as :attr:`Alert.dedup_key` from the same fields, so a
    repeated alert (retry, re-run) maps to the stored row.
    """

    def __init__(self, engine: Engine):
        self._engine = engine

    def record_alert(self, alert: Alert, *, suppressed: bool = False) -> StoredAlert:
        stored, created = record_alert(
            self._engine,
            kind=alert.kind,
            retriever=alert.retriever,
            day=dt.date.fromisoformat(alert.day),
            severity=alert.severity,
            message=alert.message,
            version=alert.version,
            measure=alert.measure,
            fingerprint_hash=alert.fingerprint,
            payload={"title": alert.title, "report_location": alert.report_location, **alert.details},
            run_id=alert.details.get("run_id"),
            ab_test_id=alert.details.get("ab_test_id"),
            suppressed=suppressed,
        )
        return self._stored(stored, created, alert_deliveries(self._engine, [stored.id])[stored.id])

    def last_sent(self, alert: Alert) -> SentAlert | None:
        wanted = series_key(alert)
        rows = last_sent_alerts(self._engine, kind=alert.kind, retriever=alert.retriever, version=alert.version,
                                measure=alert.measure, fingerprint_hash=alert.fingerprint,
                                before=dt.date.fromisoformat(alert.day))
        for row in rows:
            if series_key(alert_from_stored(row)) != wanted:
                continue  # another baseline or query set
            payload = row.payload or {}
            first = (payload.get("cadence") or {}).get("first_day") or row.day.isoformat()
            return SentAlert(row.id, row.day.isoformat(), row.severity, payload.get("delta_ci_low"),
                             payload.get("delta_ci_high"), first)
        return None

    @staticmethod
    def _stored(stored: Any, created: bool, rows: dict[str, dict[str, Any]]) -> StoredAlert:
        states = {name: NotifierState(r["status"], r["attempts"], r["next_attempt_at"], r["last_attempt_at"])
                  for name, r in rows.items()}
        return StoredAlert(stored.id, created=created, delivered=stored.delivery_status == "delivered",
                           deliveries=states, created_at=stored.created_at, status=stored.delivery_status)

    def mark_notifier_attempt(self, alert_id: int | str, notifier: str, *, at: dt.datetime) -> None:
        mark_notifier_attempt(self._engine, int(alert_id), notifier, at=at)

    def mark_notifier_delivery(self, alert_id: int | str, notifier: str, *, status: str, error: str | None,
                               next_attempt_at: dt.datetime | None) -> None:
        mark_notifier_delivery(self._engine, int(alert_id), notifier, status=status, error=error,
                               next_attempt_at=next_attempt_at)

    def mark_alert_delivery(self, alert_id: int | str, *, status: str, error: str | None) -> None:
        mark_alert_delivery(self._engine, int(alert_id), status=status, error=error)

    def retryable_alerts(self, created_since: dt.datetime) -> list[tuple[Alert, StoredAlert]]:
        stored = retryable_alerts(self._engine, created_since)
        rows = alert_deliveries(self._engine, [a.id for a in stored])
        return [(alert_from_stored(a), self._stored(a, False, rows[a.id])) for a in stored]


def alert_from_stored(stored: Any) -> Alert:
    """The :class:`Alert` a stored row was recorded from (:meth:`evalops.warehouse.AlertRow.to_alert`)."""
    return stored.to_alert()
