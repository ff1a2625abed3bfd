"""Notifiers: where an alert goes after it is stored. Each has one method, ``send(alert)``.

* :class:`LogNotifier` writes the alert to the Python log; inside an Airflow task that is the task log.
* :class:`WebhookNotifier` posts ``{"text": message, "alert_key": key}`` (the Slack incoming-webhook shape,
  also accepted by Mattermost, Rocket.Chat and Google Chat) through :class:`evalops.transport.HttpClient`
  (``timeout`` is the overall deadline, held against a dripping answer; one attempt: the delivery store
  retries, see :mod:`evalops.alerting.delivery`), and the same key in an
  ``Idempotency-Key`` header, so a receiver can drop a duplicate (:func:`idempotency_key`: one alert has
  one key, however often it is sent). The text is escaped for Slack's markup (:func:`slack_text`). The URL
  is a secret (it carries the token): it is never logged and never appears in an error message.
* :class:`EmailNotifier` sends through the SMTP server of an Airflow connection (``smtp_default``).

A notifier that cannot deliver raises :class:`NotificationError`; :func:`evalops.alerting.deliver_alerts`
catches it and marks the stored alert undelivered, so a dead webhook never loses an alert. A timeout after
the request was sent raises :class:`DeliveryUnknown` instead: the receiver may well have the alert, so it is
marked ``unknown`` and the retry says it is one (``"redelivery": true`` with its reason and the first and
previous attempts' times in the body, a first line in the text; an e-mail gets the text line and an
``X-Evalops-Redelivery`` header), as does a retry after an attempt whose outcome was never recorded.
"""

from __future__ import annotations

import hashlib
import html
import logging
from typing import TYPE_CHECKING, Any, Protocol

from evalops.alerting.message import MESSAGE_LIMIT, slack_text
from evalops.alerting.model import Alert
from evalops.errors import EvalopsError
from evalops.transport import HttpClient, RetryPolicy
from evalops.util.safetext import plain, unlinked
from evalops.util.secrets import ConnectionFields, SecretError, read_connection, resolve_secret

__all__ = [
    "Notifier",
    "NotificationError",
    "DeliveryUnknown",
    "idempotency_key",
    "LogNotifier",
    "WebhookNotifier",
    "EmailNotifier",
    "resolve_webhook_url",
    "slack_message",
]

if TYPE_CHECKING:
    from email.message import EmailMessage

log = logging.getLogger("evalops.alerts")

# what a re-sent alert adds to the webhook body (set by :func:`evalops.alerting.delivery.deliver_alerts`)
REDELIVERY_FIELDS = ("redelivery", "redelivery_reason", "first_attempt_at", "previous_attempt_at")


class NotificationError(EvalopsError):
    """A notifier could not deliver an alert. The message never contains a secret (URL, token)."""


class DeliveryUnknown(NotificationError):
    """The request went out but no answer came back in time: the alert may or may not have arrived."""


def idempotency_key(alert: Alert) -> str:
    """The alert's key for receivers: ``evalops-`` + 32 hex digits of SHA-256 over its de-dup key."""
    return "evalops-" + hashlib.sha256(alert.dedup_key.encode("utf-8")).hexdigest()[:32]


def _trusted_links(alert: Alert) -> tuple[str, ...]:
    """The links a message may keep for a chat app or mail client to link: the report's location, which
    evalops wrote; everything else in an alert may come from untrusted text (:func:`evalops.util.safetext.unlinked`)."""
    return (alert.report_location,) if alert.report_location else ()


def slack_message(alert: Alert) -> str:
    """The alert's message for Slack's mrkdwn: escaped (:func:`~evalops.alerting.message.slack_text`) and
    with nothing Slack would link by itself but the report (:func:`evalops.util.safetext.unlinked`)."""
    return slack_text(unlinked(alert.message, _trusted_links(alert)))


class Notifier(Protocol):
    name: str

    def send(self, alert: Alert) -> None:
        """Deliver one alert or raise NotificationError."""


class LogNotifier:
    """Writes the alert to the log at WARNING (the Airflow task log when run in a task)."""

    name = "log"

    def __init__(self, logger: logging.Logger | None = None):
        self._log = logger or log

    def send(self, alert: Alert) -> None:
        self._log.warning("evalops alert [%s]\n%s", plain(alert.kind, 100), plain(alert.message, MESSAGE_LIMIT,
                                                                                 keep_newlines=True))


class _DropRecordsContaining(logging.Filter):
    """Drops log records whose text contains a secret (httpx logs every request URL at INFO)."""

    def __init__(self, secret: str):
        super().__init__()
        self._secret = secret

    def filter(self, record: logging.LogRecord) -> bool:
        try:
            return self._secret not in record.getMessage()
        except Exception:  # a record that cannot be formatted is not ours to judge
            return True


class WebhookNotifier:
    """POSTs the alert to a Slack-compatible incoming webhook.

    ``transport`` is an optional ``httpx.BaseTransport`` for tests; production uses the default one.
    Any non-2xx status, timeout or connection failure raises :class:`NotificationError`.
    """

    name = "webhook"

    def __init__(self, url: str, *, timeout: float = 10.0, transport: Any = None):
        if not url.startswith(("http://", "https://")):
            raise NotificationError("the webhook URL must start with http:// or https://")
        self._url = url
        self._timeout = timeout
        self._transport = transport

    def __repr__(self) -> str:  # the URL is a secret
        return "WebhookNotifier(url=<redacted>)"

    def payload(self, alert: Alert) -> dict[str, Any]:
        body: dict[str, Any] = {"text": slack_message(alert), "alert_key": idempotency_key(alert)}
        if alert.details.get("redelivery"):
            body.update({k: alert.details.get(k) for k in REDELIVERY_FIELDS})
        return body

    def send(self, alert: Alert) -> None:
        httpx_log = logging.getLogger("httpx")
        guard = _DropRecordsContaining(self._url)
        httpx_log.addFilter(guard)
        try:
            with HttpClient(timeout=self._timeout, retry=RetryPolicy(max_retries=0), concurrency=1,
                            transport=self._transport) as client:
                out = client.request("POST", self._url, json=self.payload(alert),
                                     headers={"Idempotency-Key": idempotency_key(alert)}, label="webhook")
        finally:
            httpx_log.removeFilter(guard)
        if out.kind == "timeout" and not out.sent:  # nothing was sent
            raise NotificationError(f"webhook did not accept a connection within {self._timeout:g} s")
        if out.kind == "timeout":
            raise DeliveryUnknown(f"webhook timed out after {self._timeout:g} s; the alert may have arrived")
        response = out.response
        if response is None:
            # httpx messages may quote the URL; name only the failure class.
            raise NotificationError(f"webhook unreachable ({type(out.error).__name__})")
        if not 200 <= response.status_code < 300:
            raise NotificationError(f"webhook answered HTTP {response.status_code}")


class EmailNotifier:
    """Sends the alert by e-mail through the SMTP server of an Airflow connection (default ``smtp_default``,
    read by :func:`evalops.util.secrets.read_connection`; the fields the SMTP provider's connection uses: host,
    port, login, password, and in its extra ``from_email``, ``disable_ssl``, ``disable_tls``, ``timeout``)."""

    name = "email"

    def __init__(self, to: list[str], *, conn_id: str = "smtp_default"):
        if not to:
            raise NotificationError("EmailNotifier needs at least one recipient")
        self._to = list(to)
        self._conn_id = conn_id

    def compose(self, alert: Alert, sender: str) -> EmailMessage:
        """The e-mail of ``alert``: a plain and an HTML part of the same text."""
        from email.message import EmailMessage

        msg = EmailMessage()
        msg["Subject"] = f"[evalops] {unlinked(plain(alert.title, 200))}"
        msg["From"] = sender
        msg["To"] = ", ".join(self._to)
        msg["Idempotency-Key"] = idempotency_key(alert)
        if alert.details.get("redelivery"):
            msg["X-Evalops-Redelivery"] = f"true; first-attempt={alert.details.get('first_attempt_at')}"
        # mail clients link URLs and addresses in both parts by themselves: only the report's stays linkable
        text = unlinked(plain(alert.message, MESSAGE_LIMIT, keep_newlines=True), _trusted_links(alert))
        msg.set_content(text)
        msg.add_alternative(f"<pre>{html.escape(text)}</pre>", subtype="html")
        return msg

    def send(self, alert: Alert) -> None:
        import smtplib
        import ssl

        try:
            conn = read_connection(self._conn_id, what="the e-mail notifier")
        except SecretError as exc:
            raise NotificationError(str(exc)) from None
        extra = conn.extra
        on = lambda key: str(extra.get(key, "false")).lower() in ("1", "true", "yes")  # noqa: E731
        msg = self.compose(alert, str(extra.get("from_email") or conn.login or "evalops@localhost"))
        timeout = float(extra.get("timeout", 30))
        try:
            if on("disable_ssl"):
                server = smtplib.SMTP(conn.host or "localhost", conn.port or 587, timeout=timeout)
                if not on("disable_tls"):
                    server.starttls(context=ssl.create_default_context())
            else:
                server = smtplib.SMTP_SSL(conn.host or "localhost", conn.port or 465, timeout=timeout,
                                          context=ssl.create_default_context())
            with server:
                if conn.login:
                    server.login(conn.login, conn.password or "")
                server.send_message(msg)
        except (OSError, smtplib.SMTPException) as exc:  # refused, timed out, rejected: not delivered
            raise NotificationError(f"e-mail via {self._conn_id!r} failed ({type(exc).__name__})") from None


def resolve_webhook_url(env_var: str, conn_id: str | None = "evalops_webhook") -> str | None:
    """The webhook URL from the environment variable ``env_var`` (the setting ``alerting.webhook_env``
    names it), else from the Airflow connection, else None.

    The connection is read by :func:`evalops.util.secrets.read_connection` (by its default name: inside an
    Airflow process, or when its ``AIRFLOW_CONN_*`` variable is set); outside Airflow, set the variable.

    The connection may hold the full URL in ``host`` (``https://hooks.slack.com/services/T/B/X``), or the
    base in ``host`` and the token path in ``password`` (the Slack provider's layout), or ``url`` in its
    extra. Whatever is found is registered with Airflow's secret masker when Airflow is present.
    """
    return resolve_secret("the alert webhook", env=env_var, conn_id=conn_id, named=False,
                          from_connection=webhook_url).value


def webhook_url(conn: ConnectionFields) -> str | None:
    """The webhook URL an Airflow connection holds (:func:`resolve_webhook_url` says where)."""
    extra = conn.extra
    given = extra.get("url") or extra.get("webhook_url") or extra.get("extra__evalops_webhook__url")  # form field
    if given:
        return str(given)
    host = conn.host or ""
    if not host:
        return None
    if not host.startswith(("http://", "https://")):
        host = f"{conn.schema or 'https'}://{host}" + (f":{conn.port}" if conn.port else "")
    if conn.password:
        return host.rstrip("/") + "/" + conn.password.lstrip("/")
    return host
