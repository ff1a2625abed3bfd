"""evalops' alert delivery as an Airflow notifier, for ``on_failure_callback`` / ``on_success_callback``.

``EvalopsNotifier`` turns an Airflow callback context into an :class:`~evalops.alerting.Alert` (which DAG
run, which task, which try, the log URL, the reason) and delivers it like every evalops alert: stored in
the warehouse first, then sent to the configured notifiers (the task log, the Slack-compatible webhook,
e-mail; see :func:`evalops.pipeline.notify.notifiers_for`), so an Airflow failure shows up in the same
place as a regression.

**The warehouse may be the thing that failed.** Storing is given ``store_timeout`` seconds. When the
warehouse cannot be reached in that time (refused, unreachable, or accepting connections and never
answering), the alert goes straight to the notifiers, and its message says the warehouse was
unreachable and the alert is not stored. (If the store call completes later after all, the stored row is
marked delivered, so nothing re-sends it.)

Usable in any DAG::

    from evalops.airflow.notifier import EvalopsNotifier

    @dag(..., on_failure_callback=EvalopsNotifier(project="/path/to/project"))

``title`` and ``message`` are Jinja templates rendered with the callback context (``{{ dag_run.run_id }}``,
``{{ ti.task_id }}``, ...). With ``slack_conn_id`` the message goes through the Slack provider's webhook
notifier instead of evalops' own webhook client (``apache-airflow-providers-slack`` must be installed).
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from airflow.sdk import BaseNotifier

from evalops.alerting.delivery import StoredAlert, deliver_alerts
from evalops.alerting.model import ALL_RETRIEVERS, Alert, Severity
from evalops.alerting.notifiers import LogNotifier, NotificationError, slack_message

__all__ = ["EvalopsNotifier", "AIRFLOW_FAILURE", "AIRFLOW_SUCCESS", "WarehouseUnreachable", "alert_from_context"]

log = logging.getLogger("evalops.alerts")

AIRFLOW_FAILURE = "airflow_failure"
AIRFLOW_SUCCESS = "airflow_success"


class WarehouseUnreachable(Exception):
    """The warehouse did not take the alert within the deadline (or refused it)."""


def _get(obj: Any, name: str, default: Any = None) -> Any:
    if obj is None:
        return default
    if isinstance(obj, dict):
        return obj.get(name, default)
    return getattr(obj, name, default)


_REASONS = {"task_failure": "the task raised an error or was killed; the task log below has the error"}


def _planned_tries(context: dict[str, Any], ti: Any, max_tries: Any, try_number: Any) -> int | None:
    """How many tries the task has: its ``retries`` + 1 (the task's own declaration), else the instance's
    ``max_tries`` + 1, and never fewer than the try it is at. A DAG-level callback's task instance can carry
    ``max_tries`` 0 whatever the retries were, which read "try 3 of 1"."""
    task = context.get("task") or _get(ti, "task")
    retries = _get(task, "retries")
    planned = retries + 1 if isinstance(retries, int) else max_tries + 1 if isinstance(max_tries, int) else None
    if planned is not None and isinstance(try_number, int):
        planned = max(planned, try_number)
    return planned


def alert_from_context(context: dict[str, Any], *, kind: str = AIRFLOW_FAILURE, title: str | None = None,
                       message: str | None = None) -> Alert:
    """The alert for one Airflow callback: the DAG run, the task, its try, the log URL and the reason."""
    dag_run = context.get("dag_run")
    ti = context.get("ti") or context.get("task_instance")
    dag_id = _get(dag_run, "dag_id") or _get(context.get("dag"), "dag_id") or "?"
    run_id = _get(dag_run, "run_id") or context.get("run_id") or "?"
    task_id = _get(ti, "task_id")
    map_index = _get(ti, "map_index", -1)
    try_number = _get(ti, "try_number")
    max_tries = _get(ti, "max_tries")
    log_url = None
    try:
        log_url = _get(ti, "log_url")
    except Exception:  # the URL needs the API server's base URL setting; the rest of the alert does not
        log_url = None
    reason = context.get("reason")
    exception = context.get("exception")
    stamp = _get(dag_run, "logical_date") or _get(dag_run, "run_after")
    day = stamp.date().isoformat() if hasattr(stamp, "date") else "1970-01-01"
    failed = kind == AIRFLOW_FAILURE
    what = f"task {task_id}" + (f"[{map_index}]" if map_index not in (None, -1) else "") if task_id else "the run"
    tries = _planned_tries(context, ti, max_tries, try_number)
    lines = [
        f"{dag_id} run {run_id}: {what} {'failed' if failed else 'succeeded'}"
        + (f" (try {try_number} of {tries})" if try_number and tries else f" (try {try_number})" if try_number else ""),
    ]
    if reason:
        # a DAG-level callback carries no exception: the cause is in the task's log (linked below)
        lines.append(f"reason: {reason}" + ("" if exception else
                                            f" ({_REASONS.get(str(reason), 'see the task log for the cause')})"))
    if exception:
        lines.append(f"error: {type(exception).__name__}: {exception}")
    if log_url:
        lines.append(f"log: {log_url}")
    if message:
        lines.append(message)
    return Alert(
        kind=kind,
        severity=Severity.CRITICAL if failed else Severity.WARNING,
        day=day,
        title=title or f"{dag_id}: {what} {'failed' if failed else 'succeeded'}",
        message="\n".join(lines),
        retriever=ALL_RETRIEVERS,
        version=str(run_id)[:200],  # one alert per DAG run (and task): a retry of the callback is not another
        measure=(f"{task_id}" + (f"[{map_index}]" if map_index not in (None, -1) else ""))[:200] if task_id else None,
        details={"dag_id": dag_id, "dag_run_id": run_id, "task_id": task_id, "map_index": map_index,
                 "try_number": try_number, "log_url": log_url, "reason": reason},
    )


class _DeadlineStore:
    """An alert store whose calls give up after ``timeout`` seconds (the call goes on in a daemon thread;
    a record that lands after the deadline is marked delivered, as the alert was sent without it)."""

    def __init__(self, open_store: Callable[[], Any], timeout: float):
        self._open = open_store
        self._timeout = timeout
        self._store: Any = None
        self.abandoned = threading.Event()
        self.recorded = False

    def _call(self, what: str, fn: Callable[[Any], Any], late: Callable[[Any, Any], None] | None = None) -> Any:
        box: dict[str, Any] = {}

        def work() -> None:
            try:
                if self._store is None:
                    self._store = self._open()
                box["value"] = fn(self._store)
                if late is not None and self.abandoned.is_set():
                    late(self._store, box["value"])
            except BaseException as exc:  # reported to the waiting caller
                box["error"] = exc

        thread = threading.Thread(target=work, name=f"evalops-alert-{what}", daemon=True)
        thread.start()
        thread.join(self._timeout)
        if thread.is_alive():
            self.abandoned.set()
            raise WarehouseUnreachable(f"no answer within {self._timeout:g} s")
        if "error" in box:
            exc = box["error"]
            raise WarehouseUnreachable(f"{type(exc).__name__}: {str(exc).splitlines()[0][:300] if str(exc) else ''}")
        return box["value"]

    def record_alert(self, alert: Alert) -> StoredAlert:
        def late(store: Any, stored: StoredAlert) -> None:
            store.mark_alert_delivery(stored.alert_id, status="delivered",
                                      error="stored after the deadline; sent without the warehouse")

        stored = self._call("store", lambda s: s.record_alert(alert), late)
        self.recorded = True
        return stored

    def mark_notifier_attempt(self, alert_id: int | str, notifier: str, *, at: Any) -> None:
        self._call("mark", lambda s: s.mark_notifier_attempt(alert_id, notifier, at=at))

    def mark_notifier_delivery(self, alert_id: int | str, notifier: str, *, status: str, error: str | None,
                               next_attempt_at: Any) -> None:
        self._call("mark", lambda s: s.mark_notifier_delivery(alert_id, notifier, status=status, error=error,
                                                              next_attempt_at=next_attempt_at))

    def mark_alert_delivery(self, alert_id: int | str, *, status: str, error: str | None) -> None:
        self._call("mark", lambda s: s.mark_alert_delivery(alert_id, status=status, error=error))

    def retryable_alerts(self, created_since: Any) -> list[Any]:
        return self._call("retryable", lambda s: s.retryable_alerts(created_since))


class _SlackNotifier:
    """Sends through the Slack provider's webhook notifier (``apache-airflow-providers-slack``)."""

    name = "slack"

    def __init__(self, conn_id: str, context: dict[str, Any]):
        try:
            from airflow.providers.slack.notifications.slack_webhook import SlackWebhookNotifier
        except ImportError:
            raise NotificationError("slack_conn_id is set but apache-airflow-providers-slack is not "
                                    "installed") from None
        self._cls = SlackWebhookNotifier
        self._conn_id = conn_id
        self._context = context

    def send(self, alert: Alert) -> None:
        try:
            self._cls(slack_webhook_conn_id=self._conn_id, text=slack_message(alert)).notify(self._context)
        except Exception as exc:
            raise NotificationError(f"Slack webhook via {self._conn_id!r} failed ({type(exc).__name__})") from None


class EvalopsNotifier(BaseNotifier):
    """An Airflow notifier that delivers an evalops alert about the DAG run or task of the callback.

    * ``project``: the evalops project whose settings name the warehouse and the notifiers (default: the
      ``EVALOPS_HOME`` / current folder rules of :func:`evalops.config.load_config`).
    * ``kind``: ``airflow_failure`` (default) or ``airflow_success``.
    * ``store``: store the alert in the warehouse first (default); ``store_timeout``: seconds to wait for it.
    * ``slack_conn_id``: send through the Slack provider instead of evalops' webhook client.
    * ``notifiers``: explicit evalops notifiers (tests), instead of the configured ones.
    """

    template_fields = ("title", "message")

    def __init__(self, title: str | None = None, message: str | None = None, *,
                 project: str | Path | None = None, kind: str = AIRFLOW_FAILURE, store: bool = True,
                 store_timeout: float = 15.0, slack_conn_id: str | None = None,
                 notifiers: Sequence[Any] | None = None):
        super().__init__()
        self.title = title
        self.message = message
        self.project = str(project) if project is not None else None
        self.kind = kind
        self.store = store
        self.store_timeout = store_timeout
        self.slack_conn_id = slack_conn_id
        self.notifiers = list(notifiers) if notifiers is not None else None

    def __repr__(self) -> str:
        return f"EvalopsNotifier(kind={self.kind!r})"

    def render_template_fields(self, context: dict[str, Any], jinja_env: Any = None) -> None:
        # dag.test() hands DAG callbacks a serialized DAG, which has no template environment of its own.
        if jinja_env is None and not hasattr(context.get("dag"), "get_template_env"):
            jinja_env = self.get_template_env(dag=None)
        super().render_template_fields(context, jinja_env)

    def _notifiers(self, cfg: Any, context: dict[str, Any]) -> list[Any]:
        if self.notifiers is not None:
            return self.notifiers
        from evalops.pipeline.notify import notifiers_for

        if self.slack_conn_id:
            return [LogNotifier(), _SlackNotifier(self.slack_conn_id, context)]
        return notifiers_for(cfg.alerting)

    def notify(self, context: dict[str, Any]) -> None:
        from evalops.config import load_config

        alert = alert_from_context(context, kind=self.kind, title=self.title, message=self.message)
        cfg = load_config(home=self.project)
        notifiers = self._notifiers(cfg, context)
        if self.store:
            store = _DeadlineStore(lambda: _warehouse_store(cfg), self.store_timeout)
            try:
                outcomes = deliver_alerts([alert], store, notifiers)
            except WarehouseUnreachable as exc:
                if store.recorded:  # stored and sent; only the delivery mark was lost
                    log.warning("alert %s sent, but its delivery could not be recorded: %s", alert.dedup_key, exc)
                    return
                log.warning("the warehouse was unreachable (%s); sending the alert without storing it", exc)
                unreachable = str(exc)
            else:
                for o in outcomes:
                    if o.errors:
                        log.warning("alert %s stored but not delivered: %s", alert.dedup_key, "; ".join(o.errors))
                return
            alert = Alert(**{**_fields(alert), "message": alert.message + "\nThe evalops warehouse was unreachable "
                             f"({unreachable}); this alert is not stored there."})
        for notifier in notifiers:
            try:
                notifier.send(alert)
            except NotificationError as err:
                log.warning("alert %s not delivered by %s: %s", alert.dedup_key, notifier.name, err)


def _fields(alert: Alert) -> dict[str, Any]:
    import dataclasses

    return {f.name: getattr(alert, f.name) for f in dataclasses.fields(alert)}


def _warehouse_store(cfg: Any) -> Any:
    from evalops.pipeline.store import WarehouseAlertStore, engine_for

    return WarehouseAlertStore(engine_for(cfg))
