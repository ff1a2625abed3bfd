"""Store first, then notify, per notifier: the order that makes a dead notifier unable to lose an alert,
and a retry unable to double one.

:func:`deliver_alerts` records each alert in the store (idempotent on its de-dup key), then hands it to
every notifier that does not have it yet, and records the outcome *per notifier*:

* ``delivered`` — the notifier accepted it; it is never sent there again (a retry, a re-run of the day);
* ``undelivered`` — it certainly did not arrive (connection refused, HTTP 500, ...);
* ``unknown`` — the request went out and timed out: it may have arrived.
* ``pending`` — recorded *before* each send (:meth:`AlertStore.mark_notifier_attempt`): an attempt that
  started and whose outcome was never recorded (the process was killed between the send and the record).
  It may have arrived too.

An alert retried after an ``unknown`` or ``pending`` attempt says so: ``details["redelivery"] = True`` with
``redelivery_reason`` (``timed out`` or ``unconfirmed``), ``first_attempt_at`` (when the alert was stored
and first sent) and ``previous_attempt_at``, a first line in the text, and the same ``Idempotency-Key``
(:func:`evalops.alerting.notifiers.idempotency_key`, one per alert), so a receiver that has it drops the copy.

The alert's own status is ``delivered`` when every notifier has it, else ``undelivered`` when some
notifier certainly lacks it, else ``unknown``.

:func:`retry_alerts` sends again every stored alert that is not delivered, no older than ``max_age``,
whose backoff has passed: before notifier attempt n+1 it waits ``backoff · 2^(n-1)`` after attempt n.
Every run calls it, and so does ``evalops alerts retry``.

With a :class:`~evalops.alerting.cadence.ReminderPolicy`, a regression found again is sent only when
:func:`~evalops.alerting.cadence.cadence` says so (its severity or interval changed, or a reminder is due);
otherwise it is stored ``suppressed`` with the reason (``details["cadence"]``) and sent nowhere, and no
retry ever sends it.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Protocol

from evalops.alerting.cadence import ReminderPolicy, SentAlert, cadence, series_key
from evalops.alerting.model import Alert
from evalops.alerting.notifiers import DeliveryUnknown, NotificationError, Notifier
from evalops.util import utc

__all__ = [
    "AlertStore",
    "DeliveryOutcome",
    "NotifierState",
    "StoredAlert",
    "UNDELIVERED_ALERTS_EXIT",
    "deliver_alerts",
    "overall_status",
    "retry_alerts",
]

try:  # the one table of exit codes
    from evalops.exitcodes import ExitCode

    UNDELIVERED_ALERTS_EXIT = int(ExitCode.UNDELIVERED_ALERTS)
except ImportError:  # pragma: no cover - until the table is in this tree
    UNDELIVERED_ALERTS_EXIT = 6

DEFAULT_BACKOFF = dt.timedelta(minutes=5)
DEFAULT_MAX_AGE = dt.timedelta(days=7)


@dataclass(frozen=True)
class NotifierState:
    """What the store knows about one alert at one notifier."""

    status: str  # delivered | undelivered | unknown | pending (started, outcome never recorded)
    attempts: int = 0  # attempts whose outcome was recorded
    next_attempt_at: dt.datetime | None = None
    last_attempt_at: dt.datetime | None = None


@dataclass(frozen=True)
class StoredAlert:
    """What the store says about an alert it has recorded."""

    alert_id: int | str
    created: bool
    delivered: bool
    deliveries: Mapping[str, NotifierState] = field(default_factory=dict)
    created_at: dt.datetime | None = None
    status: str | None = None  # the alert's own delivery status (``suppressed``: not to be sent)


class AlertStore(Protocol):
    """The warehouse side of alerting (the pipeline adapts the warehouse repository to it)."""

    def record_alert(self, alert: Alert, *, suppressed: bool = False) -> StoredAlert:
        """Insert the alert (``suppressed``: with that status, never to be sent), or return the existing row
        with the same de-dup key (with its deliveries)."""

    def last_sent(self, alert: Alert) -> SentAlert | None:
        """The newest alert of ``alert``'s series (:func:`series_key`) from a day before its day that was
        not suppressed; only asked when a reminder policy is given."""

    def mark_notifier_attempt(self, alert_id: int | str, notifier: str, *, at: dt.datetime) -> None:
        """Record that an attempt at one notifier starts now (status ``pending`` until its outcome is
        recorded): a process killed after the send leaves this mark, and the next attempt is a redelivery."""

    def mark_notifier_delivery(
        self, alert_id: int | str, notifier: str, *, status: str, error: str | None, next_attempt_at: dt.datetime | None
    ) -> None:
        """Record the outcome of one attempt at one notifier."""

    def mark_alert_delivery(self, alert_id: int | str, *, status: str, error: str | None) -> None:
        """Record the alert's overall delivery status."""

    def retryable_alerts(self, created_since: dt.datetime) -> list[tuple[Alert, StoredAlert]]:
        """Stored alerts not delivered (pending, undelivered, unknown) created at or after ``created_since``."""


@dataclass
class DeliveryOutcome:
    alert: Alert
    alert_id: int | str
    created: bool
    delivered: bool
    skipped: bool = False
    errors: list[str] = field(default_factory=list)
    status: str = "delivered"
    per_notifier: dict[str, str] = field(default_factory=dict)
    suppressed: str | None = None  # why it was not sent (an unchanged regression already sent)


def overall_status(states: Mapping[str, str]) -> str:
    """``delivered`` if every notifier has it, else ``undelivered`` if any certainly lacks it, else ``unknown``."""
    values = set(states.values())
    if values <= {"delivered"}:
        return "delivered"
    return "undelivered" if values & {"undelivered", "pending"} else "unknown"


# why an earlier attempt at a notifier may have arrived, by its recorded status
_MAYBE_ARRIVED = {"unknown": "timed out", "pending": "unconfirmed"}


def _iso(when: dt.datetime | None) -> str | None:
    return None if when is None else when.isoformat()


def _redelivery(alert: Alert, stored: StoredAlert, state: NotifierState) -> Alert:
    """The alert as re-sent after an attempt that may have arrived (see the module docstring)."""
    reason = _MAYBE_ARRIVED[state.status]
    what = ("timed out" if state.status == "unknown"
            else "was never confirmed (the sender stopped before recording it)")
    note = (f"[evalops: re-sent alert {alert.dedup_key}; the previous attempt {what} and may have arrived "
            "— drop this copy if you have it]")
    marker = {"redelivery": True, "redelivery_reason": reason, "first_attempt_at": _iso(stored.created_at),
              "previous_attempt_at": _iso(state.last_attempt_at)}
    return dataclasses.replace(alert, message=f"{note}\n{alert.message}", details={**alert.details, **marker})


def _send_one(
    alert: Alert, stored: StoredAlert, store: AlertStore, notifiers: Sequence[Notifier], *,
    now: dt.datetime, backoff: dt.timedelta, respect_backoff: bool,
) -> DeliveryOutcome:
    states = {n.name: stored.deliveries.get(n.name) for n in notifiers}
    per: dict[str, str] = {}
    errors: list[str] = []
    attempted = False
    for notifier in notifiers:
        state = states[notifier.name]
        if state is not None and state.status == "delivered":
            per[notifier.name] = "delivered"
            continue
        if respect_backoff and state is not None and state.next_attempt_at is not None and state.next_attempt_at > now:
            per[notifier.name] = state.status  # not yet: its backoff has not passed
            continue
        attempted = True
        message = (_redelivery(alert, stored, state) if state is not None and state.status in _MAYBE_ARRIVED
                   else alert)
        store.mark_notifier_attempt(stored.alert_id, notifier.name, at=now)
        try:
            notifier.send(message)
        except DeliveryUnknown as exc:
            status, error = "unknown", f"{notifier.name}: {exc}"
        except NotificationError as exc:
            status, error = "undelivered", f"{notifier.name}: {exc}"
        else:
            status, error = "delivered", None
        attempts = (state.attempts if state is not None else 0) + 1
        next_at = None if status == "delivered" else now + backoff * 2 ** (attempts - 1)
        store.mark_notifier_delivery(stored.alert_id, notifier.name, status=status, error=error, next_attempt_at=next_at)
        per[notifier.name] = status
        if error:
            errors.append(error)
    status = overall_status(per)
    if attempted:
        store.mark_alert_delivery(stored.alert_id, status=status, error="; ".join(errors) or None)
    return DeliveryOutcome(alert, stored.alert_id, stored.created, status == "delivered", errors=errors,
                           status=status, per_notifier=per)


def _with_cadence(alert: Alert, decision: dict[str, object]) -> Alert:
    """The alert with its cadence decision in ``details``; a re-alert or a reminder says so in its first line."""
    alert = dataclasses.replace(alert, details={**alert.details, "cadence": decision})
    reason = str(decision["reason"])
    if decision["send"] and reason != "first":
        note = f"[evalops: sent again ({reason}); first sent {decision['first_day']}]"
        alert = dataclasses.replace(alert, message=f"{note}\n{alert.message}")
    return alert


def deliver_alerts(
    alerts: Sequence[Alert], store: AlertStore, notifiers: Sequence[Notifier], *,
    now: dt.datetime | None = None, backoff: dt.timedelta = DEFAULT_BACKOFF,
    reminders: ReminderPolicy | None = None,
) -> list[DeliveryOutcome]:
    """Record, then send, every alert to every notifier that lacks it (a repeated regression only when
    ``reminders`` says so, see the module docstring). Returns one outcome per alert; never
    raises for a notifier failure. Errors are recorded per notifier name (``webhook: webhook answered HTTP
    500``) and never contain the notifier's secrets. An alert found again (same key) goes only where it has
    not arrived, at once (the backoff applies to :func:`retry_alerts`)."""
    when = now or utc.now()
    outcomes: list[DeliveryOutcome] = []
    for alert in alerts:
        decision = None
        if reminders is not None and series_key(alert) is not None:
            decision = cadence(alert, store.last_sent(alert), reminders)
            alert = _with_cadence(alert, decision.to_dict())
        stored = (store.record_alert(alert, suppressed=True) if decision is not None and not decision.send
                  else store.record_alert(alert))
        if stored.status == "suppressed":
            why = decision.reason if decision is not None else "suppressed when it was first recorded"
            outcomes.append(DeliveryOutcome(alert, stored.alert_id, stored.created, False, skipped=True,
                                            status="suppressed", suppressed=why))
            continue
        if stored.delivered:
            outcomes.append(DeliveryOutcome(alert, stored.alert_id, stored.created, True, skipped=True))
            continue
        outcomes.append(_send_one(alert, stored, store, notifiers, now=when, backoff=backoff, respect_backoff=False))
    return outcomes


def retry_alerts(
    store: AlertStore, notifiers: Sequence[Notifier], *, now: dt.datetime | None = None,
    backoff: dt.timedelta = DEFAULT_BACKOFF, max_age: dt.timedelta = DEFAULT_MAX_AGE, force: bool = False,
) -> list[DeliveryOutcome]:
    """Send again every stored alert that is not delivered and is younger than ``max_age``, to the
    notifiers that lack it and whose backoff has passed (``force`` ignores the backoff)."""
    when = now or utc.now()
    outcomes = []
    for alert, stored in store.retryable_alerts(when - max_age):
        outcomes.append(_send_one(alert, stored, store, notifiers, now=when, backoff=backoff, respect_backoff=not force))
    return outcomes
