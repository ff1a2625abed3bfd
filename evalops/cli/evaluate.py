"""``evalops evaluate QRELS RUN -m MEASURE ...``: score one run file against judgments."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import click
from click.core import ParameterSource

from evalops.cli._common import (
    FORMAT_OPTION,
    MEASURE,
    Output,
    emit,
    measure_labels,
    progress,
    reports_errors,
    write_table_columns,
)
from evalops.errors import InputError
from evalops.util import numfmt, safetext
from evalops.util.limits import (
    JUDGMENTS_READ_FACTOR,
    ProcessBudget,
    peak_rss_bytes,
    release_free_memory,
    reset_peak_rss,
    result_shares,
    return_freed_memory,
    rss_bytes,
)

__all__ = ["evaluate"]

SHOWN_IDS = 5  # how many query ids a table footer lists before "..."
SCREEN_MARGIN = 12  # lines a per-query table leaves on the screen for the summary under it
# The terminal's summary columns, which markdown prints too (csv and json keep every raw column).
SUMMARY_COLUMNS = ("measure", "mean", "95% CI", "std", "min", "max", "n")


@click.command("evaluate")
@click.argument("qrels", metavar="QRELS")
@click.argument("run", metavar="RUN")
@click.option(
    "-m",
    "--measure",
    "measures",
    multiple=True,
    required=True,
    type=MEASURE,
    help="A measure in ir_measures syntax, e.g. nDCG@10, P(rel=2)@5, nDCG(gain=exp)@10, AP, RR, R-Prec, or a "
    "trec_eval name (ndcg_cut_10); other ir_measures names are computed by ir_measures. Repeat for more.",
)
@click.option("--per-query", is_flag=True, help="Also output the value of every query.")
@FORMAT_OPTION
@click.option(
    "--no-answer",
    type=click.Choice(["exclude", "zero"]),
    default="exclude",
    show_default=True,
    help="Gold queries without a relevant document: leave them out of the means (exclude) or score them 0 "
    "as trec_eval does (zero).",
)
@click.option("--allow-empty", is_flag=True, help="Accept an empty run file (every query scores 0) instead of failing.")
@click.option(
    "--memory-budget",
    default="1GB",
    show_default=True,
    help="Memory for everything the evaluation holds (e.g. 512MB, 2GB): the judgments, the run file's reading "
         "(a larger run is streamed by query blocks) and the per-query results. It comes on top of a floor, the "
         "interpreter and libraries; when given, the floor, the shares and the peak are printed on stderr, and a "
         "budget the judgments alone would exceed is refused.",
)
@reports_errors
def evaluate(qrels: str, run: str, measures: tuple[str, ...], per_query: bool, fmt: str, output_path: Any,
             no_answer: str, allow_empty: bool, memory_budget: str) -> None:
    """Score RUN (a TREC run file) against QRELS (TREC qrels, BEIR qrels TSV or BEIR folder).

    Either may be `-` (standard input) or compressed (.gz, .zst). Values match trec_eval (ties by doc id
    descending; a query missing from the run scores 0).
    """
    from evalops.formats import read_gold, read_qrels
    from evalops.formats.stream import evaluate_run_file, parse_memory_budget
    from evalops.metrics import Policy, parse_measures
    from evalops.metrics.gold import as_gold
    from evalops.util.arrow import available

    if qrels == "-" and run == "-":
        raise InputError("QRELS and RUN cannot both be standard input (-); give one of them as a file")
    parsed = parse_measures(measures)  # a typo fails before any file is read
    budget = parse_memory_budget(memory_budget)
    policy = Policy(no_answer=no_answer)  # type: ignore[arg-type]
    explicit_budget = click.get_current_context().get_parameter_source("memory_budget") != ParameterSource.DEFAULT
    # Before anything is read: the evaluation imports pyarrow's compute module in any case, and with its CSV
    # reader loaded every file but a tiny one is read in columns, not line by line (SciFact: 0.1 s less CPU).
    # Under a budget this is also the floor: the interpreter and every library the evaluation may import.
    from evalops.formats._table import load_arrow_readers

    load_arrow_readers()
    if explicit_budget:
        return_freed_memory()  # a bound on the process: freed memory is handed back as it is freed

    floor = rss_bytes()
    reset_peak_rss()  # the peaks below are this evaluation's, not an earlier one in the same process
    if explicit_budget and qrels != "-" and Path(qrels).is_file():
        _judgments_fit(qrels, budget)  # before reading them: their reading alone could exceed the budget
    # ids in Arrow arrays, no Python string per judgment, lookups built; the base install (no pyarrow) holds
    # them in numpy arrays, as `evalops compare` does: the same values
    gold = read_gold(qrels).index() if available() else as_gold(read_qrels(qrels))
    if explicit_budget:
        release_free_memory()  # the judgments' share is what they hold, not what reading them freed
    streamed, scoring = result_shares(len(gold), len(gold.grades), len(parsed), per_query)
    shares = ProcessBudget(budget, floor, max(0, (rss_bytes() or 0) - (floor or 0)), streamed,
                           max(0, (peak_rss_bytes() or 0) - (floor or 0)), scoring)
    if explicit_budget and not shares.fits:
        raise InputError(shares.refusal())
    with progress("scoring queries", total=len(gold)) as advance:
        done = 0

        def report(finished: int, total: int) -> None:
            nonlocal done
            advance(finished - done)
            done = finished

        result = evaluate_run_file(
            gold, run, parsed, policy, memory_budget=shares.reader_blocks if explicit_budget else shares.reader,
            allow_empty=allow_empty, progress=report,
            notice=lambda message: click.echo(message, err=True),
        )
    if explicit_budget:
        click.echo(shares.note(), err=True)

    label = measure_labels(measures).get  # the names as asked (MRR, not its canonical RR); JSON keeps RR
    notes: list[str] = []
    table_columns = None
    if per_query:
        columns: tuple[str, ...] = ("query_id", "measure", "value")
        rows = _per_query_rows(result, label) if fmt in ("csv", "markdown") else []  # json and table do not use them
        # markdown: under the rows
        notes = [_mean_note(label(name, name), agg) for name, agg in result.aggregates.items()]
        notes += convention_notes(result, label)
    else:
        notes = convention_notes(result, label)
        columns = ("measure", "n", "mean", "std", "min", "max", "ci_low", "ci_high")
        totals = result.trec_eval_counts() if fmt == "markdown" else {}  # as the terminal shows n; csv keeps the count
        rows = [{"measure": label(name, name), **agg.to_dict(), "95% CI": _ci(agg),
                 **({"n": f"{agg.n} of {totals[name]}"} if name in totals else {})}
                for name, agg in result.aggregates.items()]
        table_columns = SUMMARY_COLUMNS
    emit(Output(data=result.to_json(per_query=per_query), columns=columns, rows=rows, notes=notes,
                title=f"{result.run_name or run}  vs  {qrels}", table_columns=table_columns, cell=_cell,
                draw=lambda console: _table(console, result, per_query, qrels, run, label)), fmt, output_path)


def convention_notes(result: Any, label: Any) -> list[str]:
    """Where a mean is not the one trec_eval and ir_measures print (fewer queries under the no-answer
    policy), and which measures ir_measures computed (the fallback)."""
    from evalops.metrics.result import fallback_names

    notes = []
    for name, total in result.trec_eval_counts().items():
        n = result.aggregates[name].n
        notes.append(f"{label(name, name)}: mean over {n} of {total} queries (no relevant document: "
                     f"{result.policy.no_answer}); {total} under trec_eval's convention (--no-answer zero)")
    for name, how in fallback_names(result.measures).items():
        notes.append(f"{label(name, name)}: computed by {how}")
    return notes


def _judgments_fit(path: str, budget: int) -> None:
    """Refuse a budget that reading the judgments file would exceed by itself (a conservative estimate)."""
    from evalops.formats._source import as_source
    from evalops.formats.stream import estimated_size
    need = estimated_size(as_source(path)) * JUDGMENTS_READ_FACTOR
    if need > budget:
        mb = 1 << 20
        raise InputError(f"memory budget {budget / mb:.0f} MB is too small for the judgments: reading {path} takes "
                         f"at least {need / mb:.0f} MB; give --memory-budget {-(-int(need) // mb)}MB or more")


def _per_query_rows(result: Any, label: Any) -> list[dict[str, Any]]:
    """The rows of ``result.to_frame()`` (measure by measure, excluded values left out), without pandas."""
    query_ids = result.query_ids.tolist()
    return [{"query_id": qid, "measure": label(name, name), "value": value}
            for name, values in result.per_query.items()
            for qid, value in zip(query_ids, values.tolist()) if value == value]


def _mean_note(name: str, agg: Any) -> str:
    """One measure's aggregate as a line (the per-query Markdown keeps the means)."""
    return (f"{name}: mean {_fmt(agg.mean)}, 95% CI [{_fmt(agg.ci_low)}, {_fmt(agg.ci_high)}], "
            f"std {_fmt(agg.std)}, n {agg.n}")


def _missing(value: float) -> bool:
    return isinstance(value, float) and math.isnan(value)


def _fmt(value: float) -> str:
    """A mean or a value as every format prints it (:func:`evalops.util.numfmt.number`, ``-`` when undefined)."""
    return numfmt.number(value, missing="-")


def _ci(agg: Any) -> str:
    return "-" if _missing(agg.ci_low) else f"[{_fmt(agg.ci_low)}, {_fmt(agg.ci_high)}]"


def _cell(column: str, value: Any) -> str:
    """A markdown cell as the terminal prints it."""
    if column in ("n", "query_id", "measure", "95% CI"):
        return str(value)
    return _fmt(value)


def _ids(ids: tuple[str, ...] | list[str]) -> str:
    shown = ", ".join(safetext.plain(i, None) for i in ids[:SHOWN_IDS])
    return shown + (f", ... (+{len(ids) - SHOWN_IDS})" if len(ids) > SHOWN_IDS else "")


def _per_query_table(console: Any, result: Any, label: Any) -> None:
    """Queries by measures: drawn by rich when it fits the terminal's screen, else (a pipe, a file, more
    rows than the screen has) written as the same plain lines, streamed (rich takes about a millisecond a
    row: 40 s for 100,000 queries)."""
    names = list(result.per_query)
    header = ["query", *(label(name, name) for name in names)]
    ids = result.query_ids.tolist()
    if not all(map(str.isprintable, ids)):
        ids = [q if q.isprintable() else safetext.plain(q, None) for q in ids]
    columns = [ids, *(_values(result.per_query[name]) for name in names)]
    right = [False, *(True for _ in names)]
    if console.is_terminal and len(ids) + SCREEN_MARGIN <= console.height:
        from rich.markup import escape
        from rich.table import Table

        queries = Table(title="per query", show_edge=False)
        for head, is_right in zip(header, right):
            queries.add_column(escape(head), justify="right" if is_right else "left")
        for row in zip(*columns):
            queries.add_row(escape(row[0]), *row[1:])
        console.print(queries)
        return
    write_table_columns(console.file.write, header, columns, right, title="per query")


def _values(values: Any) -> list[str]:
    """A per-query vector as :func:`_fmt` prints each value (NaN and infinities as ``-``), in one pass."""
    import numpy as np

    shown = [f"{v:.{numfmt.DECIMALS}f}" for v in values.tolist()]
    for at in np.flatnonzero(~np.isfinite(values)).tolist():
        shown[at] = "-"
    return shown


def _table(console: Any, result: Any, per_query: bool, qrels_path: str, run_path: str, label: Any) -> None:
    from rich.markup import escape
    from rich.table import Table

    if per_query:
        _per_query_table(console, result, label)

    summary = Table(title=escape(f"{result.run_name or run_path}  vs  {qrels_path}"), show_edge=False)
    for header in ("measure", "mean", "95% CI", "std", "min", "max", "n"):
        summary.add_column(header, justify="left" if header == "measure" else "right")
    totals = result.trec_eval_counts()
    for name, agg in result.aggregates.items():
        n = f"{agg.n} of {totals[name]}" if name in totals else str(agg.n)
        summary.add_row(escape(label(name, name)), _fmt(agg.mean), _ci(agg), _fmt(agg.std), _fmt(agg.min), _fmt(agg.max), n)
    console.print(summary)

    notes = [f"ties: {result.policy.ties}", *convention_notes(result, label)]
    verb = "left out of the means" if result.policy.no_answer == "exclude" else "scored 0"
    by_ids: dict[tuple[str, ...], list[str]] = {}
    for name, ids in result.no_answer_ids.items():
        if ids:
            by_ids.setdefault(tuple(ids), []).append(name)
    for ids, names in by_ids.items():
        which = "" if len(names) == len(result.no_answer_ids) else f" for {', '.join(label(n, n) for n in names)}"
        notes.append(f"no relevant document{which} ({len(ids)} queries, {verb}; see --no-answer): {_ids(ids)}")
    if result.missing_from_run_ids:
        missing = result.missing_from_run_ids
        notes.append(f"missing from the run ({len(missing)} queries, scored 0): {_ids(missing)}")
    if result.ignored_run_query_ids:
        notes.append(f"run queries without judgments (ignored): {len(result.ignored_run_query_ids)}")
    for note in notes:
        console.print(note, style="dim", highlight=False, markup=False)
