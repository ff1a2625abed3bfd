"""One alert per regression, not per day: the reminder cadence of an unchanged regression (pure).

A regression alert belongs to a **series**: the same kind, retriever, version, measure, baseline version,
query set and fingerprint (:func:`series_key`). Every day's finding is stored (under its own de-dup key,
so the gate still fails on it), but the notifiers hear of it only when :func:`cadence` says so:

* the first alert of a series is sent;
* a later one is sent again when its severity differs from the last one sent, or when a bound of its
  delta's interval moved more than ``realert_shift`` (in the measure's units) from the last one sent;
* otherwise it is a **reminder** once ``remind_every_days`` days have passed since the last one sent, and
  **suppressed** before that (stored with ``delivery_status`` ``suppressed``, with the reason).

Other alert kinds (a failed retriever, a failed contract, a failed judge) have no series: each is sent.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass
from typing import Any

from evalops.alerting.model import Alert, AlertKind

__all__ = ["CadenceDecision", "ReminderPolicy", "SentAlert", "cadence", "series_key"]


@dataclass(frozen=True)
class ReminderPolicy:
    """``alerting.remind_every_days`` (default 7) and ``alerting.realert_shift`` (default 0.02)."""

    remind_every_days: int = 7
    realert_shift: float = 0.02


@dataclass(frozen=True)
class SentAlert:
    """The last alert of a series that was sent (not suppressed)."""

    alert_id: int | str
    day: str
    severity: str
    delta_ci_low: float | None
    delta_ci_high: float | None
    first_day: str  # the day the series was first sent


@dataclass(frozen=True)
class CadenceDecision:
    send: bool
    reason: str  # first | reminder | severity changed ... | interval moved ... | already sent ...
    first_day: str  # the day the series was first sent (this alert's day for a first alert)
    next_reminder: str | None = None  # for a suppressed alert

    def to_dict(self) -> dict[str, Any]:
        return {"send": self.send, "reason": self.reason, "first_day": self.first_day,
                "next_reminder": self.next_reminder}


def series_key(alert: Alert) -> str | None:
    """The identity of a regression across days (``None`` for the kinds that are always sent)."""
    if alert.kind != AlertKind.REGRESSION:
        return None
    d = alert.details
    parts = (alert.kind, alert.retriever, alert.version, alert.measure, d.get("baseline_version"),
             d.get("query_set", "gold"), alert.fingerprint)
    return "|".join("-" if p is None else str(p) for p in parts)


def _shift(alert: Alert, last: SentAlert) -> float | None:
    lo, hi = alert.details.get("delta_ci_low"), alert.details.get("delta_ci_high")
    if None in (lo, hi, last.delta_ci_low, last.delta_ci_high):
        return None
    return max(abs(float(lo) - float(last.delta_ci_low)), abs(float(hi) - float(last.delta_ci_high)))


def cadence(alert: Alert, last: SentAlert | None, policy: ReminderPolicy) -> CadenceDecision:
    """Whether to send ``alert`` given the last alert of its series that was sent (before its day)."""
    if last is None:
        return CadenceDecision(True, "first", alert.day)
    if alert.severity != last.severity:
        return CadenceDecision(True, f"severity changed ({last.severity} on {last.day} -> {alert.severity})",
                               last.first_day)
    shift = _shift(alert, last)
    if shift is None and (alert.details.get("delta_ci_low") is None) != (last.delta_ci_low is None):
        return CadenceDecision(True, "the delta's interval appeared or disappeared", last.first_day)
    if shift is not None and shift > policy.realert_shift:
        return CadenceDecision(True, f"the delta's interval moved by {shift:.4f} since {last.day} (more than "
                               f"alerting.realert_shift {policy.realert_shift:g})", last.first_day)
    due = dt.date.fromisoformat(last.day) + dt.timedelta(days=policy.remind_every_days)
    if dt.date.fromisoformat(alert.day) >= due:
        return CadenceDecision(True, f"reminder: unchanged since {last.first_day}, last sent {last.day} "
                               f"(alerting.remind_every_days {policy.remind_every_days})", last.first_day)
    return CadenceDecision(False, f"already sent on {last.day} (alert {last.alert_id}), unchanged; next reminder "
                           f"on {due.isoformat()} (alerting.remind_every_days {policy.remind_every_days})",
                           last.first_day, due.isoformat())
