"""``evalops alerts``: ``alerts list`` (the stored alerts and their delivery) and ``alerts retry`` (send the
undelivered ones again)."""

from __future__ import annotations

import json
import sys

import click

from evalops.alerting.delivery import UNDELIVERED_ALERTS_EXIT
from evalops.cli._common import Output, emit, output_options, plain, reports_errors
from evalops.cli._project import CONFIG_OPTION, PROJECT_OPTION, project_config
from evalops.cli.db import _read_only_engine
from evalops.util import utc
from evalops.warehouse.config import url_for


@click.group()
def alerts() -> None:
    """Stored alerts and their delivery."""


@alerts.command("retry")
@click.option("--force", is_flag=True, help="Ignore the backoff: retry every undelivered alert now.")
@click.option("--json", "as_json", is_flag=True, help="Print the outcomes as JSON.")
@PROJECT_OPTION
@CONFIG_OPTION
@reports_errors
def retry(force, as_json, project, config_file):
    """Send again the stored alerts that are undelivered or unknown (timed out), younger than the maximum
    age (alerting.retry_max_age_days), whose backoff has passed. Exits with the undelivered-alerts code when
    some stay undelivered."""
    from evalops.pipeline.notify import retry_undelivered
    from evalops.pipeline.store import engine_for, migrate_warehouse

    cfg = project_config(project, config_file)
    migrate_warehouse(cfg)
    outcomes = retry_undelivered(cfg.alerting, engine_for(cfg), force=force)
    rows = [{"dedup_key": o.alert.dedup_key, "title": o.alert.title, "delivery_status": o.status,
             "notifiers": o.per_notifier} for o in outcomes]
    if as_json:
        click.echo(json.dumps(rows, indent=2))
    elif not rows:
        click.echo("no alert to retry")
    else:
        for r in rows:
            click.echo(f"{r['delivery_status']:<12} {r['title']}")
    if any(r["delivery_status"] != "delivered" for r in rows):
        sys.exit(UNDELIVERED_ALERTS_EXIT)


LIST_COLUMNS = ("day", "kind", "severity", "retriever", "version", "measure", "delivery", "attempts", "title")


@alerts.command("list")
@click.option("--days", type=click.IntRange(min=1), default=None,
              help="Only the alerts of the last N days (their run's day, up to today, UTC). Default: every day.")
@click.option("--kind", default=None, help="Only alerts of this kind (regression, floor, validation_failed, "
                                           "retriever_failed, judge_failed, airflow_failure, ...).")
@PROJECT_OPTION
@CONFIG_OPTION
@output_options()
@reports_errors
def list_(days, kind, project, config_file, fmt, output_path):
    """The stored alerts, by day (oldest first): the day, kind and severity, what they are about (retriever, version,
    measure), whether they were delivered (and to which notifier: "logged only" when no webhook or e-mail had
    it) and in how many attempts. Read only: it never creates a warehouse;
    --format json carries every stored field of each alert."""
    import datetime as dt

    from evalops.warehouse.alerts import alert_deliveries, delivery_text, list_alerts

    if config_file is not None:

        engine, *_ = _read_only_engine(url_for(project_config(project, config_file)))
    else:
        engine, *_ = _read_only_engine(None, project)
    since = utc.now().date() - dt.timedelta(days=days - 1) if days else None
    try:
        frame = list_alerts(engine, since=since, kind=kind)
        notifiers = alert_deliveries(engine, [int(i) for i in frame["id"]])
    finally:
        engine.dispose()
    records = []
    for raw in frame.to_dict("records"):
        row = {k: (v if k == "payload" else plain(v)) for k, v in raw.items()}  # NaN -> None, dates -> ISO
        payload = row.get("payload") or {}
        records.append({"id": int(row["id"]), "day": row["day"], "kind": row["kind"], "severity": row["severity"],
                        "retriever": row["retriever"], "version": row["version"] or None,
                        "measure": row["measure"] or None, "delivery_status": row["delivery_status"],
                        "delivery": delivery_text(row["delivery_status"], int(row["delivery_attempts"]),
                                                  notifiers.get(int(row["id"]), {})),
                        "notifiers": {name: d["status"] for name, d in notifiers.get(int(row["id"]), {}).items()},
                        "attempts": int(row["delivery_attempts"]), "delivered_at": row["delivered_at"],
                        "delivery_error": row["delivery_error"] or None, "created_at": row["created_at"],
                        "title": payload.get("title") if isinstance(payload, dict) else None,
                        "message": row["message"], "dedup_key": row["dedup_key"]})
    records.sort(key=lambda r: (r["day"], r["created_at"] or "", r["id"]))  # by day, then as stored
    scope = " and ".join(filter(None, [f"of kind {kind}" if kind else "", f"in the last {days} days" if days else ""]))
    emit(Output(data={"alerts": records}, columns=(*LIST_COLUMNS, "delivery_status", "delivered_at", "delivery_error",
                                                    "id"),
                rows=records, table_columns=LIST_COLUMNS,
                empty=f"no alert stored{' ' + scope if scope else ''}"), fmt, output_path)
