"""``evalops alerts``: the stored alerts and their delivery, and ``alerts retry`` for the undelivered ones."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import click

from evalops.cli._common import reports_errors

CONFIG_OPTION = click.option(
    "--config", "config_file", type=click.Path(exists=True, dir_okay=False), default=None,
    help="A YAML configuration file (default: $EVALOPS_CONFIG or ./evalops.yaml; see README).",
)


@click.group()
def alerts() -> None:
    """Stored alerts and their delivery."""


@alerts.command("retry")
@click.option("--force", is_flag=True, help="Ignore the backoff: retry every undelivered alert now.")
@click.option("--json", "as_json", is_flag=True, help="Print the outcomes as JSON.")
@CONFIG_OPTION
@reports_errors
def retry(force, as_json, config_file):
    """Send again the stored alerts that are undelivered or unknown (timed out), younger than the maximum
    age (alerting.retry_max_age_days), whose backoff has passed. Exits with the undelivered-alerts code when
    some stay undelivered."""
    from evalops.alerting.delivery import UNDELIVERED_ALERTS_EXIT
    from evalops.config import load_config
    from evalops.pipeline.notify import retry_undelivered
    from evalops.pipeline.store import migrate_warehouse

    cfg = load_config(Path.cwd(), config_file=config_file)
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
