"""``evalops alerts``: the stored alerts and their delivery, and ``alerts retry`` for the undelivered ones."""

from __future__ import annotations

import json
import sys

import click

from evalops.alerting.delivery import UNDELIVERED_ALERTS_EXIT
from evalops.cli._common import reports_errors
from evalops.cli._project import CONFIG_OPTION, PROJECT_OPTION, project_config


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
    from evalops.pipeline.store import migrate_warehouse

    cfg = project_config(project, config_file)
    migrate_warehouse(cfg)
    outcomes = retry_undelivered(cfg, force=force)
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
