"""``evalops run`` (one evaluation run, no Airflow), ``evalops demo`` (two days of the DAG, in-process) and
``evalops report`` (show a run's report)."""

from __future__ import annotations

import datetime as dt
import json
import sys
from pathlib import Path

import click

from evalops.cli._common import reports_errors, stderr_is_terminal
from evalops.errors import InputError

CONFIG_OPTION = click.option(
    "--config", "config_file", type=click.Path(exists=True, dir_okay=False), default=None,
    help="A YAML configuration file (default: $EVALOPS_CONFIG or ./evalops.yaml; see README).",
)


def _config(config_file: str | None):
    from evalops.config import load_config

    return load_config(Path.cwd(), config_file=config_file)


def _say(message: str) -> None:
    if stderr_is_terminal():
        click.echo(f"  {message} ...", err=True)


@click.command()
@click.option("--date", "day", default=None, help="The day to evaluate, YYYY-MM-DD (default: today, UTC).")
@CONFIG_OPTION
@click.option("--json", "as_json", is_flag=True, help="Print the result as JSON.")
@reports_errors
def run(day, config_file, as_json):
    """Run one evaluation (every step of the DAG, in this process, without Airflow) for DAY's window.

    Exits with the undelivered-alerts code when an alert stays undelivered (or unknown) after sending;
    `evalops alerts retry` and every later run send it again."""
    from evalops.alerting.delivery import UNDELIVERED_ALERTS_EXIT
    from evalops.pipeline import RunContext, run_local

    cfg = _config(config_file)
    try:
        date = dt.date.fromisoformat(day) if day else dt.datetime.now(dt.timezone.utc).date()
    except ValueError:
        raise InputError(f"--date {day!r} is not a date; use YYYY-MM-DD") from None
    result = run_local(cfg, RunContext.for_day(date), progress=_say)
    if as_json:
        click.echo(json.dumps({"report": result["report"], "alerts": result["alerts"],
                               "versions": [{k: s[k] for k in ("retriever", "version", "dataset", "run_id")}
                                            for s in result["versions"]]}, indent=2))
    else:
        for alert in result["alerts"]:
            state = "" if alert.get("delivered", True) else f"  ({alert.get('delivery_status', 'undelivered')})"
            click.echo(f"ALERT  {alert['title']}{state}")
        if not result["alerts"]:
            click.echo("no alerts")
        click.echo(f"report: {result['report']}")
    if any(not a.get("delivered", True) for a in result["alerts"]):
        sys.exit(UNDELIVERED_ALERTS_EXIT)


def _fmt(value, spec: str) -> str:
    return "–" if value is None else format(value, spec)


@click.command()
@reports_errors
def demo():
    """Two days of the evaluation DAG on the sample data in include/, on the embedded SQLite warehouse.

    Day 1 scores the deployed baseline and promotes it; day 2 deploys a better candidate (hybrid) and one
    with a planted regression. Run it from the project folder; it takes about a minute.
    """
    import time

    from evalops.pipeline.demo import demo_summary, plan_demo, run_demo
    from evalops.secrets import mask_url

    started = time.perf_counter()
    cfg = _config(None)
    plan = plan_demo(cfg)
    click.echo("evalops demo: the retrieval_eval DAG for two days, in-process (Airflow dag.test), "
               f"warehouse {mask_url(cfg.resolved_warehouse_url())}")
    click.echo(f"  day 1: deployed {', '.join(f'{r} {v}' for r, v in plan.baselines)}; then promote_baseline")
    click.echo(f"  day 2: also deploys {', '.join(f'{r} {v}' for r, v in plan.candidates)}")
    results = run_demo(cfg, plan)
    summary = demo_summary(cfg, plan, results)
    for dag_id, day, state in summary["states"]:
        click.echo(f"  {day}  {dag_id:<17} {state}")
    m = summary["measure"]
    click.echo(f"\nday 2, gold set, {m} against the baseline:")
    width = max(len(f"{r['retriever']} {r['version']}") for r in summary["versions"]) + 2
    click.echo(f"  {'version':<{width}}{'status':<11}{m:>9}{'delta':>9}{'adj. p':>10}  decision")
    for row in summary["versions"]:
        decision = row["decision"] or "–"
        click.echo(
            f"  {row['retriever'] + ' ' + row['version']:<{width}}{row['status'] or '–':<11}"
            f"{_fmt(row['mean'], '.4f'):>9}{_fmt(row['delta'], '+.4f'):>9}{_fmt(row['p_adjusted'], '.2g'):>10}  "
            f"{decision.upper() if decision == 'regression' else decision}"
        )
    alerts = summary["alerts"]
    flagged = {a["version"] for a in alerts if a["kind"] == "regression"}
    click.echo("")
    for alert in alerts:
        click.echo(f"ALERT ({alert['kind']}, {alert['delivery_status']}):")
        click.echo("  " + alert["message"].replace("\n", "\n  "))
    for _, version in plan.candidates:
        if version not in flagged:
            click.echo(f"no alert for {version}")
    counts = summary["counts"]
    click.echo("\nwarehouse rows: " + ", ".join(f"{k} {v}" for k, v in counts.items()))
    click.echo(f"report: {summary['report']}")
    click.echo(f"Airflow log: {plan.workdir / 'airflow.log'}   ({time.perf_counter() - started:.0f} s)")


@click.command()
@click.argument("run_key", required=False)
@click.option("--html", "as_html", is_flag=True, help="Print the HTML report's path instead of the markdown.")
@CONFIG_OPTION
@reports_errors
def report(run_key, as_html, config_file):
    """Print a run's markdown report (RUN_KEY is the report folder's name; default: the newest report)."""
    cfg = _config(config_file)
    root = cfg.report_dir
    folders = sorted((p for p in root.glob("*") if (p / "report.md").is_file()), key=lambda p: p.stat().st_mtime)
    if run_key:
        from evalops.reports import report_dir_for

        wanted = report_dir_for(root, run_key)
        folders = [p for p in folders if p == wanted or p.name == run_key]
    if not folders:
        raise InputError(f"{root}: no report{' for ' + run_key if run_key else ''} yet; run `evalops run` or "
                         "the DAG first")
    folder = folders[-1]
    if as_html:
        click.echo(str(folder / "report.html"))
    else:
        sys.stdout.write((folder / "report.md").read_text(encoding="utf-8"))
