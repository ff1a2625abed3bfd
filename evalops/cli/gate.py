"""``evalops gate``: one evaluation run as a CI check (and the ``--fail-on-regression`` / ``--junit-xml``
options of ``evalops run``, which share this code).

The verdict is :mod:`evalops.gate`'s, under the ``--fail-on`` policy: by default a regression alert or a
floor breach fails the gate (exit 4), a version that could not be scored or was scored partially errors it
(exit 5), a comparison that cannot be found fails it closed (exit 7); bad input stops it before anything is
scored (exit 3); see :mod:`evalops.exitcodes`.
"""

from __future__ import annotations

import datetime as dt
import sys
from pathlib import Path
from typing import Any

import click

from evalops.cli._common import (
    DAY,
    Output,
    emit,
    frozen_at_each_step,
    markdown_cell,
    measure_labels,
    output_options,
    reports_errors,
    steps,
    write_text,
)
from evalops.cli._project import ALLOW_LOCAL_OPTION, CONFIG_OPTION, PROJECT_OPTION, given_location, project_config
from evalops.errors import InputError, ValidationError
from evalops.exitcodes import ExitCode, most_severe
from evalops.pipeline.registry import canonical_measures
from evalops.util import numfmt, utc

__all__ = ["gate", "gated_run", "finish_run", "result_tables", "summary_markdown"]

# csv and markdown: one interval per comparison, the decision interval (JSON carries every field)
CASE_COLUMNS = ("retriever", "version", "measure", "outcome", "kind", "decision", "delta", "interval_low",
                "interval_high", "interval_level", "p_adjusted", "baseline_version", "message")


def gated_run(cfg: Any, day: dt.date | None, clock: Any = None, *, run_id: str | None = None,
              pull_request: bool = False, quiet: bool = False, title: str = "evalops run"
              ) -> tuple[Any, Any, dict[str, Any], Exception | None, Any]:
    """Run the pipeline for ``day``, showing its steps on stderr (:func:`evalops.cli._common.steps`; none with
    ``quiet``). Returns the settings it ran with, the run context, the result, the ``IncompleteRunError`` a
    failed version raised (after the report), if any, and the :class:`evalops.pipeline.pullrequest.PullRequestRun`
    (None outside pull-request mode); any other error propagates. ``clock``: a
    :class:`evalops.cli._timings.StageClock` that marks each step.

    ``run_id``: the run key's id (default ``cli__<day>``). ``pull_request``: the run reads the shared warehouse
    and writes only to its own folder (:mod:`evalops.pipeline.pullrequest`); its run id defaults to the CI's,
    and its key is ``pr__<run id>``."""
    import os

    from evalops.pipeline import IncompleteRunError, RunContext, run_local

    day = day or utc.now().date()
    prepared = None
    with steps(title, quiet=quiet) as shown:
        say = frozen_at_each_step(clock.wrap(shown.step) if clock is not None else shown.step)
        if pull_request:
            from evalops.pipeline.pullrequest import prepare_pull_request, pull_request_run_id

            run_id = pull_request_run_id(run_id, os.environ)
            say("reading the baselines from the shared warehouse")
            prepared = prepare_pull_request(cfg, run_id)
            copied = prepared.copied
            shown.note(f"pull request {run_id}: read {copied.get('baselines', 0)} baseline rows and "
                       f"{copied.get('query_scores', 0)} scores of their runs from {prepared.source}; this run "
                       f"writes only to {prepared.folder}")
            cfg, run_id = prepared.cfg, f"pr__{run_id}"
        run = RunContext.for_day(day, run_id=run_id)
        try:
            return cfg, run, run_local(cfg, run, progress=say, judge_progress=shown.note), None, prepared
        except IncompleteRunError as exc:
            if exc.result is None:
                raise
            return cfg, run, exc.result, exc, prepared


def _summary_lines(cases: list[Any], code: int) -> list[str]:
    counts = {o: sum(c.outcome == o for c in cases) for o in ("failure", "error", "skipped", "passed")}
    verdict = "PASSED" if code == ExitCode.SUCCESS else f"FAILED (exit {int(code)}, {ExitCode(code).name.lower()})"
    failures = f"{counts['failure']} failure{'' if counts['failure'] == 1 else 's'}"
    # a regression on a measure outside the alerting ones passes the gate; it is listed, not hidden
    quiet = sum(c.outcome == "passed" and c.decision == "regression" for c in cases)
    # so does a version that was not compared (no decision, and not the baseline itself): a pass that
    # compared nothing says so
    uncompared = [c for c in cases if c.outcome == "passed" and c.decision is None and c.version != c.baseline_version]
    no_baseline = sum(c.baseline_version is None for c in uncompared)
    notes = [note for n, note in (
        (quiet, f"{quiet} of them a regression on a measure that does not alert"),
        (no_baseline, f"{no_baseline} of them not compared: no baseline yet"),
        (len(uncompared) - no_baseline, f"{len(uncompared) - no_baseline} of them not compared"),
    ) if n]
    lines = [f"gate {verdict}: {len(cases)} checks, {failures}, {counts['error']} errors, "
             f"{counts['skipped']} inconclusive, {counts['passed']} passed"
             + (f" ({'; '.join(notes)})" if notes else "")]
    for case in cases:
        if case.outcome != "passed" or case.decision == "regression":
            lines.append(f"  {case.outcome.upper():<8} {case.retriever} {case.version}: {case.message}")
    return lines


SUMMARY_ROWS = 30  # a pull-request comment stays short; the JUnit XML and the report list every case


def summary_markdown(cases: list[Any], code: int, *, title: str, notes: list[str] = ()) -> str:
    """The gate's verdict as a short markdown text for a pull-request comment: a heading with the verdict,
    the counts, ``notes`` (one line each), then one table row per case that is not passed or whose decision
    is not ``no_change`` (a regression, an improvement, an inconclusive comparison; the first
    :data:`SUMMARY_ROWS`): the version, the measure, the means, the delta with its decision interval, the
    decision (severity, reason code) and the kind. Every text is escaped (:func:`markdown_cell`)."""
    from evalops.reports.tables import decision_interval

    counts = {o: sum(c.outcome == o for c in cases) for o in ("failure", "error", "skipped", "passed")}
    verdict = "passed" if code == ExitCode.SUCCESS else f"FAILED (exit {int(code)}, {ExitCode(code).name.lower()})"
    lines = [f"### {markdown_cell(title)}: {verdict}", "",
             f"{len(cases)} checks: {counts['failure']} failing, {counts['error']} errors, {counts['skipped']} "
             f"inconclusive, {counts['passed']} passed"]
    lines += [f"- {markdown_cell(note)}" for note in notes]
    shown = [c for c in cases if c.outcome != "passed" or (c.decision is not None and c.decision != "no_change")]
    if shown:
        lines += ["", "| outcome | version | measure | baseline → candidate | delta [decision interval] | decision | kind |",
                  "|---|---|---|---|---|---|---|"]
        for case in shown[:SUMMARY_ROWS]:
            if case.decision is None:  # not compared: failed, missing, a floor, partial
                cells = [case.outcome, f"{case.retriever} {case.version}", case.measure, "", "", case.message, case.kind or ""]
            else:  # a case of the inputs or the judge has a decision and no comparison
                c = case.comparison
                interval = "" if c is None else decision_interval(c.interval_low, c.interval_high, c.interval_level,
                                                                  missing="")
                tags = "" if c is None else ", ".join(x for x in (c.severity, c.reason_code) if x)
                cells = [case.outcome, f"{case.retriever} {case.version}", case.measure,
                         f"{numfmt.number(c and c.baseline_mean)} → {numfmt.number(c and c.candidate_mean)}"
                         + (f" (vs {case.baseline_version})" if case.baseline_version else ""),
                         numfmt.number(c and c.delta, signed=True) + (f" [{interval}]" if interval else ""),
                         case.decision + (f" ({tags})" if tags else ""), case.kind or ""]
            lines.append("| " + " | ".join(markdown_cell(c) or " " for c in cells) + " |")
        if len(shown) > SUMMARY_ROWS:
            lines.append(f"\n... and {len(shown) - SUMMARY_ROWS} more: see the JUnit XML and the report")
    else:
        lines += ["", "No comparison changed (every case passed with no change, or nothing was compared)."]
    return "\n".join(lines) + "\n"


def _write_summary_md(path: Path | None, text: str) -> None:
    if path is not None:
        write_text(path, text, "the summary")


def result_tables(cfg: Any, result: dict[str, Any]) -> dict[str, list[dict[str, Any]]]:
    """What the run decided, per gold set (warehouse ``dataset``): one row per version and measure with
    the version's mean, and for a compared version the delta against its baseline, the decision interval
    and the decision with its severity and reason code. Read from the warehouse (``aggregates``,
    ``ab_tests``), as the report reads them; production samples (weak labels) are left to the report."""
    from evalops.config.settings import PRODUCTION
    from evalops.pipeline.store import engine_for
    from evalops.warehouse import get_run, load_ab_tests, load_aggregates

    engine = engine_for(cfg)
    measures = canonical_measures(cfg)
    labels = measure_labels(cfg.measures)
    tables: dict[str, list[dict[str, Any]]] = {}
    # each retriever's baseline first, then its other versions in the run's order
    ordered = sorted(result["versions"], key=lambda s: (s["dataset"], s["retriever"], s["role"] != "baseline"))
    for spec in ordered:
        if spec["dataset"] == PRODUCTION:
            continue
        status = get_run(engine, spec["run_id"]).status
        means = {} if status == "failed" else {
            row["measure"]: row for row in load_aggregates(engine, spec["run_id"]).to_dict("records")}
        compared = {}
        if spec.get("baseline_run_id") is not None and status != "failed":
            compared = {row["measure"]: row for row in load_ab_tests(
                engine, candidate_run_id=spec["run_id"], baseline_run_id=spec["baseline_run_id"]).to_dict("records")}
        for measure in measures:
            agg, ab = means.get(measure), compared.get(measure)
            tables.setdefault(spec["dataset"], []).append({
                "retriever": spec["retriever"], "version": spec["version"], "role": spec["role"],
                "status": status, "measure": labels.get(measure, measure),
                "mean": None if agg is None else agg["mean"], "n": None if agg is None else agg["n"],
                "baseline_version": spec.get("baseline_version") if ab is not None else None,
                "delta": None if ab is None else ab["delta"],
                "interval_low": None if ab is None else ab["interval_low"],
                "interval_high": None if ab is None else ab["interval_high"],
                "interval_level": None if ab is None else ab["interval_level"],
                "p_adjusted": None if ab is None else ab["p_adjusted"],
                "decision": None if ab is None else ab["decision"],
                "severity": None if ab is None else _label(ab["severity"]),
                "reason_code": None if ab is None else _label(ab["reason_code"]),
                # a conversation gold set is compared by conversation: its n is the conversations', while
                # the mean beside it is over turns (evalops.conversations.pipeline.unit_note)
                "conversations": None if ab is None or not _by_conversation(ab.get("record")) else ab["n"],
            })
    return tables


def _by_conversation(record: Any) -> bool:
    notes = record.get("notes") if isinstance(record, dict) else None
    return any(str(note).startswith("unit: conversation") for note in notes or ())


def _label(value: Any) -> str | None:
    """A text column of a warehouse frame: None where it is empty (pandas gives NaN)."""
    return value if isinstance(value, str) and value else None


def _result_table(dataset: str, rows: list[dict[str, Any]]) -> Any:
    """One gold set's rows as a terminal table: a version's name on its first row only."""
    from rich.table import Table

    from evalops.reports.tables import decision_interval, decision_text

    table = Table(title=f"gold set {dataset}", title_justify="left", show_edge=False)
    for header in ("version", "measure", "mean", "delta", "decision interval", "adj. p", "decision"):
        table.add_column(header, justify="right" if header in ("mean", "delta", "adj. p") else "left")
    previous = None
    for row in rows:
        name = f"{row['retriever']} {row['version']}"
        if row["decision"] is not None:
            decision = decision_text(row["decision"], row["severity"], row["reason_code"])
            decision += f" vs {row['baseline_version']}"
            if row.get("conversations") is not None:
                decision += f", by conversation (n {row['conversations']}; the mean is over turns)"
        elif row["status"] == "failed":
            decision = "failed: not scored"
        elif row["role"] == "baseline":
            decision = "baseline"
        elif row["role"] == "deployed":
            decision = "no baseline yet"
        else:
            decision = "not compared"
        table.add_row("" if name == previous else name, row["measure"], numfmt.number(row["mean"]),
                      numfmt.number(row["delta"], signed=True),
                      decision_interval(row["interval_low"], row["interval_high"], row["interval_level"]),
                      numfmt.p_value(row["p_adjusted"]), decision)
        previous = name
    return table


def finish_run(cfg: Any, run: Any, result: dict[str, Any], incomplete: Exception | None, *,
               fail_on_regression: bool, junit_xml: Path | None, fmt: str, output_path: Path | None,
               gate_summary: bool, fail_on: frozenset[str] | None = None, quiet: bool = False,
               summary_md: Path | None = None, pull_request: Any = None) -> None:
    """Print (or write) the run's result, write the JUnit XML (and ``summary_md``, the short markdown of
    :func:`summary_markdown`), and exit with the gate's code. ``pull_request``: the run's
    :class:`evalops.pipeline.pullrequest.PullRequestRun`, said in the output (``cfg`` is then its scratch
    settings).

    The table format prints, per gold set, each version's measures with the delta against its baseline,
    the decision interval and the decision with its reason code; then the alerts, the gate's summary and
    the report's path. ``quiet``: nothing on stdout (the exit code, the files and stderr's errors remain).

    ``fail_on``: the gate's policy (``evalops.failing``; default the project's ``alerting.fail_on``, which
    its alerts were raised under). Without
    ``fail_on_regression`` (``evalops run``) only the kinds that never passed there fail it: a failed version
    (exit 5), as it always has for ``evalops run``.
    """
    from evalops.gate import GateCase, cases_for_run, gate_exit_code

    policy = frozenset(cfg.alerting.fail_on) if fail_on is None else fail_on
    if not fail_on_regression:
        policy = policy & {"failed"}
    cases = cases_for_run(cfg, run, result, fail_on=policy)
    code = gate_exit_code(cases)
    judged = result.get("judged") or {}
    if judged.get("status") == "failed":  # the judge step failed: exit 8, and one JUnit error case
        code = most_severe(code, ExitCode.JUDGE_FAILED)
        cases = [*cases, GateCase(retriever="evalops", version="", measure="judge", outcome="error",
                                  decision="judge_failed", kind="judge_failed",
                                  message=f"judge step failed: {judged.get('cause')}")]
    undelivered = [a for a in result["alerts"] if not a.get("delivered", True)]
    if undelivered:  # stored, retried by every later run and by `evalops alerts retry`
        code = most_severe(code, ExitCode.UNDELIVERED_ALERTS)
    if junit_xml is not None:
        _write_junit(junit_xml, cases, run, result, pull_request)
    alerts = result["alerts"]
    lines = ([] if gate_summary else [
        f"ALERT  {a['title']}" + (f"  (not sent again: {a['suppressed']})" if a.get("suppressed") else
                                  "" if a.get("delivered", True) else f"  ({a.get('delivery_status', 'undelivered')})")
        for a in alerts] + ([] if alerts else ["no alerts"]))
    if gate_summary or fail_on_regression or junit_xml is not None:
        lines += _summary_lines(cases, code)
    tables = result_tables(cfg, result)
    lines += _baseline_hints(tables, pull_request)
    if incomplete is not None:
        lines.append(f"error: {incomplete}")
    pr_note = None
    if pull_request is not None:
        pr_note = (f"pull-request run {pull_request.run_id}: baselines read from {pull_request.source}, nothing "
                   f"written there and no alert sent; its warehouse and report are in {pull_request.folder}")
        lines.append(pr_note)
    lines.append(f"report: {result['report']}")
    if junit_xml is not None:
        lines.append(f"JUnit XML: {junit_xml}")
    if summary_md is not None:
        _write_summary_md(summary_md, summary_markdown(
            cases, code, title=f"evalops {'gate' if gate_summary else 'run'} {run.day}",
            notes=[*([pr_note] if pr_note else []), *([f"error: {incomplete}"] if incomplete is not None else []),
                   f"report: {result['report']}"]))
        lines.append(f"summary: {summary_md}")
    data = _run_data(result, tables, code, cases, pull_request)

    def draw(console: Any) -> None:
        for dataset, rows in tables.items():
            console.print(_result_table(dataset, rows))
            console.print("")
        for line in lines:
            console.print(line, highlight=False, markup=False, soft_wrap=True)

    if not quiet or output_path is not None:
        emit(Output(data=data, columns=CASE_COLUMNS, rows=[c.to_dict() for c in cases], notes=lines,
                    title=f"evalops {run.label}", draw=draw), fmt, output_path)
    if incomplete is not None and (fmt != "table" or quiet):
        click.echo(f"error: {incomplete}", err=True)
    if code != ExitCode.SUCCESS:
        sys.exit(code)


def _run_data(result: dict[str, Any], tables: dict[str, list[dict[str, Any]]], code: ExitCode, cases: Any,
              pull_request: Any) -> dict[str, Any]:
    """The run's result as data (``--format json``): report, alerts, versions, result tables, the gate."""
    data = {
        "report": result["report"],
        "alerts": result["alerts"],
        "versions": [{k: s[k] for k in ("retriever", "version", "dataset", "run_id")} for s in result["versions"]],
        "results": tables,
        "gate": {"exit_code": int(code), "cases": [c.to_dict() for c in cases]},
    }
    if pull_request is not None:
        data["pull_request"] = {"run_id": pull_request.run_id, "folder": str(pull_request.folder),
                                "source": pull_request.source, "copied": pull_request.copied}
    return data


def _baseline_hints(tables: dict[str, list[dict[str, Any]]], pull_request: Any) -> list[str]:
    """A line per retriever whose deployed version has no baseline yet: how to promote one (a pull-request
    run's are not in the shared warehouse: nothing there to promote)."""
    lines = []
    unpromoted = {(r["retriever"], r["version"]) for rows in tables.values() for r in rows
                  if r["role"] == "deployed" and r["status"] != "failed"}
    for retriever in sorted({name for name, _ in unpromoted}):
        version = min(v for name, v in unpromoted if name == retriever)
        if pull_request is not None:  # its runs are not in the shared warehouse: nothing here to promote
            lines.append(f"{retriever} has no baseline in the shared warehouse yet: the main branch's run promotes "
                         "one, and later pull requests compare with it")
            continue
        lines.append(f"{retriever} has no baseline yet: promote one (`evalops promote {retriever} {version}{given_location()} --reason "
                     "'first baseline'`) and later runs compare every version of it with that one")
    return lines


def _write_junit(junit_xml: Path, cases: Any, run: Any, result: dict[str, Any], pull_request: Any) -> None:
    from evalops.junit import write_junit_xml

    properties = {"day": run.day, "report": result["report"]}
    if pull_request is not None:
        properties["pull_request"] = pull_request.run_id
    write_junit_xml(junit_xml, cases, suite=f"evalops {run.label}", properties=properties, timestamp=utc.now())


def _write_input_error(junit_xml: Path | None, exc: Exception, summary_md: Path | None = None) -> None:
    """A run stopped by its inputs is one JUnit error case (and a summary that says why), so CI shows why
    (the exit code is still 3)."""
    if junit_xml is None and summary_md is None:
        return
    from evalops.gate import GateCase
    from evalops.junit import write_junit_xml

    message = exc.summary if hasattr(exc, "summary") else str(exc)
    case = GateCase(retriever="evalops", version="", measure="inputs", outcome="error", decision="bad_input",
                    message=message.splitlines()[0] if message else type(exc).__name__, details=message)
    if junit_xml is not None:
        write_junit_xml(junit_xml, [case], suite="evalops inputs", timestamp=utc.now())
    if summary_md is not None:
        _write_summary_md(summary_md, summary_markdown([case], ExitCode.BAD_INPUT, title="evalops gate",
                                                       notes=[f"stopped before anything was scored: {case.message}"]))


def _run_id(ctx: click.Context, param: click.Parameter, value: str | None) -> str | None:
    from evalops.pipeline.pullrequest import check_run_id

    if value is None:
        return None
    try:
        return check_run_id(value)
    except InputError as exc:
        raise click.BadParameter(str(exc).removeprefix("--run-id "), ctx, param) from None


JUNIT_HELP = "Write one JUnit XML test case per (version, measure) to this file, for CI."
QUIET_OPTION = click.option("-q", "--quiet", is_flag=True,
                            help="Print nothing on stdout (for scripts: the exit code says what happened; errors "
                                 "still go to stderr; -o still writes the output) and no progress on stderr.")
PULL_REQUEST_OPTION = click.option(
    "--pull-request", "pull_request", is_flag=True,
    help="Pull-request mode: read the baselines (and their scores) from the shared warehouse and write nothing "
         "there: the run, its alerts (sent to no notifier) and its report go to .evalops/pr/RUN_ID/.")
RUN_ID_OPTION = click.option(
    "--run-id", "run_id", default=None, callback=_run_id, metavar="ID",
    help="The run's id (its run key; default cli__DATE). With --pull-request its default is the CI's: "
         "GitHub Actions' GITHUB_RUN_ID (with the pull request's number), GitLab's CI_PIPELINE_ID (with "
         "CI_MERGE_REQUEST_IID), else a fresh one.")
SUMMARY_MD_OPTION = click.option(
    "--summary-md", "summary_md", type=click.Path(dir_okay=False, path_type=Path), default=None,
    help="Write a short markdown summary for a pull-request comment: the verdict, then one line per failing "
         "or changed comparison.")


@click.command()
@click.option("--date", "day", default=None, type=DAY, help="The day to evaluate, YYYY-MM-DD (default: today, UTC).")
@PROJECT_OPTION
@CONFIG_OPTION
@click.option("--fail-on-regression/--no-fail-on-regression", default=True, show_default=True,
              help="Apply the --fail-on policy (--no-fail-on-regression: only a failed version fails).")
@click.option("--fail-on", "fail_on", default=None,
              help="What fails the gate, comma-separated: regression, floor, failed, partial, missing, "
                   "unjudged (a drop the unjudged documents could undo), inconclusive (or none). "
                   "[default: the project's alerting.fail_on, what its alerts are raised on: regression, "
                   "unjudged, partial, floor, failed, missing]")
@click.option("--junit-xml", type=click.Path(dir_okay=False, path_type=Path), default=Path("evalops-junit.xml"),
              show_default=True, help=JUNIT_HELP)
@PULL_REQUEST_OPTION
@RUN_ID_OPTION
@SUMMARY_MD_OPTION
@QUIET_OPTION
@ALLOW_LOCAL_OPTION
@output_options()
@reports_errors
def gate(day: dt.date | None, project: Path | None, config_file: str | None, fail_on_regression: bool, fail_on: str,
         junit_xml: Path, pull_request: bool, run_id: str | None, summary_md: Path | None, quiet: bool,
         allow_local: bool, fmt: str, output_path: Path | None) -> None:
    """Run one evaluation (as `evalops run`) as a CI check: exit 0 when it passes, 4 on a regression alert
    or a floor breach, 5 when a version could not be scored or was scored partially, 7 when a comparison
    cannot be found, 8 when the judge step failed, 3 on bad input; write JUnit XML and a short summary.

    A regression fails the gate when it raises an alert (an alert measure, on the gold set); inconclusive
    comparisons are reported with their reason code (skipped in the JUnit XML) and pass unless --fail-on
    names inconclusive.

    --pull-request compares with the shared warehouse's baselines and writes nothing there (no run, score,
    alert or baseline row; no alert sent): for a pull request's CI job, with a read-only warehouse URL.
    """
    from evalops.failing import parse_fail_on

    policy = None if fail_on is None else parse_fail_on(fail_on)

    try:
        cfg = project_config(project, config_file, allow_local=allow_local)
        cfg, run, result, incomplete, prepared = gated_run(cfg, day, run_id=run_id, pull_request=pull_request,
                                                           quiet=quiet, title="evalops gate")
    except (InputError, ValidationError) as exc:
        _write_input_error(junit_xml, exc, summary_md)
        raise
    finish_run(cfg, run, result, incomplete, fail_on_regression=fail_on_regression, junit_xml=junit_xml,
               fmt=fmt, output_path=output_path, gate_summary=True, fail_on=policy, quiet=quiet,
               summary_md=summary_md, pull_request=prepared)
