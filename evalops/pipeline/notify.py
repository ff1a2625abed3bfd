"""Alert delivery with the configured notifiers: the task log always, the webhook and e-mail when set."""

from __future__ import annotations

import datetime as dt
import logging
from collections.abc import Sequence
from typing import TYPE_CHECKING

from evalops.alerting import (
    Alert,
    DeliveryOutcome,
    EmailNotifier,
    LogNotifier,
    Notifier,
    WebhookNotifier,
    deliver_alerts,
    resolve_webhook_url,
)
from evalops.alerting.cadence import ReminderPolicy
from evalops.alerting.channels import PagerDutyNotifier, TeamsNotifier, resolve_pagerduty_key
from evalops.alerting.delivery import retry_alerts
from evalops.pipeline.store import WarehouseAlertStore

if TYPE_CHECKING:  # pragma: no cover
    from sqlalchemy.engine import Engine

    from evalops.config import AlertingSettings

__all__ = ["deliver", "notifiers_for", "retry_undelivered"]

log = logging.getLogger(__name__)


def notifiers_for(a: AlertingSettings) -> list[Notifier]:
    """The log notifier, plus the webhook when a URL resolves (a Slack-compatible text, or an Adaptive Card
    for Teams: ``alerting.webhook_format``), plus e-mail when recipients are set, plus PagerDuty when a
    routing key resolves. ``a``: the ``alerting`` settings (the names of the secrets' variables, never a secret)."""
    found: list[Notifier] = [LogNotifier()]
    url = resolve_webhook_url(a.webhook_env, a.webhook_conn_id)
    if url:
        found.append(_WEBHOOKS[a.webhook_format](url, timeout=a.webhook_timeout))
    if a.email_to:
        found.append(EmailNotifier(list(a.email_to), conn_id=a.smtp_conn_id))
    routing_key = resolve_pagerduty_key(a.pagerduty_key_env, a.pagerduty_conn_id)
    if routing_key:
        found.append(PagerDutyNotifier(routing_key, url=a.pagerduty_url, timeout=a.webhook_timeout))
    return found


# alerting.webhook_format -> the notifier that posts that payload
_WEBHOOKS: dict[str, type[WebhookNotifier]] = {"slack": WebhookNotifier, "teams": TeamsNotifier}


def deliver(a: AlertingSettings, engine: Engine, alerts: Sequence[Alert]) -> list[DeliveryOutcome]:
    """Store every alert in the warehouse, then send it (see :func:`evalops.alerting.deliver_alerts`); a
    regression already sent and unchanged is stored ``suppressed`` until its reminder is due
    (``alerting.remind_every_days``, ``alerting.realert_shift``; :mod:`evalops.alerting.cadence`)."""
    if not alerts:
        return []

    outcomes = deliver_alerts(alerts, WarehouseAlertStore(engine), notifiers_for(a),
                              backoff=dt.timedelta(seconds=a.retry_backoff),
                              reminders=ReminderPolicy(a.remind_every_days, a.realert_shift))
    _log(outcomes)
    return outcomes


def retry_undelivered(a: AlertingSettings, engine: Engine, *, force: bool = False) -> list[DeliveryOutcome]:
    """Send again the stored alerts that are not delivered (see :func:`evalops.alerting.retry_alerts`):
    every run does this first, and ``evalops alerts retry`` does it on demand."""
    outcomes = retry_alerts(WarehouseAlertStore(engine), notifiers_for(a),
                            backoff=dt.timedelta(seconds=a.retry_backoff),
                            max_age=dt.timedelta(days=a.retry_max_age_days), force=force)
    _log(outcomes, retry=True)
    return outcomes


def _log(outcomes: Sequence[DeliveryOutcome], retry: bool = False) -> None:
    for o in outcomes:
        if o.errors:
            log.warning("alert %s stored but %s%s: %s", o.alert.dedup_key, o.status,
                        " after a retry" if retry else "", "; ".join(o.errors))
        elif retry and o.status == "delivered":
            log.info("alert %s delivered on retry", o.alert.dedup_key)
