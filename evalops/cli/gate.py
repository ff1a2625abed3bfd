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

from evalops import numfmt
from evalops.cli._common import (
    DAY,
    Output,
    emit,
    frozen_at_each_step,
    measure_labels,
    output_options,
    reports_errors,
    stderr_is_terminal,
)
from evalops.cli._project import ALLOW_LOCAL_OPTION, CONFIG_OPTION, PROJECT_OPTION, given_location, project_config
from evalops.errors import InputError, ValidationError
from evalops.exitcodes import ExitCode, most_severe
from evalops.pipeline.registry import canonical_measures

__all__ = ["gate", "gated_run", "finish_run", "result_tables"]

# csv and markdown: one interval per comparison, the decision interval (JSON carries every field)
CASE_COLUMNS = ("retriever", "version", "measure", "outcome", "kind", "decision", "delta", "interval_low",
                "interval_high", "interval_level", "p_adjusted", "baseline_version", "message")


def _say(message: str) -> None:
    if stderr_is_terminal():
        click.echo(f"  {message} ...", err=True)


def _say_always(message: str) -> None:
    """The judge's lines (its preflight failure, its progress while requesting labels): on stderr even when
    it is not a terminal, so a CI log shows a judge step that takes minutes or cannot start."""
    click.echo(f"  {message}", err=True)


def gated_run(cfg: Any, day: dt.date | None, clock: Any = None) -> tuple[Any, dict[str, Any], Exception | None]:
    """Run the pipeline for ``day``. Returns the run context, the result, and the ``IncompleteRunError`` a
    failed version raised (after the report), if any; any other error propagates. ``clock``: a
    :class:`evalops.cli._timings.StageClock` that marks each step."""
    from evalops.pipeline import IncompleteRunError, RunContext, run_local

    run = RunContext.for_day(day or dt.datetime.now(dt.timezone.utc).date())
    say = frozen_at_each_step(clock.wrap(_say) if clock is not None else _say)
    try:
        return run, run_local(cfg, run, progress=say, judge_progress=_say_always), None
    except IncompleteRunError as exc:
        if exc.result is None:
            raise
        return run, exc.result, exc


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
            })
    return tables


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
               gate_summary: bool, fail_on: frozenset[str] | None = None, quiet: bool = False) -> None:
    """Print (or write) the run's result, write the JUnit XML, and exit with the gate's code.

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
        from evalops.junit import write_junit_xml

        write_junit_xml(junit_xml, cases, suite=f"evalops {run.label}",
                        properties={"day": run.day, "report": result["report"]},
                        timestamp=dt.datetime.now(dt.timezone.utc))
    alerts = result["alerts"]
    lines = ([] if gate_summary else [
        f"ALERT  {a['title']}" + (f"  (not sent again: {a['suppressed']})" if a.get("suppressed") else
                                  "" if a.get("delivered", True) else f"  ({a.get('delivery_status', 'undelivered')})")
        for a in alerts] + ([] if alerts else ["no alerts"]))
    if gate_summary or fail_on_regression or junit_xml is not None:
        lines += _summary_lines(cases, code)
    tables = result_tables(cfg, result)
    unpromoted = {(r["retriever"], r["version"]) for rows in tables.values() for r in rows
                  if r["role"] == "deployed" and r["status"] != "failed"}
    for retriever in sorted({name for name, _ in unpromoted}):
        version = min(v for name, v in unpromoted if name == retriever)
        lines.append(f"{retriever} has no baseline yet: promote one (`evalops promote {retriever} {version}{given_location()} --reason "
                     "'first baseline'`) and later runs compare every version of it with that one")
    if incomplete is not None:
        lines.append(f"error: {incomplete}")
    lines.append(f"report: {result['report']}")
    if junit_xml is not None:
        lines.append(f"JUnit XML: {junit_xml}")
    data = {
        "report": result["report"],
        "alerts": alerts,
        "versions": [{k: s[k] for k in ("retriever", "version", "dataset", "run_id")} for s in result["versions"]],
        "results": tables,
        "gate": {"exit_code": int(code), "cases": [c.to_dict() for c in cases]},
    }

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


def _write_input_error(junit_xml: Path | None, exc: Exception) -> None:
    """A run stopped by its inputs is one JUnit error case, so CI shows why (the exit code is still 3)."""
    if junit_xml is None:
        return
    from evalops.gate import GateCase
    from evalops.junit import write_junit_xml

    message = exc.summary if hasattr(exc, "summary") else str(exc)
    case = GateCase(retriever="evalops", version="", measure="inputs", outcome="error", decision="bad_input",
                    message=message.splitlines()[0] if message else type(exc).__name__, details=message)
    write_junit_xml(junit_xml, [case], suite="evalops inputs", timestamp=dt.datetime.now(dt.timezone.utc))


JUNIT_HELP = "Write one JUnit XML test case per (version, measure) to this file, for CI."
QUIET_OPTION = click.option("-q", "--quiet", is_flag=True,
                            help="Print nothing on stdout (for scripts: the exit code says what happened; errors "
                                 "still go to stderr; -o still writes the output).")


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
@QUIET_OPTION
@ALLOW_LOCAL_OPTION
@output_options()
@reports_errors
def gate(day: dt.date | None, project: Path | None, config_file: str | None, fail_on_regression: bool, fail_on: str,
         junit_xml: Path, quiet: bool, allow_local: bool, fmt: str, output_path: Path | None) -> None:
    """Run one evaluation (as `evalops run`) as a CI check: exit 0 when it passes, 4 on a regression alert
    or a floor breach, 5 when a version could not be scored or was scored partially, 7 when a comparison
    cannot be found, 8 when the judge step failed, 3 on bad input; write JUnit XML and a short summary.

    A regression fails the gate when it raises an alert (an alert measure, on the gold set); inconclusive
    comparisons are reported with their reason code (skipped in the JUnit XML) and pass unless --fail-on
    names inconclusive.
    """
    from evalops.failing import parse_fail_on

    policy = None if fail_on is None else parse_fail_on(fail_on)

    try:
        cfg = project_config(project, config_file, allow_local=allow_local)
        run, result, incomplete = gated_run(cfg, day)
    except (InputError, ValidationError) as exc:
        _write_input_error(junit_xml, exc)
        raise
    finish_run(cfg, run, result, incomplete, fail_on_regression=fail_on_regression, junit_xml=junit_xml,
               fmt=fmt, output_path=output_path, gate_summary=True, fail_on=policy, quiet=quiet)
