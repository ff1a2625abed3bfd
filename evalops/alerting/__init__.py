"""Alerting: pure rules that turn a run's findings into alerts, and notifiers that deliver them.

Rules (:mod:`.rules`) never do I/O. Delivery (:func:`deliver_alerts`) stores every alert before sending it,
so a failing notifier leaves the alert stored and marked undelivered.
"""

from evalops.alerting.cadence import ReminderPolicy, cadence, series_key
from evalops.alerting.delivery import (
    AlertStore,
    DeliveryOutcome,
    NotifierState,
    StoredAlert,
    deliver_alerts,
    retry_alerts,
)
from evalops.alerting.model import Alert, AlertKind, Severity, dedup_key
from evalops.alerting.notifiers import (
    DeliveryUnknown,
    EmailNotifier,
    LogNotifier,
    NotificationError,
    Notifier,
    WebhookNotifier,
    idempotency_key,
    resolve_webhook_url,
)
from evalops.alerting.rules import (
    AlertContext,
    floor_alert,
    judge_failed_alert,
    regression_alerts,
    retriever_alert,
    validation_alert,
)

__all__ = [
    "Alert",
    "AlertContext",
    "AlertKind",
    "AlertStore",
    "DeliveryOutcome",
    "DeliveryUnknown",
    "NotifierState",
    "ReminderPolicy",
    "EmailNotifier",
    "LogNotifier",
    "NotificationError",
    "Notifier",
    "Severity",
    "StoredAlert",
    "WebhookNotifier",
    "cadence",
    "dedup_key",
    "deliver_alerts",
    "judge_failed_alert",
    "regression_alerts",
    "resolve_webhook_url",
    "retry_alerts",
    "idempotency_key",
    "retriever_alert",
    "floor_alert",
    "series_key",
    "validation_alert",
]
