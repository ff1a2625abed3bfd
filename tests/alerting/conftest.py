"""Fixtures for alerting tests: a comparison record and an in-memory alert store."""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass, field
from typing import Any

import pytest

from evalops.alerting import Alert, AlertContext, StoredAlert
from evalops.alerting.delivery import NotifierState


@dataclass
class MemoryAlertStore:
    """An AlertStore that keeps alerts in a dict keyed by de-dup key (what the warehouse does in SQL)."""

    rows: dict[str, dict[str, Any]] = field(default_factory=dict)

    def _stored(self, key: str, created: bool) -> StoredAlert:
        row = self.rows[key]
        return StoredAlert(key, created=created, delivered=row["status"] == "delivered",
                           deliveries=dict(row["deliveries"]), created_at=row["created_at"])

    def record_alert(self, alert: Alert) -> StoredAlert:
        if alert.dedup_key in self.rows:
            return self._stored(alert.dedup_key, False)
        self.rows[alert.dedup_key] = {"alert": alert, "status": "pending", "delivered": False, "error": None,
                                      "attempts": 0, "deliveries": {}, "created_at": dt.datetime.now(dt.timezone.utc)}
        return self._stored(alert.dedup_key, True)

    def mark_notifier_attempt(self, alert_id, notifier, *, at) -> None:
        row = self.rows[alert_id]
        before = row["deliveries"].get(notifier)
        row["deliveries"][notifier] = NotifierState("pending", before.attempts if before else 0,
                                                    before.next_attempt_at if before else None, at)

    def mark_notifier_delivery(self, alert_id, notifier, *, status, error, next_attempt_at) -> None:
        row = self.rows[alert_id]
        before = row["deliveries"].get(notifier)
        row["deliveries"][notifier] = NotifierState(status, (before.attempts if before else 0) + 1, next_attempt_at,
                                                    before.last_attempt_at if before else None)

    def mark_alert_delivery(self, alert_id, *, status: str, error: str | None) -> None:
        row = self.rows[alert_id]
        row.update(status=status, delivered=status == "delivered", error=error, attempts=row["attempts"] + 1)

    def retryable_alerts(self, created_since):
        return [(row["alert"], self._stored(key, False)) for key, row in self.rows.items()
                if row["status"] != "delivered" and row["created_at"] >= created_since]


@pytest.fixture
def store() -> MemoryAlertStore:
    return MemoryAlertStore()


@pytest.fixture
def context() -> AlertContext:
    return AlertContext(
        retriever="handbook-search",
        version="v3-degraded",
        baseline_version="v1",
        fingerprint="fp0123456789abcdef",
        day="2024-06-02",
        report_location="/tmp/reports/run-2/report.html",
    )


def make_comparison(decision: str = "regression", **overrides: Any) -> dict[str, Any]:
    record = {
        "n": 64,
        "baseline_mean": 0.6125,
        "candidate_mean": 0.4875,
        "delta": -0.125,
        "delta_ci_low": -0.17,
        "delta_ci_high": -0.08,
        "p_value": 0.00012,
        "p_adjusted": 0.00048,
        "effect_size_dz": -0.71,
        "wins": 3,
        "ties": 20,
        "losses": 41,
        "decision": decision,
        "reasons": ["adjusted p 0.00048 < alpha 0.05", "|d_z| 0.71 >= 0.2"],
        "worst_queries": [
            {"query_id": "q7", "baseline": 1.0, "candidate": 0.0},
            {"query_id": "q9", "baseline": 0.8, "candidate": 0.1},
        ],
    }
    record.update(overrides)
    return record


@pytest.fixture
def comparison_factory():
    return make_comparison
