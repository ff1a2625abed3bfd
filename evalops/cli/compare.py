"""``evalops compare`` (paired A/B test of run files) and ``evalops power`` (power and sample size)."""

from __future__ import annotations

import sys
from collections.abc import Sequence
from typing import Any

import click

from evalops.cli._common import MEASURE, Output, emit, output_options, progress, reports_errors
from evalops.errors import InputError
from evalops.exitcodes import ExitCode
from evalops.util import numfmt

__all__ = ["compare", "compare_run_files", "power"]

QUERY_SELECTIONS = ("all", "answered-by-both")
OUTPUT_FORMAT = output_options()
COMPARISON_COLUMNS = ("measure", "baseline", "candidate", "n", "baseline_mean", "candidate_mean", "delta",
                      "delta_ci_low", "delta_ci_high", "relative_change", "test", "p_value", "p_adjusted",
                      "effect_size_dz", "wins", "ties", "losses", "decision", "severity", "criterion",
                      "reason_code", "kind", "margin", "interval_low", "interval_high", "interval_level",
                      "family_size")
# --format markdown: narrow enough for a pull-request comment (csv and json keep every field)
MARKDOWN_COLUMNS = ("measure", "candidate", "baseline → candidate", "delta [decision interval]",
                    "decision (severity, reason)", "kind")
ALTERNATIVE = click.option(
    "--alternative", type=click.Choice(["two-sided", "less", "greater"]), default="two-sided", show_default=True,
    help="two-sided, less (only look for drops) or greater (only look for gains).",
)
ALPHA = click.option("--alpha", type=float, default=0.05, show_default=True, help="Significance level.")


@click.command("compare")
@click.argument("qrels", metavar="QRELS")
@click.argument("baseline", metavar="BASELINE_RUN")
@click.argument("candidates", metavar="CANDIDATE_RUN...", nargs=-1, required=True)
@click.option("-m", "--measure", "measures", multiple=True, required=True, type=MEASURE,
              help="A measure in ir_measures syntax (nDCG@10, P@5, RR, AP, ...). Repeat for more.")
@click.option("--test", type=click.Choice(["t", "wilcoxon", "randomization"]), default="t", show_default=True,
              help="Paired test: Student t, Wilcoxon signed-rank, or randomization (sign-flip).")
@ALPHA
@click.option("--min-effect", type=float, default=None, hidden=True, help="Removed: use --min-delta.")
@click.option("--min-delta", type=float, default=None,
              help="One margin in the measure's own units (e.g. 0.01 nDCG) the rule judges materiality by "
                   "[default: each measure's own, e.g. nDCG 0.02, P 0.01, Success 0.04: evalops.stats.margins].")
@click.option("--margin", "margins", multiple=True, metavar="MEASURE=X",
              help="A margin for one measure (overrides --min-delta for it). Repeat for more.")
@click.option("--alert-on", type=click.Choice(["critical", "warning", "either"]), default="warning",
              show_default=True,
              help="Which regressions count for --fail-on-regression: critical (the effect-size route: a drop "
                   "shown past the margin) or warning (the p-value route: a significant drop, critical "
                   "included). either was removed and is refused with what to use instead.")
@click.option("--interval", type=click.Choice(["robust", "t", "bootstrap"]), default="robust", show_default=True,
              help="The decision interval of the mean delta: robust (skew-corrected t where Cochran's rule "
                   "trusts it, the betting interval for bounded means where it does not), Student t, or the "
                   "bootstrap (--ci).")
@click.option("--min-coverage", type=float, default=0.9, show_default=True,
              help="Share of the judged queries each run must answer; below it a comparison is inconclusive.")
@click.option("--max-judged-coverage-drop", type=float, default=0.1, show_default=True,
              help="How much lower (absolute Judged@k at the measure's cutoff) a candidate's judged coverage may "
                   "be than the baseline's before a regression is inconclusive (unjudged_documents).")
@click.option("--query-drop", type=float, default=0.3, show_default=True,
              help="A query whose score falls by this much or more counts as lost, one that rises as much as "
                   "gained; with --broken-queries their exact sign test is the rule's second question.")
@click.option("--broken-queries/--no-broken-queries", default=True, show_default=True,
              help="Call a candidate that loses significantly more queries by --query-drop than it gains a "
                   "regression (warning, criterion broken_queries), whatever its mean.")
@click.option("--alert-on-query-drops", is_flag=True, hidden=True,
              help="Removed: refused with what to use instead.")
@click.option("--correction", type=click.Choice(["holm", "bh"]), default="holm", show_default=True,
              help="Multiple-comparison correction across every measure x candidate: Holm or Benjamini-Hochberg.")
@ALTERNATIVE
@click.option("--zero-method", type=click.Choice(["wilcox", "pratt", "zsplit"]), default="wilcox",
              show_default=True, help="How the Wilcoxon test treats queries with equal scores.")
@click.option("--ci", "ci_method", type=click.Choice(["bca", "percentile"]), default="bca", show_default=True,
              help="Bootstrap interval of the mean delta.")
@click.option("--resamples", type=int, default=10_000, show_default=True,
              help="Bootstrap resamples and Monte Carlo sign vectors.")
@click.option("--seed", type=int, default=0, show_default=True, help="Seed of the bootstrap and randomization.")
@click.option("--queries", type=click.Choice(QUERY_SELECTIONS), default="all", show_default=True,
              help="all: every judged query (one a run did not answer scores 0, as trec_eval -c); "
                   "answered-by-both: only the judged queries every run answered.")
@click.option("--no-answer", type=click.Choice(["exclude", "zero"]), default="exclude", show_default=True,
              help="Judged queries without a relevant document: leave them out (exclude) or score them 0.")
@click.option("--fail-on", "fail_on", default=None, metavar="KINDS",
              help="Exit non-zero when a comparison is of one of these kinds, as `evalops gate` does for the same "
                   "comparison (comma-separated; evalops.failing): regression (exit 4), unjudged (a drop the "
                   "unjudged documents could undo, 4), partial (a drop on a run that answered too few judged "
                   "queries, 5), inconclusive (4).")
@click.option("--fail-on-regression", is_flag=True,
              help="The gate's default policy for CI: --fail-on regression,unjudged,partial (a drop is never "
                   "passed because evalops could not confirm it).")
@OUTPUT_FORMAT
@reports_errors
def compare(qrels: str, baseline: str, candidates: tuple[str, ...], measures: tuple[str, ...], test: str,
            alpha: float, min_effect: float | None, min_delta: float | None, margins: tuple[str, ...],
            alert_on: str, interval: str, min_coverage: float, max_judged_coverage_drop: float, query_drop: float,
            broken_queries: bool, alert_on_query_drops: bool,
            correction: str, alternative: str, zero_method: str, ci_method: str, resamples: int, seed: int,
            queries: str, no_answer: str, fail_on: str | None, fail_on_regression: bool, fmt: str,
            output_path: Any) -> None:
    """Paired comparison of CANDIDATE_RUN(s) with BASELINE_RUN on the queries of QRELS.

    Every measure of every candidate is tested on the same queries, the p-values are corrected across all
    of them, and each gets a decision: regression, improvement, no_change or inconclusive, read from the
    family-adjusted interval of the mean delta against the margin (--min-delta, in the measure's units): a
    critical regression when the whole interval lies below -margin, a warning when it lies below 0 but
    reaches past -margin, no_change when it lies inside +-margin.
    """
    from evalops.stats import Policy

    per_measure = {}
    for item in margins:
        name, sep, value = item.rpartition("=")
        try:
            per_measure[name] = float(value) if sep and name else None
        except ValueError:
            per_measure[name] = None
        if per_measure[name] is None:
            raise InputError(f"--margin {item!r}: expected MEASURE=NUMBER, e.g. nDCG@10=0.01")
    policy = Policy(alpha=alpha, alternative=alternative,
                    min_delta=min_delta, margins=per_measure,
                    alert_on=alert_on, interval=interval, min_coverage=min_coverage,
                    max_judged_coverage_drop=max_judged_coverage_drop, query_drop=query_drop,
                    broken_queries=broken_queries,
                    alert_on_query_drops=alert_on_query_drops, correction=correction, test=test,
                    zero_method=zero_method, ci_method=ci_method, n_resamples=resamples, seed=seed,
                    min_effect=min_effect)
    from evalops.failing import DEFAULT_FAIL_ON, comparison_kind, exit_code, parse_fail_on

    failing = parse_fail_on(fail_on) if fail_on is not None else DEFAULT_FAIL_ON if fail_on_regression else frozenset()
    report = compare_run_files(qrels, baseline, candidates, measures, policy, queries, no_answer)
    kinds = [comparison_kind(c) for c in report["comparisons"]]  # every measure of `compare` alerts
    for c, kind in zip(report["comparisons"], kinds):
        c["kind"] = kind
    report["summary"]["failing"] = sum(1 for k in kinds if k is not None and k in failing)
    report["fail_on"] = sorted(failing)
    notes = [f"{c['measure']} ({c['candidate']}): {c['decision']}"
             + (f" [fails: {c['kind']}]" if c["kind"] in failing else "") + f": {c['reasons'][-1]}"
             for c in report["comparisons"]] + _fallback_notes(report)
    rows = [{**c, **_markdown_row(c)} for c in report["comparisons"]] if fmt == "markdown" else report["comparisons"]
    emit(Output(data=report, columns=COMPARISON_COLUMNS, rows=rows, notes=notes, cell=_cell,
                table_columns=MARKDOWN_COLUMNS, draw=lambda console: _print_table(console, report)), fmt, output_path)
    code = exit_code(kinds, failing)
    if code != ExitCode.SUCCESS:
        sys.exit(code)


def run_labels(paths: Sequence[str], tags: Sequence[str | None]) -> list[str]:
    """How rows, records and alerts name each run: its file name (the path as given when two share a file
    name), with its run tag in parentheses when the runs' tags differ. Fifteen runs all tagged ``STANDARD``
    are told apart by file; two files with distinct tags say both."""
    from pathlib import Path

    names = [Path(p).name for p in paths]
    if len(set(names)) < len(names):
        names = [str(p) for p in paths]
    known = [t for t in tags if t]
    if len(set(known)) > 1:
        names = [f"{n} ({t})" if t and t != n else n for n, t in zip(names, tags)]
    return names


_INTERVAL_WORDS = {"robust": "robust intervals (skew-corrected t, or betting where the deltas are too skewed)",
                   "t": "t-intervals", "bootstrap": "bootstrap intervals"}


def compare_run_files(qrels_path: str, baseline_path: str, candidate_paths: tuple[str, ...],
                      measures: tuple[str, ...], policy: Any, queries: str = "all",
                      no_answer: str = "exclude") -> dict[str, Any]:
    """Read, score and compare run files; the JSON report of ``evalops compare``."""
    from contextlib import contextmanager

    from evalops.abtest import compare_runs
    from evalops.formats import read_qrels
    from evalops.formats.trec import read_run_table
    from evalops.metrics import Policy as MetricsPolicy
    from evalops.metrics import parse_measures

    parsed = parse_measures(measures)  # a typo fails before any file is read
    metrics_policy = MetricsPolicy(no_answer=no_answer)  # type: ignore[arg-type]
    gold = read_qrels(qrels_path)
    # columns (codes and a doc-id dictionary, scores at trec_eval's float32 precision), as evaluate reads
    # them: no Python string per row
    runs = [read_run_table(path) for path in (baseline_path, *candidate_paths)]
    n_gold = len(gold.queries)
    judged = set(gold.queries.tolist())
    # a query absent from a run is unanswered; one present with any answer (even an empty one) is answered
    answered_by = [len(judged & set(run.query_ids.tolist())) for run in runs]
    if queries == "answered-by-both":
        answered = set(gold.queries.tolist())
        for run in runs:
            answered &= set(run.query_ids.tolist())
        gold = gold.restrict(sorted(answered))
    paths = (baseline_path, *candidate_paths)

    @contextmanager
    def scoring(i: int, run: Any) -> Any:
        with progress(f"scoring {run.name or paths[i]}", total=len(gold.queries)) as advance:
            done = 0

            def report(finished: int, total: int) -> None:
                nonlocal done
                advance(finished - done)
                done = finished

            yield report

    treatment = ("a judged query a run did not answer scores 0 (trec_eval -c)" if queries == "all" else
                 f"only the {len(gold.queries)} judged queries every run answered are compared")
    labels = run_labels(paths, [run.name for run in runs])
    # coverage against every judged query, whatever the selection: a run that answered 30 of 300 is not
    # decided on the 30 (partial_run), as compare_runs does by default over the judgments it is given
    from evalops.stats import Coverage

    decided = compare_runs(gold, runs[0], runs[1:], parsed, policy, metrics_policy=metrics_policy,
                           baseline_name=labels[0], candidate_names=labels[1:], progress=scoring,
                           coverages=[Coverage(n_gold, answered_by[0], answered, treatment)
                                      for answered in answered_by[1:]])
    summary = {label: sum(c.decision == label for c in decided)
               for label in ("regression", "improvement", "no_change", "inconclusive")}
    summary["alerts"] = sum(c.alert for c in decided)
    return {
        "qrels": qrels_path,
        "baseline": {"run": baseline_path, "name": runs[0].name, "label": labels[0]},
        "candidates": [{"run": path, "name": run.name, "label": label}
                       for run, path, label in zip(runs[1:], candidate_paths, labels[1:])],
        "queries": {
            "selection": queries,
            "judged": n_gold,
            "compared": len(gold.queries),
            "no_answer_policy": no_answer,
            "treatment": treatment,
            "answered": [
                {"run": path, "name": run.name, "label": label, "answered": answered, "judged": n_gold}
                for run, path, label, answered in zip(runs, (baseline_path, *candidate_paths), labels, answered_by)
            ],
        },
        "policy": policy.to_dict(),
        "comparisons": [c.to_dict() for c in decided],
        "summary": summary,
    }


_STYLE = {"regression": "bold red", "improvement": "bold green", "no_change": "", "inconclusive": "yellow"}


def _num(value: float | None, signed: bool = False) -> str:
    return numfmt.number(value, signed=signed, missing="-")


_SIGNED = {"delta", "delta_ci_low", "delta_ci_high", "interval_low", "interval_high"}


def _cell(column: str, value: Any) -> str:
    """A markdown cell as the terminal prints the number (:mod:`evalops.util.numfmt`, ``-`` when undefined)."""
    if column in _SIGNED or column in ("baseline_mean", "candidate_mean"):
        return _num(value, column in _SIGNED)
    if column in ("p_value", "p_adjusted"):
        return numfmt.p_value(value, "-")
    if column == "effect_size_dz":
        return numfmt.effect(value, "-")
    if column == "interval_level":
        return numfmt.level(value, "-")
    if column == "margin":
        return numfmt.margin(value, "-")
    if column == "relative_change":
        return "-" if numfmt.defined(value) is None else f"{value:+.1f}"
    return "" if value is None else str(value)


def _markdown_row(c: dict[str, Any]) -> dict[str, str]:
    """The composed cells of one comparison's markdown row (:data:`MARKDOWN_COLUMNS`), numbers as the terminal
    prints them."""
    from evalops.reports.tables import decision_interval

    interval = decision_interval(c["interval_low"], c["interval_high"], c["interval_level"], missing="")
    qualifiers = ", ".join(x for x in (c["severity"], c["reason_code"]) if x)
    return {
        "baseline → candidate": f"{_num(c['baseline_mean'])} → {_num(c['candidate_mean'])}",
        "delta [decision interval]": _num(c["delta"], True) + (f" [{interval}]" if interval else ""),
        "decision (severity, reason)": c["decision"] + (f" ({qualifiers})" if qualifiers else ""),
        "kind": c.get("kind") or "-",
    }


def _print_table(console: Any, report: dict[str, Any]) -> None:
    from rich.table import Table

    policy = report["policy"]
    many = len(report["candidates"]) > 1
    q = report["queries"]
    # before any number: how many judged queries each run answered, and how the rest were treated
    for side in q["answered"]:
        share = side["answered"] / side["judged"] if side["judged"] else 1.0
        flag = f"  (under the minimum coverage of {numfmt.percent(policy['min_coverage'])})" if share < policy["min_coverage"] else ""
        console.print(f"{side['label']}: answered {side['answered']} of {side['judged']} judged "
                      f"queries ({numfmt.percent(share)}){flag}", highlight=False, markup=False)
    console.print(f"unanswered queries: {q['treatment']}", highlight=False, markup=False)
    level = numfmt.percent(1 - policy["alpha"])
    names = ", ".join(c["label"] for c in report["candidates"])
    table = Table(title=f"{names}  vs  {report['baseline']['label']}", show_edge=False)
    # one interval per comparison: the decision interval (bootstrap under --interval bootstrap); the
    # bootstrap interval of the delta stays in --format json
    headers = ["measure", *(["candidate"] if many else []), "n", "baseline", "candidate", "delta",
               "rel %", "decision interval", "margin", "p adj", f"d_z [{level} CI]", "W/T/L", "decision"]
    for header in headers:
        table.add_column(header, justify="left" if header in ("measure", "candidate", "decision") else "right")
    for c in report["comparisons"]:
        dz = numfmt.effect(c["effect_size_dz"], "-")
        if c["effect_size_ci"] is not None:
            dz += f" [{numfmt.effect(c['effect_size_ci'][0])}, {numfmt.effect(c['effect_size_ci'][1])}]"
        interval = ("-" if c["interval_low"] is None else
                    f"[{_num(c['interval_low'], True)}, {_num(c['interval_high'], True)}] at {numfmt.level(c['interval_level'])}")
        decision = c["decision"] + (f" ({c['severity']})" if c["severity"] else "") + (
            f" ({c['reason_code']})" if c["reason_code"] else "")
        row = [
            c["measure"], *([c["candidate"]] if many else []), str(c["n"]), _num(c["baseline_mean"]),
            _num(c["candidate_mean"]), _num(c["delta"], True),
            "-" if c["relative_change"] is None else f"{c['relative_change']:+.1f}", interval,
            numfmt.margin(c["margin"]), numfmt.p_value(c["p_adjusted"], "-"), dz, f"{c['wins']}/{c['ties']}/{c['losses']}", decision,
        ]
        table.add_row(*row, style=_STYLE[c["decision"]])
    console.print(table)
    family = len(report["comparisons"])
    correction = ("Bonferroni intervals (Holm family)" if policy["correction"] == "holm"
                  else "Benjamini-Yekutieli level (BH family)")
    sided = ("two-sided: a drop is declared at alpha/2 per side" if policy["alternative"] == "two-sided"
             else f"one-sided ({policy['alternative']})")
    console.print(
        f"rule: {_INTERVAL_WORDS.get(policy['interval'], policy['interval'])} of the mean delta, {correction} over "
        f"{family} comparison"
        f"{'s' if family != 1 else ''}, alpha = {policy['alpha']:g}, {sided}; critical = whole interval past "
        f"-margin, warning = below 0 but reaching past -margin, no_change = inside +-margin; alert_on: "
        f"{policy['alert_on']}; reported test: {policy['test']}",
        style="dim", highlight=False, markup=False,
    )
    for note in _fallback_notes(report):
        console.print(note, style="dim", highlight=False, markup=False)
    # The table holds the numbers; below it, the rule's conclusion in words (every reason: --format json),
    # one line for all comparisons that reached the same conclusion.
    conclusions: dict[tuple[str, str], list[str]] = {}
    for c in report["comparisons"]:
        label = f"{c['measure']}" + (f" ({c['candidate']})" if many else "")
        conclusions.setdefault((c["decision"], c["reasons"][-1]), []).append(label)
    for (decision, reason), labels in conclusions.items():
        console.print(f"{', '.join(labels)}: {decision}: {reason}", highlight=False, markup=False)
    for c in report["comparisons"]:
        if c["decision"] == "regression" and c["worst_queries"]:
            worst = ", ".join(f"{w['query_id']} {w['baseline']:.3f}->{w['candidate']:.3f}" for w in c["worst_queries"])
            label = f"{c['measure']}" + (f" ({c['candidate']})" if many else "")
            console.print(f"{label}, largest drops: {worst}", style="dim", highlight=False, markup=False)


def _fallback_notes(report: dict) -> list[str]:
    """Which measures ir_measures computed (the fallback), one line each."""
    from evalops.metrics import parse_measures
    from evalops.metrics.result import fallback_names

    names = list(dict.fromkeys(c["measure"] for c in report["comparisons"]))
    return [f"{name}: computed by {how}" for name, how in fallback_names(parse_measures(names)).items()] if names else []


@click.command("power")
@click.option("--effect", type=float, default=None, help="|d_z| to detect: mean delta / sd of the per-query deltas.")
@click.option("--n", "n", type=int, default=None, help="Number of queries (pairs).")
@click.option("--power", "target", type=float, default=None, help="Target power (default 0.8 when solving for n or the effect).")
@click.option("--pilot", "pilot_path", type=click.Path(dir_okay=False, exists=True), default=None,
              help="A file of real per-query deltas (one number a line, or a CSV with a 'delta' column): power "
                   "and sample size of the default rule by simulation from their shape (with --delta).")
@click.option("--delta", "drop", type=float, default=None,
              help="With --pilot: the true mean drop to detect, in the measure's units (e.g. -0.02).")
@click.option("--measure", default=None,
              help="With --pilot: the measure the deltas are of; its default margin applies (nDCG@10: 0.02).")
@click.option("--margin", type=float, default=None,
              help="With --pilot: the margin (default: the --measure's default margin, else 0.01).")
@click.option("--simulations", type=click.IntRange(min=100), default=2000, show_default=True,
              help="With --pilot: simulated comparisons per n.")
@ALPHA
@ALTERNATIVE
@OUTPUT_FORMAT
@reports_errors
def power(effect: float | None, n: int | None, target: float | None, pilot_path: str | None, drop: float | None,
          measure: str | None, margin: float | None, simulations: int, alpha: float, alternative: str, fmt: str,
          output_path: Any) -> None:
    """Power and sample size of the paired t-test, exact through the noncentral t; or of the default rule,
    simulated from a pilot of real per-query deltas.

    Give two of --effect, --n, --power and get the third: --effect with --n gives the power; --effect
    alone (or with --power) gives the number of queries needed; --n with --power gives the smallest
    detectable |d_z|. With --pilot and --delta: the power of the default (robust) rule to call a drop of
    --delta a regression with --n queries, or the queries it needs for --power (default 0.8), resampling
    the pilot re-centred to that mean; the Monte Carlo standard error is printed with it. The margin is
    --margin, else the --measure's default margin. Solving for n also prints the range of n the pilot's own
    sampling error allows (90 % over 20 bootstrap pilots): plan with its upper end.
    """
    if pilot_path is not None:
        _pilot_power(pilot_path, drop, n, target, measure, margin, simulations, alpha, alternative, effect, fmt,
                     output_path)
        return
    if drop is not None or margin is not None or measure is not None:
        raise InputError("--delta, --measure and --margin go with --pilot (without one, give --effect as |d_z|)")
    from evalops.stats import (
        minimum_detectable_effect,
        paired_power,
        paired_sample_size,
        two_sample_normal_sample_size,
    )

    if effect is not None and n is not None and target is not None:
        raise InputError("give two of --effect, --n and --power, not all three")
    if effect is not None and n is not None:
        solved, result = "power", {"effect": abs(effect), "n": n, "power": paired_power(effect, n, alpha, alternative)}
    elif effect is not None:
        target = 0.8 if target is None else target
        solved = "n"
        result = {"effect": abs(effect), "n": paired_sample_size(effect, target, alpha, alternative), "power": target}
    elif n is not None:
        target = 0.8 if target is None else target
        solved = "effect"
        result = {"effect": minimum_detectable_effect(n, target, alpha, alternative), "n": n, "power": target}
    else:
        raise InputError("give --effect (with --n or --power), or --n with --power")
    payload: dict[str, Any] = {"solved_for": solved, **result, "alpha": alpha, "alternative": alternative,
                               "design": "paired t-test, exact noncentral t"}
    if solved == "n" and alternative == "two-sided":
        payload["two_sample_normal_n_per_group"] = two_sample_normal_sample_size(result["effect"], target, alpha)
    lines = {
        "power": f"power {payload['power']:.4f} to detect |d_z| = {payload['effect']:g} with {n} queries",
        "n": f"{payload['n']} queries give power >= {payload['power']:g} to detect |d_z| = {payload['effect']:g}",
        "effect": f"{n} queries detect |d_z| >= {payload['effect']:.4f} with power {payload['power']:g}",
    }
    text = [f"{lines[solved]} (paired t-test, {alternative}, alpha = {alpha:g}; exact noncentral t)"]
    if "two_sample_normal_n_per_group" in payload:
        text.append(
            f"note: the two-sample normal formula n = 2((z_a/2 + z_b)/d)^2 would say "
            f"{payload['two_sample_normal_n_per_group']} per group; it ignores the pairing and is not the answer "
            "for a paired design"
        )
    emit(Output(data=payload, columns=tuple(payload), rows=[payload], notes=text[1:],
                draw=lambda console: [console.print(t, highlight=False, markup=False, soft_wrap=True) for t in text]),
         fmt, output_path)


def _read_pilot(path: str) -> list[float]:
    """Per-query deltas from a file: one number a line, or a CSV whose header has a ``delta`` column."""
    with open(path, encoding="utf-8") as f:
        lines = [line.strip() for line in f if line.strip()]
    if not lines:
        raise InputError(f"{path}: the pilot file is empty; write one per-query delta a line")
    column = None
    if "," in lines[0] or not _is_number(lines[0]):
        header = [h.strip().lower() for h in lines[0].split(",")]
        if "delta" not in header:
            raise InputError(f"{path}: the first line is not a number and has no 'delta' column; write one "
                             "per-query delta a line, or a CSV with a 'delta' column")
        column, lines = header.index("delta"), lines[1:]
    out = []
    for row, line in enumerate(lines, start=2 if column is not None else 1):
        cell = line.split(",")[column].strip() if column is not None else line
        if not _is_number(cell):
            raise InputError(f"{path}, line {row}: {cell!r} is not a number")
        out.append(float(cell))
    return out


def _is_number(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True


def _pilot_power(path: str, drop: float | None, n: int | None, target: float | None, measure: str | None,
                 margin: float | None, simulations: int, alpha: float, alternative: str, effect: float | None,
                 fmt: str, output_path: Any) -> None:
    from evalops.stats import DEFAULT_MIN_DELTA, Policy
    from evalops.stats.pilot import MAX_N, pilot_power, pilot_sample_size_range

    if effect is not None:
        raise InputError("--effect (|d_z|) does not go with --pilot; give --delta, the drop in the measure's units")
    if drop is None:
        raise InputError("--pilot needs --delta, the true mean drop to detect (e.g. --delta -0.02)")
    deltas = _read_pilot(path)
    if margin is None:
        margin = Policy().margin(measure) if measure is not None else DEFAULT_MIN_DELTA
    common = {"alpha": alpha, "alternative": alternative, "simulations": simulations}
    if n is not None and target is not None:
        raise InputError("with --pilot give --n (to get the power) or --power (to get n), not both")
    planned = None
    if n is not None:
        solved, got = "power", pilot_power(deltas, drop, n, margin, **common)
    else:
        target = 0.8 if target is None else target
        planned = pilot_sample_size_range(deltas, drop, margin, power=target, **common)
        n, got, solved = planned.n, planned.at_n, "n"
    payload: dict[str, Any] = {"solved_for": solved, "delta": drop, "n": n, "power": got.power,
                               "mc_se": got.mc_se, "measure": measure, "margin": margin, "alpha": alpha,
                               "alternative": alternative, "pilot": path, "pilot_queries": len(deltas),
                               "simulations": simulations,
                               "design": "the default rule (robust interval), simulated from the pilot"}
    if planned is not None:
        payload.update({"n_low": planned.low, "n_high": planned.high, "range_level": planned.level,
                        "range_resamples": planned.resamples, "range_simulations": planned.simulations})
    head = (f"power {got.power:.3f} (Monte Carlo SE {got.mc_se:.3f}) to call a drop of {drop:g} a regression "
            f"with {n} queries" if solved == "power" else
            f"{n} queries give power {got.power:.3f} (Monte Carlo SE {got.mc_se:.3f}, target {target:g}) to call "
            f"a drop of {drop:g} a regression")
    of = f" of {measure}" if measure is not None and drop is not None else ""
    text = [f"{head} (the default rule, {alternative}, alpha = {alpha:g}, margin{of} {margin:g}; {simulations} "
            f"simulated comparisons resampling {len(deltas)} pilot deltas re-centred to {drop:g})"]
    if planned is not None and planned.note is not None:
        payload["range_note"] = planned.note
        text.append(f"with the pilot's own uncertainty: {planned.low:,} queries or more; {planned.note}")
    elif planned is not None:
        high = f"{planned.high:,}" if planned.high is not None else f"more than {MAX_N:,}"
        text.append(f"with the pilot's own uncertainty: {planned.low:,} to {high} queries ({planned.level:.0%} of "
                    f"{planned.resamples} bootstrap pilots of {len(deltas)} queries, {planned.simulations} simulated "
                    f"comparisons per n each); a pilot of {len(deltas)} queries cannot say more precisely: plan "
                    f"for {high}")
    emit(Output(data=payload, columns=tuple(payload), rows=[payload], notes=[],
                draw=lambda console: [console.print(t, highlight=False, markup=False, soft_wrap=True) for t in text]),
         fmt, output_path)
