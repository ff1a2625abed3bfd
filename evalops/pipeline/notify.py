"""Alert delivery with the configured notifiers: the task log always, the webhook and e-mail when set."""

from __future__ import annotations

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
from evalops.pipeline.store import WarehouseAlertStore, engine_for

if TYPE_CHECKING:  # pragma: no cover
    from evalops.config import Config

__all__ = ["deliver", "notifiers_for"]

log = logging.getLogger(__name__)


def notifiers_for(cfg: Config) -> list[Notifier]:
    """The log notifier, plus the webhook when a URL resolves, plus e-mail when recipients are set."""
    a = cfg.alerting
    found: list[Notifier] = [LogNotifier()]
    url = resolve_webhook_url(a.webhook_env, a.webhook_conn_id)
    if url:
        found.append(WebhookNotifier(url, timeout=a.webhook_timeout))
    if a.email_to:
        found.append(EmailNotifier(list(a.email_to), conn_id=a.smtp_conn_id))
    return found


def deliver(cfg: Config, alerts: Sequence[Alert]) -> list[DeliveryOutcome]:
    """Store every alert in the warehouse, then send it (see :func:`evalops.alerting.deliver_alerts`)."""
    if not alerts:
        return []
    outcomes = deliver_alerts(alerts, WarehouseAlertStore(engine_for(cfg)), notifiers_for(cfg))
    for o in outcomes:
        if o.errors:
            log.warning("alert %s stored but not delivered: %s", o.alert.dedup_key, "; ".join(o.errors))
    return outcomes
