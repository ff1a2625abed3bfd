"""``evalops run`` (one evaluation run, no Airflow), ``evalops demo`` (two days of the DAG, in-process) and
``evalops report`` (show a run's report)."""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any

import click

from evalops.cli._common import (
    DAY,
    Output,
    emit,
    exits_fast,
    output_options,
    reports_errors,
)
from evalops.cli._project import ALLOW_LOCAL_OPTION, CONFIG_OPTION, PROJECT_OPTION, project_config
from evalops.cli.gate import (
    JUNIT_HELP,
    PULL_REQUEST_OPTION,
    QUIET_OPTION,
    RUN_ID_OPTION,
    SUMMARY_MD_OPTION,
    finish_run,
    gated_run,
)
from evalops.errors import InputError
from evalops.pipeline.demo import (
    BACKFILL_DAYS,
    CHUNKINGS_REGISTRY,
    chunking_summary,
    demo_summary,
    plan_demo,
    run_backfill,
    run_chunkings,
)
from evalops.util import utc
from evalops.util.secrets import mask_url
from evalops.util.utc import as_utc
from evalops.warehouse.config import url_for as warehouse_url_for


@click.command()
@click.option("--date", "day", default=None, type=DAY, help="The day to evaluate, YYYY-MM-DD (default: today, UTC).")
@PROJECT_OPTION
@CONFIG_OPTION
@click.option("--fail-on-regression", is_flag=True, help="Exit 4 when the run raised a regression alert (for CI).")
@click.option("--junit-xml", type=click.Path(dir_okay=False, path_type=Path), default=None, help=JUNIT_HELP)
@PULL_REQUEST_OPTION
@RUN_ID_OPTION
@SUMMARY_MD_OPTION
@click.option("--json", "as_json", is_flag=True, help="Same as --format json.")
@QUIET_OPTION
@click.option("--timings", is_flag=True,
              help="At the end, print each step's wall and CPU seconds on stderr (the whole process's too).")
@ALLOW_LOCAL_OPTION
@output_options()
@exits_fast
@reports_errors
def run(day, project, config_file, fail_on_regression, junit_xml, pull_request, run_id, summary_md, as_json, quiet,
        timings, allow_local, fmt, output_path):
    """Run one evaluation of the project (every step of the DAG, in this process, without Airflow) for DAY's
    window, and print what it decided: per gold set, each version's measures, the delta against its
    baseline with the decision interval and the decision (with its reason code); then the alerts and the
    report's path. Its steps show on stderr as they start (a live line on a terminal; none with -q).

    Exits 6 when an alert stays undelivered (or unknown) after sending; `evalops alerts retry` and every
    later run send it again. --timings prints how long each step took (wall and CPU seconds).
    --pull-request reads the shared warehouse's baselines and writes nothing there (see `evalops gate`)."""
    clock = None
    if timings:
        from evalops.cli._timings import StageClock

        clock = StageClock()
    cfg = project_config(project, config_file, allow_local=allow_local)
    cfg, run_ctx, result, incomplete, prepared = gated_run(cfg, day, clock, run_id=run_id, pull_request=pull_request,
                                                           quiet=quiet)
    if clock is not None:
        clock.mark("printing the results")
    try:
        finish_run(cfg, run_ctx, result, incomplete, fail_on_regression=fail_on_regression, junit_xml=junit_xml,
                   fmt="json" if as_json else fmt, output_path=output_path, gate_summary=False, quiet=quiet,
                   summary_md=summary_md, pull_request=prepared)
    finally:
        if clock is not None:
            clock.print()


def _fmt(value, spec: str) -> str:
    return "–" if value is None else format(value, spec)


@click.command()
@click.option("--days", type=click.IntRange(0, BACKFILL_DAYS), default=BACKFILL_DAYS, show_default=True,
              help="Days before day 1 to backfill with `evalops run` (the dashboard's history).")
@click.option("--no-backfill", is_flag=True, help="Skip the backfill (same as --days 0): only the two DAG days.")
@reports_errors
def demo(days, no_backfill):
    """Two days of the evaluation DAG on the sample data in include/, on the embedded SQLite warehouse.

    Day 1 scores the deployed baseline and promotes it; day 2 deploys every candidate: a hybrid of BM25 and
    TF-IDF, one with a planted regression, and the built-in dense encoder's vector, vector + BM25 hybrid
    and reranked versions. Two chunkings of the knowledge base (include/chunks) are compared on the same
    gold set in runs of their own, each scored as the MaxP document run of its chunks. The 28 days before
    day 1 are scored first with `evalops run` (no Airflow), so the dashboard has a month of history; an
    interrupted backfill resumes where it stopped, and a second demo adds no row. The offline lexical judge
    labels the top contexts (unless the project sets a judge). Run it from the project folder; it takes a few
    minutes.
    """
    import time

    from evalops.airflow.runner import run_demo
    from evalops.config import load_config, without_settings_variables
    from evalops.project import demo_project

    started, cpu = time.perf_counter(), sum(os.times()[:4])  # CPU of this process and its children
    demo_started = utc.now()
    environ = without_settings_variables(os.environ, location_only=True)
    cfg = load_config(demo_project(), environ=environ)
    plan = plan_demo(cfg)
    days = 0 if no_backfill else days
    click.echo("evalops demo: the retrieval_eval DAG for two days, in-process (Airflow dag.test), "
               f"warehouse {mask_url(warehouse_url_for(cfg))}")
    click.echo(f"  day 1: deployed {', '.join(f'{r} {v}' for r, v in plan.baselines)}; then promote_baseline")
    click.echo(f"  day 2: also deploys {', '.join(f'{r} {v}' for r, v in plan.candidates)}")
    click.echo(f"  judge: {plan.judge} on the gold set and on sampled production queries")
    if plan.chunkings is not None:
        click.echo(f"  chunkings ({CHUNKINGS_REGISTRY}, runs of their own on the same days): deployed "
                   f"{', '.join(f'{r} {v}' for r, v in plan.chunkings.baselines)}, then also "
                   f"{', '.join(f'{r} {v}' for r, v in plan.chunkings.candidates)}")
    if days:
        click.echo(f"backfill: the {days} days before day 1 with `evalops run` (no Airflow); a day already in the "
                   "warehouse under the same fingerprint is skipped")
    skipped: list = []

    def progress(item) -> None:
        if item.status == "skipped":
            skipped.append(item)
            return
        if skipped:
            click.echo(f"  days {skipped[0].n}-{skipped[-1].n} of {item.total} ({skipped[0].day} .. {skipped[-1].day}): "
                       "already in the warehouse, skipped")
            skipped.clear()
        click.echo(f"  day {item.n:>2} of {item.total}  {item.day}  scoring, judging, comparing, reporting "
                   f"({time.perf_counter() - started:.0f} s so far)")

    backfilled = run_backfill(cfg, plan, days, progress=progress)
    if skipped:
        click.echo(f"  days {skipped[0].n}-{skipped[-1].n} of {skipped[-1].total}: already in the warehouse, skipped")
    if backfilled:
        n_scored = sum(d.status == "scored" for d in backfilled)
        click.echo(f"  backfilled {backfilled[0].day} .. {backfilled[-1].day}: {n_scored} scored now, "
                   f"{len(backfilled) - n_scored} already there")
    elif not days:
        click.echo("backfill: skipped (--no-backfill or --days 0)")
    click.echo("day 1, promote_baseline, day 2: the DAGs with Airflow's dag.test() in a child process "
               f"(its output goes to {plan.workdir / 'airflow.log'}) ...")
    results = run_demo(cfg, plan)
    if plan.chunkings is not None:
        click.echo("chunkings: day 1 and day 2 with `evalops run` under their own registry (no Airflow) ...")
        for day in run_chunkings(cfg, plan):
            click.echo(f"  {day['logical_date'][:10]}  {day['run_id']:<24} done")
    summary = demo_summary(cfg, plan, results)
    for dag_id, day, state in summary["states"]:
        click.echo(f"  {day}  {dag_id:<17} {state}")
    _echo_versions(summary)
    _echo_chunkings(chunking_summary(cfg, plan))
    _echo_judge(summary["judge"])
    _echo_alerts(summary["alerts"], plan.candidates, demo_started)
    _echo_conversations(cfg.home, Path(summary["report"]).parent / "conversations")
    counts = summary["counts"]
    click.echo("\nwarehouse rows: " + ", ".join(f"{k} {v}" for k, v in counts.items()))
    click.echo(f"report: {summary['report']}")
    click.echo(f"Airflow log: {plan.workdir / 'airflow.log'}   ({time.perf_counter() - started:.0f} s, "
               f"{sum(os.times()[:4]) - cpu:.0f} s CPU)")
    click.echo("dashboard: evalops dashboard   (then open http://127.0.0.1:8765/; "
               "or `evalops dashboard --export site/` for static files)")


def _echo_versions(summary: dict[str, Any]) -> None:
    """Day 2's table: each gold-set version's status, mean, delta, adjusted p and decision."""
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


def _echo_alerts(alerts: list[dict[str, Any]], candidates: Any, demo_started: Any) -> None:
    """Each alert of the demo (one an earlier demo raised is said to be), then the candidates without one."""
    flagged = {a["version"] for a in alerts if a["kind"] == "regression"}
    click.echo("")
    for alert in alerts:
        # an alert a previous demo raised is the same alert (same dedup key): not raised or sent again
        earlier = alert["created_at"] is not None and as_utc(alert["created_at"]) < demo_started
        status = f"{alert['delivery_status']} by an earlier demo, not sent again" if earlier else alert["delivery_status"]
        click.echo(f"ALERT ({alert['kind']}, {status}):")
        click.echo("  " + alert["message"].replace("\n", "\n  "))
    for _, version in candidates:
        if version not in flagged:
            click.echo(f"no alert for {version}")


def _echo_chunkings(chunkings: dict) -> None:
    """The demo's two chunkings of the knowledge base: each version's chunking and score, the decision
    between them (each scored as the MaxP document run of its chunks against the same gold set)."""
    if not chunkings:
        return
    m = chunkings["measure"]
    click.echo(f"\nday 2, chunkings of the knowledge base (run {chunkings['run_id']}), gold set, {m} of each "
               "version's chunks as MaxP documents, against the deployed chunking:")
    rows = chunkings["versions"]
    width = max(len(f"{r['retriever']} {r['version']}") for r in rows) + 2
    cw = max(len("chunking"), *(len(r["chunking"] or "–") for r in rows)) + 2
    click.echo(f"  {'version':<{width}}{'chunking':<{cw}}{'status':<11}{m:>9}{'delta':>9}{'adj. p':>10}  decision")
    for row in rows:
        decision = row["decision"] or "–"
        click.echo(
            f"  {row['retriever'] + ' ' + row['version']:<{width}}{row['chunking'] or '–':<{cw}}"
            f"{row['status'] or '–':<11}{_fmt(row['mean'], '.4f'):>9}{_fmt(row['delta'], '+.4f'):>9}"
            f"{_fmt(row['p_adjusted'], '.2g'):>10}  {decision.upper() if decision == 'regression' else decision}"
        )
    for line in chunkings["described"]:
        click.echo(f"  {line}")
    click.echo(f"  report: {chunkings['report']}")


def _echo_conversations(home: Path, out: Path) -> None:
    """The demo's conversation lines: BM25 asked each turn three ways, by depth, decided by conversation."""
    from evalops.conversations.demo import CONVERSATIONS, MEASURE, demo_conversations

    if not (home / CONVERSATIONS).is_dir():  # a checkout from before the sample conversations
        click.echo(f"\nconversations: none ({CONVERSATIONS} is absent)")
        return
    from evalops.reports.write import link_related

    results, paths = demo_conversations(home, out)
    link_related(out.parent)  # the day's run report, written before, links the conversations report now
    d = results.describe
    click.echo(f"\nconversations ({d['conversations']} in English and Chinese, {d['judged_turns']} turns), BM25 asked "
               f"each turn three ways, {MEASURE} by turn depth; decided by conversation against the rewrite:")
    decided = {c.candidate_name: c for c in results.comparisons}
    for version in results.versions:
        s = results.scores[(version, MEASURE)]
        depth = "  ".join(f"turn {p.depth} {p.mean:.4f}" for p in s.depth)
        c = decided.get(version)
        verdict = "baseline" if c is None else f"{c.delta:+.4f} over {c.n} conversations: {c.decision}" + (
            f" ({c.reason_code})" if c.reason_code else "")
        click.echo(f"  {version:<8} {s.mean_of_conversations:.4f}  {depth}  {verdict}")
    click.echo(f"  report: {paths['html']}")


def _echo_judge(judged: dict) -> None:
    """The demo's judge lines: what it labelled on day 2 and its agreement with the gold set's grades."""
    if not judged:
        click.echo("\njudge: off (no judge_runs for day 2)")
        return
    first = next(iter(judged.values()))
    click.echo(f"\njudge {first['judge']} ({'offline, no model' if first['offline'] else 'LLM'}), day 2:")
    for scope, j in sorted(judged.items()):
        line = (f"  {scope:<11} {j['labels']} labels on {j['queries'] if j['queries'] is not None else '–'} queries "
                f"({j['requests']} new, {j['cache_hits']} cached, {j['missing']} missing)")
        if j["kappa"] is not None:
            line += (f"; agreement with the human grades: kappa {j['kappa']:.3f} over {j['pairs_with_human_grades']}"
                     f" pairs, so its comparisons are {j['gate']} (alerting needs kappa >= {j['threshold']})")
        if j["failed"]:
            line += f"; FAILED: {j['failed']}"
        click.echo(line)


@click.command()
@click.argument("run_key", required=False)
@click.option("--html", "as_html", is_flag=True, help="Print the HTML report's path instead of the markdown.")
@PROJECT_OPTION
@CONFIG_OPTION
@output_options(formats=("markdown", "json"), default="markdown")
@reports_errors
def report(run_key, as_html, project, config_file, fmt, output_path):
    """Print a run's markdown report (RUN_KEY is the report folder's name; default: the newest report).

    RUN_KEY may also be DAG/RUN_ID as the run printed it, or the run id alone when one report has it.
    Read only: it never creates .evalops/. --format json prints the report's folder and files.
    """
    cfg = project_config(project, config_file)
    root = cfg.report_dir
    folders = sorted((p for p in root.glob("*") if (p / "report.md").is_file()), key=lambda p: p.stat().st_mtime)
    if run_key:
        from evalops.reports import report_dir_for

        wanted = report_dir_for(root, run_key)
        named = [p for p in folders if p == wanted or p.name == run_key]
        # a run id alone (`cli__2024-06-01`, as `gate` names it): the one report of that run id under any DAG
        by_run = [p for p in folders if p.name.endswith("_" + wanted.name)]
        if not named and len({p.name for p in by_run}) > 1:
            raise InputError(f"{root}: several reports for run id {run_key}: "
                             f"{', '.join(sorted(p.name for p in by_run))}; name one of them")
        if not named and not by_run and folders:
            shown = ", ".join(p.name for p in folders[-5:])
            raise InputError(f"{root}: no report for {run_key}; the newest here: {shown} (give one of these names, "
                             "or DAG/RUN_ID as the run printed it)")
        folders = named or by_run
    if not folders:
        raise InputError(f"{root}: no report{' for ' + run_key if run_key else ''} yet; run `evalops run` or "
                         "the DAG first")
    folder = folders[-1]
    files = {"run": folder.name, "folder": str(folder), "markdown": str(folder / "report.md"),
             "html": str(folder / "report.html")}
    if fmt == "json":
        emit(Output(data=files), fmt, output_path)
        return
    text = str(folder / "report.html") + "\n" if as_html else (folder / "report.md").read_text(encoding="utf-8")
    if output_path is not None:
        output_path.parent.mkdir(parents=True, exist_ok=True)
        output_path.write_text(text, encoding="utf-8")
    else:
        sys.stdout.write(text)
