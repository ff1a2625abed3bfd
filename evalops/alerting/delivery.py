"""Store first, then notify: the order that makes a dead notifier unable to lose an alert.

:func:`deliver_alerts` records each alert in the store (idempotent on its de-dup key), then hands it to
every notifier, then marks it delivered or undelivered with the errors. An alert that was already
delivered (same key: a retry or a re-run of the same day) is not sent again; one that is stored but
undelivered is retried.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Protocol

from evalops.alerting.model import Alert
from evalops.alerting.notifiers import NotificationError, Notifier

__all__ = ["AlertStore", "StoredAlert", "DeliveryOutcome", "deliver_alerts"]


@dataclass(frozen=True)
class StoredAlert:
    """What the store says about an alert it has recorded."""

    alert_id: int | str
    created: bool
    delivered: bool


class AlertStore(Protocol):
    """The warehouse side of alerting (the pipeline adapts the warehouse repository to it)."""

    def record_alert(self, alert: Alert) -> StoredAlert:
        """Insert the alert, or return the existing row with the same de-dup key."""

    def mark_alert_delivery(self, alert_id: int | str, *, delivered: bool, error: str | None) -> None:
        """Record the outcome of a delivery attempt."""


@dataclass
class DeliveryOutcome:
    alert: Alert
    alert_id: int | str
    created: bool
    delivered: bool
    skipped: bool = False
    errors: list[str] = field(default_factory=list)


def deliver_alerts(alerts: Sequence[Alert], store: AlertStore, notifiers: Sequence[Notifier]) -> list[DeliveryOutcome]:
    """Record, then send, every alert. Returns one outcome per alert; never raises for a notifier failure.

    An alert counts as delivered when every notifier accepted it. Errors are recorded per notifier name
    (``webhook: webhook answered HTTP 500``) and never contain the notifier's secrets.
    """
    outcomes: list[DeliveryOutcome] = []
    for alert in alerts:
        stored = store.record_alert(alert)
        if stored.delivered:
            outcomes.append(DeliveryOutcome(alert, stored.alert_id, stored.created, True, skipped=True))
            continue
        errors: list[str] = []
        for notifier in notifiers:
            try:
                notifier.send(alert)
            except NotificationError as exc:
                errors.append(f"{notifier.name}: {exc}")
        delivered = not errors
        store.mark_alert_delivery(stored.alert_id, delivered=delivered, error="; ".join(errors) or None)
        outcomes.append(DeliveryOutcome(alert, stored.alert_id, stored.created, delivered, errors=errors))
    return outcomes
