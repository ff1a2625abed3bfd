"""Fixtures for alerting tests: a comparison record and an in-memory alert store."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import pytest

from evalops.alerting import Alert, AlertContext, StoredAlert


@dataclass
class MemoryAlertStore:
    """An AlertStore that keeps alerts in a dict keyed by de-dup key (what the warehouse does in SQL)."""

    rows: dict[str, dict[str, Any]] = field(default_factory=dict)

    def record_alert(self, alert: Alert) -> StoredAlert:
        row = self.rows.get(alert.dedup_key)
        if row is not None:
            return StoredAlert(alert.dedup_key, created=False, delivered=row["delivered"])
        self.rows[alert.dedup_key] = {"alert": alert, "delivered": False, "error": None, "attempts": 0}
        return StoredAlert(alert.dedup_key, created=True, delivered=False)

    def mark_alert_delivery(self, alert_id, *, delivered: bool, error: str | None) -> None:
        row = self.rows[alert_id]
        row.update(delivered=delivered, error=error, attempts=row["attempts"] + 1)


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
