"""Shared CLI plumbing: error reporting, output formats, progress bars."""

from __future__ import annotations

import contextlib
import datetime as dt
import functools
import gc
import io
import json
import math
import sys
import traceback
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

import click

from evalops.errors import EvalopsError, InputError, MeasureError
from evalops.exitcodes import ExitCode, for_exception
from evalops.util import safetext
from evalops.util.extras import translate
from evalops.util.storage import storage_full

F = TypeVar("F", bound=Callable[..., Any])

FORMATS = ("table", "json", "csv", "markdown")


def output_options(formats: Sequence[str] = FORMATS, default: str = "table") -> Callable[[F], F]:
    """``--format`` and ``-o/--output PATH``, the same on every command that prints results (see :func:`emit`)."""

    def decorate(func: F) -> F:
        func = click.option(
            "-o", "--output", "output_path", type=click.Path(dir_okay=False, path_type=Path), default=None,
            help="Write the output to this file instead of stdout.",
        )(func)
        return click.option(
            "--format", "fmt", type=click.Choice(list(formats)), default=default, show_default=True,
            help="Output format: " + ", ".join(formats) + ".",
        )(func)

    return decorate


FORMAT_OPTION = output_options()


@dataclass
class Output:
    """What a command prints, in every format.

    ``data`` is the stable JSON payload. ``columns`` and ``rows`` are the table that ``csv`` and ``markdown``
    write (``csv`` every column; ``table`` and ``markdown`` the ``table_columns`` when given, each cell
    through ``cell``), unless the command draws its own table (``draw``, which prints to the console it is
    given). ``notes`` are lines that follow the table in ``table`` and ``markdown``.
    """

    data: Any
    columns: Sequence[str] = ()
    rows: Sequence[Mapping[str, Any]] = ()
    title: str | None = None
    notes: Sequence[str] = ()
    draw: Callable[[Any], None] | None = None
    table_columns: Sequence[str] | None = None
    empty: str = "(no rows)"
    cell: Callable[[str, Any], str] | None = None


def emit(output: Output, fmt: str, path: Path | None = None) -> None:
    """Print ``output`` in ``fmt`` (table, json, csv or markdown) to stdout, or write it to ``path``."""
    if fmt == "json":
        text = dump_json(output.data) + "\n"
    elif fmt == "csv":
        text = _csv(output)
    elif fmt == "markdown":
        text = _markdown(output)
    else:
        text = _table(output, to_file=path is not None)
    if path is None:
        if text:
            click.echo(text, nl=False)
        return
    write_text(path, text, "the output")


def write_text(path: Path, text: str, what: str) -> None:
    """Write ``text`` to ``path`` (its folder made); a failure is an ``InputError`` naming the path and ``what``."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    except OSError as exc:
        if storage_full(exc) is not None:  # the disk is full: exit 7, not bad input (reports_errors)
            raise OSError(exc.errno, exc.strerror, str(path)) from exc
        raise InputError(f"{path}: cannot write {what} ({exc.strerror or exc})") from None


def plain(value: Any) -> Any:
    """A JSON/CSV-friendly scalar: NaN -> None, numpy scalars -> Python, datetimes -> ISO-8601."""
    kind = type(value)
    if value is None or kind is str or kind is int or kind is bool:  # the common cells, first
        return value
    if kind is float:
        return value if math.isfinite(value) else None
    if hasattr(value, "isoformat"):
        return value.isoformat()
    if hasattr(value, "item") and not isinstance(value, (str, bytes)):
        try:
            value = value.item()
        except (TypeError, ValueError):
            pass
    if isinstance(value, float) and not math.isfinite(value):
        return None
    return value


def _text(value: Any) -> str:
    value = plain(value)
    if value is None:
        return ""
    if isinstance(value, (list, tuple)):
        return "; ".join(_text(v) for v in value)
    return str(value)


def _csv(output: Output) -> str:
    cell = _memo(lambda _column, value: _csv_cell(value))
    # safetext.csv_text neutralises every text cell (ids, query text, errors: never a formula in a spreadsheet)
    return safetext.csv_text(output.columns, ([cell(c, row.get(c)) for c in output.columns] for row in output.rows))


def _memo(render: Callable[[str, Any], str]) -> Callable[[str, Any], str]:
    """``render(column, value)`` remembered for each (column, type, value) seen: a long table repeats its
    cells (per-query rows repeat each query id once per measure, each measure name once per query, and
    values), and escaping each cell again was most of the time of a per-query CSV or markdown table."""
    seen: dict[tuple[str, type, Any], str] = {}

    def cell(column: str, value: Any) -> str:
        try:
            key = (column, type(value), value)
            text = seen.get(key)
        except TypeError:  # an unhashable value (a list): rendered each time
            return render(column, value)
        if text is None:
            text = seen[key] = render(column, value)
        return text

    return cell


def _csv_cell(value: Any) -> str:
    value = plain(value)
    if isinstance(value, float):
        return repr(value)
    if isinstance(value, (bool, int)) or value is None:
        return _text(value)
    return _text(value)


def markdown_cell(value: Any) -> str:
    """A value as one cell of a GitHub-flavoured markdown table, escaped as the report escapes its cells
    (:func:`evalops.util.safetext.markdown_inline`: no link, image, emphasis, HTML, pipe or backtick survives;
    control and bidi characters go), on one line."""
    return " ".join(safetext.markdown_inline(_text(value), None).split())


def _markdown(output: Output) -> str:
    lines = []
    if output.title:
        lines += [f"**{markdown_cell(output.title)}**", ""]
    if output.rows:
        shown = list(output.table_columns or output.columns)
        lines.append("| " + " | ".join(markdown_cell(c) for c in shown) + " |")
        lines.append("|" + "|".join("---" for _ in shown) + "|")
        cell = _memo(lambda column, value: markdown_cell(_format_cell(output, column, value)))
        lines.extend("| " + " | ".join([cell(c, row.get(c)) for c in shown]) + " |" for row in output.rows)
    else:
        lines.append(output.empty)
    if output.notes:
        lines += ["", *("- " + markdown_cell(note) for note in output.notes)]
    return "\n".join(lines) + "\n"


def _format_cell(output: Output, column: str, value: Any) -> str:
    if output.cell is not None:
        return output.cell(column, value)
    value = plain(value)
    if isinstance(value, float):
        # four decimals, except for small values (p-values) that would print as 0.0000
        return f"{value:.2e}" if value != 0 and abs(value) < 1e-3 else f"{value:.4f}"
    return _text(value)


def console_for(buffer: io.StringIO | None = None):
    """A rich console on stdout (the terminal's width on a terminal; a fixed wide layout when piped, so cells
    do not wrap), or a plain one writing into ``buffer``."""
    from rich.console import Console

    if buffer is not None:
        return Console(file=buffer, width=200, force_terminal=False, color_system=None, highlight=False)
    return Console() if sys.stdout.isatty() else Console(width=200)


def _table(output: Output, to_file: bool) -> str:
    """Draws the table on stdout and returns "", or (``to_file``) returns it as plain text."""
    buffer = io.StringIO() if to_file else None
    console = console_for(buffer)
    if output.draw is not None:
        output.draw(console)
    elif not output.rows:
        console.print(output.empty, highlight=False, markup=False)
    else:
        shown = list(output.table_columns or output.columns)
        right = [all(_is_number(r.get(column)) for r in output.rows) for column in shown]
        cells = [[_format_cell(output, c, row.get(c)) for c in shown] for row in output.rows]
        lines = None if output.title else plain_table_lines(shown, cells, right, console.width)
        if lines is not None:
            console.out(lines[0], style="bold", highlight=False)  # rich's header style
            console.out("\n".join(lines[1:]), highlight=False)
        else:
            from rich.table import Table

            table = Table(title=output.title, show_edge=False)
            for column, is_right in zip(shown, right):
                table.add_column(column, justify="right" if is_right else "left")
            for row_cells in cells:
                table.add_row(*row_cells)
            console.print(table)
        for note in output.notes:
            console.print(note, highlight=False, markup=False)
    return buffer.getvalue() if buffer is not None else ""


def _is_number(value: Any) -> bool:
    """A cell that a table right-aligns (an undefined one does not count against it)."""
    shown = plain(value)
    return shown is None or (isinstance(shown, (int, float)) and not isinstance(value, bool))


def plain_table_lines(header: Sequence[str], cells: Sequence[Sequence[str]], right: Sequence[bool],
                      width: int) -> list[str] | None:
    """The lines rich draws for a plain table (no title, no edge, heavy head), or ``None`` when rich must
    draw it: a cell that is not printable ASCII (its width on screen is not its length) or a table wider
    than ``width`` (rich shrinks and wraps columns). Rich renders about a millisecond per row, which made
    a year of history (1,825 rows) take longer than the rest of ``evalops history``; a test holds the two
    drawings equal."""
    columns = list(zip(header, *cells)) if cells else [(h,) for h in header]
    if not all(text.isascii() and text.isprintable() for column in columns for text in column):
        return None
    widths = [max(map(len, column)) for column in columns]
    if sum(w + 2 for w in widths) + len(widths) - 1 > width:
        return None
    parts: list[str] = []
    write_table_columns(parts.append, header, [column[1:] for column in columns], right)
    return "".join(parts).splitlines()


STREAMED_LINES = 10_000  # lines per write of :func:`write_table_columns`


def write_table_columns(write: Callable[[str], Any], header: Sequence[str], columns: Sequence[Sequence[str]],
                        right: Sequence[bool], title: str | None = None) -> None:
    """A table as the plain lines rich draws for it (no edge, heavy head; ``title`` centred above), given
    column by column and written ``STREAMED_LINES`` lines at a time: for tables too long for a screen, which
    rich renders at about a millisecond per row. Cells are printed as given (the caller makes untrusted text
    safe); a cell wider on screen than its length (CJK) is padded by its width on screen."""
    from rich.cells import cell_len

    padded = []
    for head, column, is_right in zip(header, columns, right):
        cells = [head, *column]
        if all(map(str.isascii, cells)):
            width = max(map(len, cells))
            padded.append([f" {c:>{width}} " if is_right else f" {c:<{width}} " for c in cells])
        else:
            lengths = [cell_len(c) for c in cells]
            width = max(lengths)
            padded.append([" " + (" " * (width - n) + c if is_right else c + " " * (width - n)) + " "
                           for c, n in zip(cells, lengths)])
    widths = [len(column[0]) if column[0].isascii() else cell_len(column[0]) for column in padded]
    if title:
        write(title.center(sum(widths) + len(widths) - 1) + "\n")
    write("┃".join(column[0] for column in padded) + "\n")
    write("╇".join("━" * w for w in widths) + "\n")
    rows = len(padded[0]) if padded else 0
    for start in range(1, rows, STREAMED_LINES):
        stop = min(rows, start + STREAMED_LINES)
        write("\n".join(map("│".join, zip(*(column[start:stop] for column in padded)))) + "\n")


class MeasureName(click.ParamType):
    """A measure in ir_measures syntax, parsed when the command line is (a bad one is a usage error, exit 2);
    the value stays the string given, for the command to parse with its siblings."""

    name = "measure"

    def convert(self, value: Any, param: Any, ctx: Any) -> Any:
        from evalops.metrics import parse_measure

        if isinstance(value, str) and not value.strip():
            self.fail("is empty; give a measure such as nDCG@10", param, ctx)
        try:
            parse_measure(value)
        except MeasureError as exc:
            self.fail(str(exc), param, ctx)
        return value


MEASURE = MeasureName()


def measure_labels(names: Sequence[str]) -> dict[str, str]:
    """Each canonical measure name mapped to the spelling the user gave first (``RR@10`` -> ``MRR@10`` when
    the user asked for MRR@10), for display; values, storage and JSON keep the canonical name."""
    from evalops.metrics import parse_measure

    labels: dict[str, str] = {}
    for name in names:
        labels.setdefault(str(parse_measure(name)), " ".join(str(name).split()))
    return labels
FIRST_DAY, LAST_DAY = dt.date(1900, 1, 1), dt.date(9999, 12, 30)  # a run's log window is the day before it


class Day(click.ParamType):
    """A day as YYYY-MM-DD between 1900-01-01 and 9999-12-30; an empty value is refused (a CI variable left
    unset must not mean today)."""

    name = "YYYY-MM-DD"

    def convert(self, value: Any, param: Any, ctx: Any) -> Any:
        if isinstance(value, dt.date):
            return value
        text = str(value).strip()
        if not text:
            self.fail("is empty; give a day as YYYY-MM-DD (leave the option out for today, UTC)", param, ctx)
        try:
            day = dt.date.fromisoformat(text) if len(text) == 10 else None
        except ValueError:
            day = None
        if day is None:
            self.fail(f"{safetext.truncate(text, 40)!r} is not a day; use YYYY-MM-DD", param, ctx)
        if not FIRST_DAY <= day <= LAST_DAY:
            self.fail(f"{text} is outside {FIRST_DAY} .. {LAST_DAY}", param, ctx)
        return day


DAY = Day()


def reports_errors(func: F) -> F:
    """Exit with the code of :mod:`evalops.exitcodes`: an ``EvalopsError`` becomes one ``error:`` line on
    stderr and its code (bad input, a failed version, ...); a full disk anywhere below (ENOSPC, EDQUOT,
    EFBIG, also inside a ``shutil.Error``: :func:`evalops.util.storage.storage_full`) one ``error:`` line naming
    the path and exit 7; a library of an extra that is not installed (:data:`evalops.util.extras.LIBRARIES`) the
    line naming the extra to install, exit 3; any other exception is an internal error, with its traceback.
    click's own usage errors pass through (exit 2)."""

    @functools.wraps(func)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return func(*args, **kwargs)
        except (click.exceptions.ClickException, click.exceptions.Exit, click.exceptions.Abort):
            raise
        except EvalopsError as exc:
            click.echo(f"error: {exc}", err=True)
            sys.exit(for_exception(exc))
        except Exception as exc:
            ctx = click.get_current_context(silent=True)
            missing = translate(exc, f"run `{ctx.command_path}`" if ctx else "run this command") \
                if isinstance(exc, ModuleNotFoundError) else None
            if missing is not None:  # an extra's library met below a command that did not check for it
                click.echo(f"error: {missing}", err=True)
                sys.exit(for_exception(missing))
            full = storage_full(exc)
            if full is not None:  # not a bug: the disk or quota is full (see evalops.util.storage)
                click.echo(f"error: {full.message()}", err=True)
                sys.exit(ExitCode.WAREHOUSE_ERROR)
            click.echo("internal error (a bug in evalops; please report it with this traceback):", err=True)
            click.echo(traceback.format_exc(), err=True, nl=False)
            sys.exit(ExitCode.INTERNAL_ERROR)

    return wrapper  # type: ignore[return-value]


# True when ``evalops`` was started from the command line (``main()`` read ``sys.argv``): the process is the
# command's, so it may end without the interpreter's shutdown (:func:`exits_fast`). False under click's test
# runner and any caller that passes the arguments, whose process goes on after the command.
OWNS_PROCESS = False


def exits_fast(func: F) -> F:
    """End the process as soon as the command is done, when the process is the command's (:data:`OWNS_PROCESS`).

    A run leaves millions of objects (gold set, run tables, the imports of pandas, SQLAlchemy, Great Expectations);
    the interpreter's shutdown frees them one by one, about a second of CPU that changes nothing on disk. Here
    the command's exit code (its ``SystemExit``, or 0) is kept; stdout and stderr are flushed, the warehouse
    engines' connections closed (:func:`evalops.pipeline.store.dispose_engines`) and the ``atexit`` handlers
    run (logging's flush, temporary folders' clean-up) before ``os._exit``. Anything else (click's own exits,
    a failed flush, a thread that is not a daemon still running) takes the ordinary way out."""

    @functools.wraps(func)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        if not OWNS_PROCESS:
            return func(*args, **kwargs)
        try:
            func(*args, **kwargs)
            code: Any = 0
        except SystemExit as exc:
            code = exc.code
        if code is None:
            code = 0
        if not isinstance(code, int):  # sys.exit("message"): printed, exit 1, as the interpreter does
            raise SystemExit(code)
        _exit_now(int(code))

    return wrapper  # type: ignore[return-value]


def frozen_at_each_step(say: Callable[[str], None]) -> Callable[[str], None]:
    """``say`` that first moves every object alive into the collector's permanent generation
    (``gc.freeze``), when the process is the command's (:data:`OWNS_PROCESS`).

    What is alive between two steps of a run (the libraries' modules, the gold set, the snapshot, the run
    tables) lives to the end; every full collection walked all of it again, about half a second of CPU at
    20,000 queries x 3 versions. Frozen, it is left out of the walks; what the later steps drop is still
    freed by its reference count, and their cycles are still collected."""
    if not OWNS_PROCESS:
        return say

    def step(message: str) -> None:
        gc.freeze()
        say(message)

    return step


def _exit_now(code: int) -> None:
    import atexit
    import os
    import threading

    if any(t.is_alive() and not t.daemon for t in threading.enumerate() if t is not threading.main_thread()):
        raise SystemExit(code)  # a thread still working: the interpreter's exit waits for it
    store = sys.modules.get("evalops.pipeline.store")
    if store is not None:
        store.dispose_engines()
    try:
        sys.stdout.flush()
        sys.stderr.flush()
    except (OSError, ValueError):  # a closed pipe: the interpreter's own exit reports it
        raise SystemExit(code) from None
    atexit._run_exitfuncs()
    try:
        sys.stdout.flush()
        sys.stderr.flush()
    except (OSError, ValueError):
        raise SystemExit(code) from None
    os._exit(code)


def json_default(value: Any) -> Any:
    """JSON encoder fallback: numpy scalars and arrays become plain Python values."""
    import numpy as np

    if isinstance(value, np.generic):
        return value.item()
    if isinstance(value, np.ndarray):
        return value.tolist()
    raise TypeError(f"not JSON serialisable: {type(value).__name__}")


def dump_json(payload: Any) -> str:
    """``payload`` as strict JSON indented by two spaces, laid out exactly as ``json.dumps(..., indent=2)``
    lays it out; NaN and infinities become null, numpy values plain Python (:func:`json_default`).

    ``json.dumps`` with an indent runs the pure-Python encoder, which takes seconds for the per-query values
    of 100,000 queries. Here the payload is normalised by one round trip through the C encoder and decoder
    (non-finite numbers decoded as None), and each innermost container (no dict or list inside) is written
    by the C encoder in one call, its item separator carrying the newline and the indent.
    """
    plain_payload = json.loads(json.dumps(payload, default=json_default), parse_constant=lambda _name: None)
    parts: list[str] = []
    _write_indented(plain_payload, "", parts.append)
    return "".join(parts)


_LEAF_ENCODERS: dict[str, Callable[[Any], str]] = {}


def _leaf_encoder(indent: str) -> Callable[[Any], str]:
    encode = _LEAF_ENCODERS.get(indent)
    if encode is None:
        encode = json.JSONEncoder(separators=(",\n" + indent, ": "), allow_nan=False).encode
        _LEAF_ENCODERS[indent] = encode
    return encode


def _write_indented(value: Any, indent: str, write: Callable[[str], Any]) -> None:
    """``value`` (plain JSON types only) as ``json.dumps(indent=2)`` lays it out at ``indent``."""
    is_dict = isinstance(value, dict)
    if not is_dict and not isinstance(value, list):
        write(json.dumps(value, allow_nan=False))
        return
    if not value:
        write("{}" if is_dict else "[]")
        return
    inner = indent + "  "
    items = value.values() if is_dict else value
    if not any(isinstance(v, (dict, list)) for v in items):
        text = _leaf_encoder(inner)(value)
        write(text[0] + "\n" + inner + text[1:-1] + "\n" + indent + text[-1])
        return
    write("{\n" if is_dict else "[\n")
    key = json.encoder.encode_basestring_ascii  # type: ignore[attr-defined]
    separator = ""
    if is_dict:
        for k, v in value.items():
            write(separator + inner + key(k) + ": ")
            _write_indented(v, inner, write)
            separator = ",\n"
    else:
        for v in value:
            write(separator + inner)
            _write_indented(v, inner, write)
            separator = ",\n"
    write("\n" + indent + ("}" if is_dict else "]"))


def stderr_is_terminal() -> bool:
    return sys.stderr.isatty()


def _live(*columns: Any) -> Any:
    """A transient rich progress display on stderr (the bar of :func:`progress`, the line of :func:`steps`)."""
    from rich.console import Console
    from rich.progress import Progress

    return Progress(*columns, console=Console(stderr=True), transient=True)


@contextlib.contextmanager
def progress(description: str, total: int | None) -> Iterator[Callable[[int], None]]:
    """A progress bar on stderr when it is a terminal; a silent no-op when output is piped.

    Yields ``advance(n)``.
    """
    if not stderr_is_terminal():
        yield lambda n=1: None
        return
    from rich.progress import BarColumn, TaskProgressColumn, TextColumn, TimeRemainingColumn

    with _live(TextColumn("{task.description}"), BarColumn(), TaskProgressColumn(), TimeRemainingColumn()) as bar:
        task = bar.add_task(description, total=total)
        yield lambda n=1: bar.advance(task, n)


@dataclass(frozen=True)
class Steps:
    """What :func:`steps` yields: ``step(message)`` starts a step, ``note(message)`` prints a line that is
    not one (a warning, a count) and stays on screen."""

    step: Callable[[str], None]
    note: Callable[[str], None]


def _echo_err(message: str) -> None:
    click.echo(message, err=True)


@contextlib.contextmanager
def steps(title: str, *, quiet: bool = False) -> Iterator[Steps]:
    """The steps of a long command (``evalops run``, ``gate``) on stderr, so a run that takes half a minute is
    never silent: on a terminal one live line (``title: step``, a spinner and the seconds so far; each step
    replaces the last, and the line is gone when the block ends); otherwise one plain line per step
    (``  step ...``), for a CI log; with ``quiet`` no step at all. Notes are printed in every case."""
    if quiet or not stderr_is_terminal():
        yield Steps((lambda _m: None) if quiet else (lambda m: _echo_err(f"  {m} ...")),
                    lambda m: _echo_err(f"  {m}"))
        return
    from rich.progress import SpinnerColumn, TextColumn, TimeElapsedColumn

    with _live(SpinnerColumn(), TextColumn("{task.description}"), TimeElapsedColumn()) as line:
        task = line.add_task(title, total=None)

        def note(message: str) -> None:
            line.console.print(f"  {message}", highlight=False, markup=False, soft_wrap=True)

        yield Steps(lambda m: line.update(task, description=f"{title}: {m}"), note)
