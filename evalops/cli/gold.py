"""``evalops gold``: the gold set's versions made from people's labels (``evalops gold merge``)."""

from __future__ import annotations

import getpass

import click

from evalops.cli._common import dump_json, reports_errors
from evalops.cli._project import CONFIG_OPTION, PROJECT_OPTION, project_config


@click.group()
def gold() -> None:
    """The gold set's versions: fold the annotators' decided labels into the next one."""


@gold.command("merge")
@PROJECT_OPTION
@CONFIG_OPTION
@click.option("--gold-set", "name", default="gold", show_default=True, help="The gold set to extend.")
@click.option("--by", "merged_by", default=None, help="Who merges (recorded; default: the login name).")
@click.option("--dry-run", is_flag=True, help="Say what would be added and write nothing.")
@click.option("--format", "fmt", type=click.Choice(["text", "json"]), default="text", show_default=True)
@reports_errors
def merge(project, config_file, name, merged_by, dry_run, fmt):
    """Fold the decided labels of the annotation queue (agreed by labels_per_item annotators, or adjudicated
    in the dashboard) into a new version of the gold set: validated by the gold-set contract, the judgments
    file appended to after a copy of the parent version is kept, and the version recorded in the warehouse
    with the provenance of every judgment. The next run re-scores the baseline under it (a new fingerprint)."""
    from evalops.annotation.merge import merge_gold_set

    cfg = project_config(project, config_file)
    result = merge_gold_set(cfg, name=name, merged_by=merged_by or getpass.getuser(), dry_run=dry_run)
    payload = {"gold_set": name, "parent_version": result.parent_version, "version": result.version,
               "number": result.number, "file": str(result.path),
               "archive": None if result.archive is None else str(result.archive),
               "added": len(result.plan.added), "left_out": dict(result.plan.left_out)}
    if fmt == "json":
        click.echo(dump_json(payload))
        return
    click.echo(f"gold set {name}: {result.plan.describe()}")
    if result.version is None:
        click.echo("nothing written" + (" (dry run)" if dry_run else ""))
    else:
        click.echo(f"version {result.number} ({result.version}, parent {result.parent_version}) written to "
                   f"{result.path}; the parent's file is kept at {result.archive}. The next run re-scores the "
                   "baseline under it.")
