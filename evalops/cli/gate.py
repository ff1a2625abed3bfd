"""``evalops gate``: one evaluation run as a CI check (and the ``--fail-on-regression`` / ``--junit-xml``
options of ``evalops run``, which share this code).

The verdict is :mod:`evalops.gate`'s: a regression alert fails the gate (exit 4), a version that could not
be scored errors it (exit 5), bad input stops it before anything is scored (exit 3); see
:mod:`evalops.exitcodes`.
"""

from __future__ import annotations

import datetime as dt
import sys
from pathlib import Path
from typing import Any

import click

from evalops.cli._common import DAY, Output, emit, output_options, reports_errors, stderr_is_terminal
from evalops.cli._project import CONFIG_OPTION, PROJECT_OPTION
from evalops.errors import InputError

__all__ = ["gate", "gated_run", "finish_run"]

CASE_COLUMNS = ("retriever", "version", "measure", "outcome", "decision", "delta", "delta_ci_low",
                "delta_ci_high", "p_adjusted", "baseline_version", "message")


def _say(message: str) -> None:
    if stderr_is_terminal():
        click.echo(f"  {message} ...", err=True)


def gated_run(cfg: Any, day: dt.date | None) -> tuple[Any, dict[str, Any], Exception | None]:
    """Run the pipeline for ``day``. Returns the run context, the result, and the ``IncompleteRunError`` a
    failed version raised (after the report), if any; any other error propagates."""
    from evalops.pipeline import IncompleteRunError, RunContext, run_local

    run = RunContext.for_day(day or dt.datetime.now(dt.timezone.utc).date())
    try:
        return run, run_local(cfg, run, progress=_say), None
    except IncompleteRunError as exc:
        if exc.result is None:
            raise
        return run, exc.result, exc


def _summary_lines(cases: list[Any], code: int) -> list[str]:
    from evalops.exitcodes import ExitCode

    counts = {o: sum(c.outcome == o for c in cases) for o in ("failure", "error", "skipped", "passed")}
    verdict = "PASSED" if code == ExitCode.SUCCESS else f"FAILED (exit {int(code)}, {ExitCode(code).name.lower()})"
    regressions = f"{counts['failure']} regression{'' if counts['failure'] == 1 else 's'}"
    lines = [f"gate {verdict}: {len(cases)} checks, {regressions}, {counts['error']} failed, "
             f"{counts['skipped']} inconclusive, {counts['passed']} passed"]
    for case in cases:
        if case.outcome != "passed":
            lines.append(f"  {case.outcome.upper():<8} {case.retriever} {case.version}: {case.message}")
    return lines


def finish_run(cfg: Any, run: Any, result: dict[str, Any], incomplete: Exception | None, *,
               fail_on_regression: bool, junit_xml: Path | None, fmt: str, output_path: Path | None,
               gate_summary: bool) -> None:
    """Print (or write) the run's result, write the JUnit XML, and exit with the gate's code.

    Without ``fail_on_regression`` a regression does not change the exit code; a failed version always does
    (exit 5), as it always has for ``evalops run``.
    """
    from evalops.exitcodes import ExitCode
    from evalops.gate import cases_for_run, gate_exit_code

    from evalops.exitcodes import most_severe

    cases = cases_for_run(cfg, run, result)
    code = gate_exit_code(cases)
    if not fail_on_regression and code == ExitCode.REGRESSION:
        code = ExitCode.SUCCESS
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
        f"ALERT  {a['title']}" + ("" if a.get("delivered", True) else f"  ({a.get('delivery_status', 'undelivered')})")
        for a in alerts] + ([] if alerts else ["no alerts"]))
    if gate_summary or fail_on_regression or junit_xml is not None:
        lines += _summary_lines(cases, code)
    if incomplete is not None:
        lines.append(f"error: {incomplete}")
    lines.append(f"report: {result['report']}")
    if junit_xml is not None:
        lines.append(f"JUnit XML: {junit_xml}")
    data = {
        "report": result["report"],
        "alerts": alerts,
        "versions": [{k: s[k] for k in ("retriever", "version", "dataset", "run_id")} for s in result["versions"]],
        "gate": {"exit_code": int(code), "cases": [c.to_dict() for c in cases]},
    }

    def draw(console: Any) -> None:
        for line in lines:
            console.print(line, highlight=False, markup=False, soft_wrap=True)

    emit(Output(data=data, columns=CASE_COLUMNS, rows=[c.to_dict() for c in cases], notes=lines,
                title=f"evalops {run.label}", draw=draw), fmt, output_path)
    if incomplete is not None and fmt != "table":
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


@click.command()
@click.option("--date", "day", default=None, type=DAY, help="The day to evaluate, YYYY-MM-DD (default: today, UTC).")
@PROJECT_OPTION
@CONFIG_OPTION
@click.option("--fail-on-regression/--no-fail-on-regression", default=True, show_default=True,
              help="Exit 4 when the run raised a regression alert.")
@click.option("--junit-xml", type=click.Path(dir_okay=False, path_type=Path), default=Path("evalops-junit.xml"),
              show_default=True, help=JUNIT_HELP)
@output_options()
@reports_errors
def gate(day: dt.date | None, project: Path | None, config_file: str | None, fail_on_regression: bool, junit_xml: Path,
         fmt: str, output_path: Path | None) -> None:
    """Run one evaluation (as `evalops run`) as a CI check: exit 0 when it passes, 4 on a regression alert,
    5 when a version could not be scored, 3 on bad input; write JUnit XML and a short summary.

    A regression fails the gate only when it raises an alert (an alert measure, on the gold set);
    inconclusive comparisons are reported (skipped in the JUnit XML) and pass.
    """
    from evalops.cli._project import project_config
    from evalops.errors import InputError, ValidationError

    try:
        cfg = project_config(project, config_file)
        run, result, incomplete = gated_run(cfg, day)
    except (InputError, ValidationError) as exc:
        _write_input_error(junit_xml, exc)
        raise
    finish_run(cfg, run, result, incomplete, fail_on_regression=fail_on_regression, junit_xml=junit_xml,
               fmt=fmt, output_path=output_path, gate_summary=True)
