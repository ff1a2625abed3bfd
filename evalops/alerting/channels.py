"""Notifiers for the channels whose payload is not Slack's: a Microsoft Teams workflow webhook (an Adaptive
Card) and PagerDuty (an Events API v2 ``trigger`` event). Both post through
:meth:`evalops.alerting.notifiers.WebhookNotifier.send`: one attempt, the overall deadline, the
``Idempotency-Key`` header, the URL never logged, and the same errors (the delivery store retries).

* :class:`TeamsNotifier` (``alerting.webhook_format: teams``): Teams workflow webhooks ("When a Teams
  webhook request is received") accept Adaptive Cards only, as a ``message`` with one attachment of content
  type ``application/vnd.microsoft.card.adaptive``. The card's text is in ``TextRun`` elements of
  ``RichTextBlock`` s, which the Adaptive Card schema never reads as markdown: an untrusted query text or id
  cannot form a link, emphasis or list (``TextBlock`` would read ``[label](url)`` as a link). Control and
  bidi characters are dropped (:func:`evalops.util.safetext.plain`) and the text is cut at ``MESSAGE_LIMIT``.
* :class:`PagerDutyNotifier` (on when a routing key resolves: :func:`resolve_pagerduty_key`): one
  ``trigger`` event per alert, its ``dedup_key`` the alert's :func:`~evalops.alerting.notifiers.idempotency_key`
  (stable: a retry, a re-run of the day or a reminder of the same alert updates PagerDuty's open incident
  instead of opening another), its severity mapped by :data:`PAGERDUTY_SEVERITY`. evalops' alerts have no
  resolution (a regression is not "closed" by a later run; a new day is a new alert), so no ``resolve``
  event is sent: resolve the incident in PagerDuty. The routing key is a secret: it goes in the request body
  only, is registered with Airflow's log masker, and never appears in a message, a log or the warehouse.
"""

from __future__ import annotations

from typing import Any

from evalops.alerting.message import MESSAGE_LIMIT
from evalops.alerting.model import Alert, Severity
from evalops.alerting.notifiers import NotificationError, WebhookNotifier, _trusted_links, idempotency_key
from evalops.util.safetext import plain, unlinked
from evalops.util.secrets import register_secret, resolve_secret

__all__ = ["ADAPTIVE_CARD", "PAGERDUTY_EVENTS_URL", "PAGERDUTY_SEVERITY", "PagerDutyNotifier", "TeamsNotifier",
           "adaptive_card", "resolve_pagerduty_key"]

ADAPTIVE_CARD = "application/vnd.microsoft.card.adaptive"
PAGERDUTY_EVENTS_URL = "https://events.pagerduty.com/v2/enqueue"
# evalops severity -> PagerDuty's (critical, error, warning, info); an unknown one pages as an error
PAGERDUTY_SEVERITY = {Severity.CRITICAL: "critical", Severity.WARNING: "warning"}
_UNKNOWN_SEVERITY = "error"
_SUMMARY_LIMIT = 1024  # PagerDuty's limit on payload.summary


def _run(text: str, **style: Any) -> dict[str, Any]:
    """A ``TextRun``: its text is never read as markdown (Adaptive Card schema 1.2+)."""
    return {"type": "RichTextBlock", "inlines": [{"type": "TextRun", "text": text, **style}]}


def adaptive_card(alert: Alert) -> dict[str, Any]:
    """The Teams workflow payload of ``alert``: a message with one Adaptive Card (module docstring)."""
    # Teams links URLs and addresses in a TextRun by itself: only the report's location stays linkable
    title = unlinked(plain(alert.title, 300))
    lines = unlinked(plain(alert.message, MESSAGE_LIMIT, keep_newlines=True), _trusted_links(alert)).split("\n")
    body = [_run(title, weight="Bolder", size="Medium",
                 color="Attention" if alert.severity == Severity.CRITICAL else "Warning")]
    body += [_run(line) for line in lines if line.strip()]
    card = {"$schema": "http://adaptivecards.io/schemas/adaptive-card.json", "type": "AdaptiveCard",
            "version": "1.4", "body": body, "msteams": {"width": "Full"}}
    return {"type": "message", "attachments": [{"contentType": ADAPTIVE_CARD, "contentUrl": None, "content": card}]}


class TeamsNotifier(WebhookNotifier):
    """POSTs the alert as an Adaptive Card to a Microsoft Teams workflow webhook (module docstring)."""

    name = "teams"

    def __repr__(self) -> str:  # the URL is a secret
        return "TeamsNotifier(url=<redacted>)"

    def payload(self, alert: Alert) -> dict[str, Any]:
        return adaptive_card(alert)


class PagerDutyNotifier(WebhookNotifier):
    """Sends each alert as a PagerDuty Events API v2 ``trigger`` event (module docstring). ``url``: the
    events endpoint (``https://events.eu.pagerduty.com/v2/enqueue`` for an EU account)."""

    name = "pagerduty"

    def __init__(self, routing_key: str, *, url: str = PAGERDUTY_EVENTS_URL, timeout: float = 10.0,
                 transport: Any = None):
        if not routing_key or not routing_key.strip():
            raise NotificationError("the PagerDuty routing key is empty")
        super().__init__(url, timeout=timeout, transport=transport)
        self._routing_key = routing_key.strip()
        register_secret(self._routing_key)

    def __repr__(self) -> str:  # the routing key is a secret
        return "PagerDutyNotifier(routing_key=<redacted>)"

    def payload(self, alert: Alert) -> dict[str, Any]:
        details = {"message": unlinked(plain(alert.message, MESSAGE_LIMIT, keep_newlines=True), _trusted_links(alert)),
                   "day": alert.day,
                   "kind": plain(alert.kind, 100), "version": plain(alert.version or "", 200),
                   "measure": plain(alert.measure or "", 100), "report": plain(alert.report_location or "", 1000)}
        return {
            "routing_key": self._routing_key,
            "event_action": "trigger",
            "dedup_key": idempotency_key(alert),
            "client": "evalops",
            "payload": {
                "summary": unlinked(plain(alert.title, _SUMMARY_LIMIT)),
                "source": plain(f"evalops {alert.retriever}", 255),
                "severity": PAGERDUTY_SEVERITY.get(alert.severity, _UNKNOWN_SEVERITY),
                "component": plain(alert.retriever, 255),
                "class": plain(alert.kind, 255),
                "custom_details": {k: v for k, v in details.items() if v},
            },
        }


def resolve_pagerduty_key(env_var: str, conn_id: str | None = "evalops_pagerduty") -> str | None:
    """The PagerDuty routing (integration) key from the environment variable ``env_var`` (the setting
    ``alerting.pagerduty_key_env`` names it), else from the password of the Airflow connection ``conn_id``
    (read as :func:`evalops.alerting.resolve_webhook_url` reads the webhook's), else None (PagerDuty off).
    What is found is registered with Airflow's secret masker."""
    return resolve_secret("the PagerDuty notifier", env=env_var, conn_id=conn_id, named=False).value
