"""``evalops db``, ``evalops history`` and ``evalops promote``: the warehouse from the command line."""

from __future__ import annotations

import contextlib
import dataclasses
import datetime as dt
import getpass
import os
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from evalops.cli._common import FORMAT_OPTION, Output, emit, reports_errors
from evalops.cli._project import PROJECT_OPTION, project_config
from evalops.errors import InputError, MeasureError, WarehouseError
from evalops.util import utc
from evalops.util.utc import as_utc
from evalops.warehouse import direct
from evalops.warehouse.config import create_warehouse_engine, resolve_url, url_for as warehouse_url_for
from evalops.warehouse.direct import HISTORY_COLUMNS, RUN_COLUMNS
from evalops.warehouse.statuses import FINISHED_STATUSES

# The warehouse's modules are imported where a command uses them: `evalops history` reads a few tables and
# need not import the rest (the scores' and A/B tests' numpy, the alerts, the migrations).

if TYPE_CHECKING:  # pragma: no cover
    from collections.abc import Sequence

    from sqlalchemy.engine import Engine

URL_OPTION = click.option(
    "--url",
    default=None,
    help="Warehouse URL. Default: $EVALOPS_WAREHOUSE_URL, else the Airflow connection evalops_warehouse, "
    "else sqlite:///.evalops/warehouse.db.",
)


def _project_url(url: str | None, project: Path | None, required: bool) -> str | None:
    """``--url``, else the warehouse of the project (``--project`` or the one around the current folder)."""
    return _project_and_url(url, project, required)[1]


def _project_and_url(url: str | None, project: Path | None, required: bool) -> tuple[Path | None, str | None]:
    """``(project folder, URL)``: the project is None when ``--url`` (or no project) decided the warehouse."""
    from evalops.config import find_project

    if url is None and (project is not None or required or find_project() is not None):
        cfg = project_config(project)
        return cfg.home, warehouse_url_for(cfg)
    return None, url


def _looked_in(resolved: Any, home: Path | None, *, url: bool = True) -> str:
    """Where a command looked, for its errors: the warehouse (masked; ``url``) and the project it belongs to,
    or where its URL came from when no project was read."""
    where = f"the warehouse {resolved.masked()} " if url else ""
    if home is not None:
        return where + f"of the project {home}"
    label = f"{_SOURCES.get(resolved.source, resolved.source)}; no project here: pass --project DIR"
    return where + f"({label})" if url else label


_SOURCES = {"env": "from --url or EVALOPS_WAREHOUSE_URL", "airflow": "from the Airflow connection evalops_warehouse",
            "default": "the default under the current folder"}


@contextlib.contextmanager
def _naming(resolved: Any, home: Path | None) -> Iterator[None]:
    """A warehouse error (nothing found, no such run) names the warehouse and project it looked in: a
    command run from another folder otherwise exits 7 without saying where it looked."""
    try:
        yield
    except WarehouseError as exc:
        raise WarehouseError(f"{exc} (looked in {_looked_in(resolved, home)})") from None


def _read_only_url(url: str | None, project: Path | None = None, *, required: bool = True):
    """The warehouse of a command that only reads, resolved: a SQLite file that does not exist is an
    error (it is not created). Returns the resolved URL and the project folder (None when --url decided)."""
    home, given = _project_and_url(url, project, required=required)
    resolved = resolve_url(given)
    if resolved.url.startswith("sqlite:///"):
        database = resolved.parts().database
        if database and database != ":memory:" and not database.startswith("file:") and not os.path.exists(database):
            raise InputError(f"no warehouse at {database} ({_looked_in(resolved, home, url=False)}): nothing has been recorded "
                             "there yet; `evalops run` (or `evalops db upgrade`) creates it, or set --url / "
                             "EVALOPS_WAREHOUSE_URL")
    return resolved, home


def _read_only_engine(url: str | None, project: Path | None = None, *, required: bool = True):
    """:func:`_read_only_url` and an engine on it: the engine, the resolved URL and the project folder."""
    resolved, home = _read_only_url(url, project, required=required)
    return create_warehouse_engine(resolved), resolved, home


@contextlib.contextmanager
def _engine(url: str | None, project: Path | None = None) -> Iterator[tuple[Engine, Any]]:
    """An engine on the warehouse and its resolved URL, disposed when the block ends."""
    resolved = resolve_url(_project_url(url, project, required=False))
    engine = create_warehouse_engine(resolved)
    try:
        yield engine, resolved
    finally:
        engine.dispose()


@click.group()
def db() -> None:
    """Create, upgrade and inspect the metrics warehouse schema."""


@db.command()
@URL_OPTION
@click.option("--revision", default="head", show_default=True, help="Alembic revision to upgrade to.")
@click.option("--sql", "as_sql", is_flag=True,
              help="Print the SQL of the upgrade instead of running it (nothing is executed or connected to).")
@click.option("--from", "from_revision", default=None,
              help="With --sql: the revision the database is at (default: an empty database).")
@reports_errors
def upgrade(url: str | None, revision: str, as_sql: bool, from_revision: str | None) -> None:
    """Apply the warehouse migrations (safe to run again; it is what the DAG's first task does)."""
    from evalops.warehouse.migrate import current_revision, upgrade as upgrade_schema, upgrade_sql

    if as_sql:
        click.echo(upgrade_sql(resolve_url(url).url, revision, start=from_revision), nl=False)
        return
    if from_revision is not None:
        raise InputError("--from only applies with --sql (a live upgrade starts from the database's revision)")
    with _engine(url) as (engine, resolved):
        before = current_revision(engine)
        upgrade_schema(engine, revision)
        after = current_revision(engine)
    change = "already at" if before == after else f"{before or 'empty'} ->"
    click.echo(f"warehouse {resolved.masked()} ({resolved.source}): {change} {after}")


@db.command()
@URL_OPTION
@FORMAT_OPTION
@reports_errors
def current(url: str | None, fmt: str, output_path: Any) -> None:
    """Show which warehouse is used, where that came from, and its schema revision."""
    from evalops.warehouse.migrate import current_revision, head_revisions

    with _engine(url) as (engine, resolved):
        revision = current_revision(engine)
    heads = head_revisions()
    info = {
        "url": resolved.masked(),
        "source": resolved.source,
        "revision": revision,
        "head": heads[0] if len(heads) == 1 else list(heads),
        "up_to_date": revision in heads,
    }
    lines = [f"{key}: {value}" for key, value in info.items()]
    emit(Output(data=info, columns=("key", "value"), rows=[{"key": k, "value": v} for k, v in info.items()],
                draw=lambda console: [console.print(line, highlight=False, markup=False) for line in lines]),
         fmt, output_path)


@db.command()
@URL_OPTION
@click.argument("revision")
@click.option("--yes", is_flag=True, help="Do not ask for confirmation.")
@reports_errors
def downgrade(url: str | None, revision: str, yes: bool) -> None:
    """Step the schema back to REVISION ("base" drops every warehouse table and its data)."""
    from evalops.warehouse.migrate import downgrade as downgrade_schema

    with _engine(url) as (engine, resolved):
        if not yes:
            click.confirm(f"downgrade {resolved.masked()} to {revision}? Data in dropped tables is lost", abort=True)
        downgrade_schema(engine, revision)
    click.echo(f"warehouse {resolved.masked()}: downgraded to {revision}")


@db.command("history")
@URL_OPTION
@FORMAT_OPTION
@reports_errors
def migration_history(url: str | None, fmt: str, output_path: Any) -> None:
    """List the schema revisions, newest first, marking the head and the warehouse's current one."""
    from evalops.warehouse.migrate import migration_history as revisions

    with _engine(url) as (engine, _):
        found = revisions(engine)
    lines = []
    for r in found:
        marks = ", ".join(m for m, on in (("head", r["is_head"]), ("current", r["is_current"])) if on)
        lines.append(f"{r['down_revision'] or '<base>'} -> {r['revision']}{f' ({marks})' if marks else ''}, "
                     f"{r['message']}")
    emit(Output(data=found, columns=("revision", "down_revision", "message", "is_head", "is_current"), rows=found,
                draw=lambda console: [console.print(line, highlight=False, markup=False) for line in lines]),
         fmt, output_path)


@db.command()
@URL_OPTION
@click.argument("revision")
@reports_errors
def stamp(url: str | None, revision: str) -> None:
    """Record REVISION as the warehouse's schema revision without running migrations (for a schema
    created or repaired by hand; "base" clears it)."""
    from evalops.warehouse.migrate import current_revision, stamp as stamp_schema

    with _engine(url) as (engine, resolved):
        stamp_schema(engine, revision)
        after = current_revision(engine)
    click.echo(f"warehouse {resolved.masked()}: stamped at {after or 'base'}")


@click.command()
@click.argument("retriever", required=False)
@click.option("-m", "--measure", help="Show this measure over time (mean and CI per run and version).")
@click.option("--version", "versions", multiple=True, help="Only these retriever versions (repeatable).")
@click.option("--dataset", default="gold", show_default=True, help="gold, production, ...")
@click.option("--since", type=click.DateTime(), help="Only runs with a logical date on or after this (UTC).")
@click.option("--fingerprint", "fingerprint_hash", help="Only runs under this fingerprint hash.")
@click.option("--baselines", is_flag=True, help="Show the promotion and rollback history instead.")
@click.option("--superseded", "include_superseded", is_flag=True,
              help="With --measure: also the earlier results of a version for a logical date that a later run "
                   "replaced (marked superseded).")
@URL_OPTION
@PROJECT_OPTION
@FORMAT_OPTION
@reports_errors
def history(
    retriever: str | None,
    measure: str | None,
    versions: tuple[str, ...],
    dataset: str,
    since: dt.datetime | None,
    fingerprint_hash: str | None,
    baselines: bool,
    include_superseded: bool,
    url: str | None,
    project: Path | None,
    fmt: str,
    output_path: Any,
) -> None:
    """Metrics history from the warehouse (read only: it never creates a warehouse).

    Without --measure: the latest run of every retriever version, with each measure's mean. With
    --measure: that measure over time (of RETRIEVER, or of every retriever when none is named), one result
    per version and logical date (the latest run for that date; --superseded adds the earlier ones). With
    --baselines: who promoted or rolled back which baseline, when and why.

    Failed and partial runs are listed with their status (a failed run's measure cells are empty). A
    retriever, dataset, version or measure the warehouse holds no run of is an error naming the stored ones,
    and so is an option that does not apply to the view asked for (--since and --superseded go with
    --measure), rather than being ignored.
    """
    _refuse_ignored(measure, versions, since, baselines, include_superseded)
    since_utc = since.replace(tzinfo=dt.UTC) if since is not None else None
    asked = measure
    if measure:  # stored under its canonical name (MRR@10 is RR@10), shown as asked
        from evalops.metrics import parse_measure

        try:
            measure = str(parse_measure(measure))
        except MeasureError:
            pass  # not a measure name: the check below names the stored ones
    if not baselines:
        resolved, home = _read_only_url(url, project)
        if direct.supports(resolved):  # the runs and measure views on the driver alone: no SQLAlchemy, no models
            _history_direct(resolved, home, retriever, measure, asked, dataset, versions, fingerprint_hash,
                            since_utc, include_superseded, fmt, output_path)
            return
    from evalops.warehouse import catalog, history as history_reads

    engine, resolved, home = _read_only_engine(url, project)
    extra: list[str] = []  # the runs view's measure columns
    try:
        with _naming(resolved, home):
            if fingerprint_hash:
                fingerprint_hash = catalog.find_fingerprint_hash(engine, fingerprint_hash)
            if baselines:
                from evalops.warehouse.baselines import (
                    BASELINE_COLUMNS,
                    baseline_history_rows,
                )

                view = "baselines"
                history_reads.check_history_query(engine, retriever=retriever)
                rows = baseline_history_rows(engine, retriever, fingerprint_hash)
                columns: tuple[str, ...] = BASELINE_COLUMNS
            else:
                if measure:
                    view = "measure"
                    columns = HISTORY_COLUMNS
                    rows = _measure_view(history_reads, engine, retriever, measure, asked, dataset, versions,
                                         fingerprint_hash, since_utc, include_superseded)
                else:
                    view = "runs"
                    columns = RUN_COLUMNS
                    rows, extra = _runs_view(history_reads, engine, retriever, dataset, versions, fingerprint_hash)
    finally:
        engine.dispose()
    _emit(rows, columns, fmt, view, output_path, extra=extra,
          empty=_empty(view, asked, retriever, dataset, versions, since_utc, fingerprint_hash, baselines))


def _empty(view: str, asked: str | None, retriever: str | None, dataset: str, versions: tuple[str, ...],
           since_utc: dt.datetime | None, fingerprint_hash: str | None, baselines: bool) -> str:
    """What an empty history says: nothing of the view, under the filters given."""
    filters = [f"of {retriever}" if retriever else "", "" if baselines else f"on dataset {dataset}",
               f"of version(s) {', '.join(versions)}" if versions and not baselines else "",
               f"since {since_utc:%Y-%m-%d %H:%M} UTC" if since_utc and view == "measure" else "",
               f"under fingerprint {fingerprint_hash[:12]}" if fingerprint_hash else ""]
    what = {"runs": "no finished runs", "measure": f"no {asked} results", "baselines": "no promotions"}[view]
    return f"({' '.join([what, *filter(None, filters)])})"


def _history_direct(resolved: Any, home: Any, retriever: str | None, measure: str | None, asked: str | None,
                    dataset: str, versions: tuple[str, ...], fingerprint_hash: str | None,
                    since_utc: dt.datetime | None, include_superseded: bool, fmt: str, output_path: Any) -> None:
    """The runs and measure views read on the driver alone (:mod:`evalops.warehouse.direct`), as the
    SQLAlchemy path of :func:`history` reads them."""
    with _naming(resolved, home), direct.reading(resolved) as reader:
        if fingerprint_hash:
            fingerprint_hash = direct.find_fingerprint_hash(reader, fingerprint_hash)
        means: list[str] = []  # the runs view's measure columns
        if measure:
            found = _measure_view(direct, reader, retriever, measure, asked, dataset, versions,
                                  fingerprint_hash, since_utc, include_superseded)
        else:
            found, means = _runs_view(direct, reader, retriever, dataset, versions, fingerprint_hash)
    view = "measure" if measure else "runs"
    _emit(found, HISTORY_COLUMNS if measure else RUN_COLUMNS, fmt, view, output_path, extra=means,
          empty=_empty(view, asked, retriever, dataset, versions, since_utc, fingerprint_hash, False))


def _refuse_ignored(measure: str | None, versions: tuple[str, ...], since: dt.datetime | None, baselines: bool,
                    include_superseded: bool) -> None:
    """An option that does not apply to the view asked for is an error (--since and --superseded go with
    --measure; --measure and --version do not go with --baselines), rather than being ignored."""
    ignored = [name for name, given in (("--since", since is not None), ("--superseded", include_superseded))
               if given and (baselines or not measure)]
    if baselines:
        ignored += [name for name, given in (("--measure", bool(measure)), ("--version", bool(versions))) if given]
    if ignored:
        shown, them = " and ".join(ignored), "it" if len(ignored) == 1 else "them"
        if baselines:
            raise InputError(f"{shown} {'does' if them == 'it' else 'do'} not apply to --baselines (the promotion "
                             f"history); drop {them}, or drop --baselines")
        raise InputError(f"{shown} {'does' if them == 'it' else 'do'} not apply to the runs view (the latest run of "
                         f"each version); use {them} with --measure, e.g. "
                         "`evalops history bm25 -m nDCG@10 --since 2024-06-01`")


def _measure_view(reads: Any, source: Any, retriever: str | None, measure: str, asked: str | None, dataset: str,
                  versions: tuple[str, ...], fingerprint_hash: str | None, since_utc: dt.datetime | None,
                  include_superseded: bool) -> list[dict[str, Any]]:
    """The measure view (one result per version and logical date, of RETRIEVER or of every retriever with a
    run on the dataset) through ``reads``, as :func:`_runs_view`; the measure shown as ``asked``."""
    reads.check_history_query(source, retriever=retriever, dataset=dataset, versions=versions, measure=measure)
    names = [retriever] if retriever else sorted({r["retriever"] for r in reads.latest_run_rows(
        source, dataset=dataset, statuses=FINISHED_STATUSES)})
    rows = [row for name in names for row in reads.measure_history_rows(
        source, name, measure, dataset=dataset, versions=versions or None, fingerprint_hash=fingerprint_hash,
        since=since_utc, statuses=FINISHED_STATUSES, include_superseded=include_superseded)]
    if len(names) > 1:
        rows.sort(key=lambda r: (r["logical_date"], r["retriever"], r["version"]))
    for row in rows:
        row["measure"] = asked
    return rows


def _runs_view(reads: Any, source: Any, retriever: str | None, dataset: str, versions: tuple[str, ...],
               fingerprint_hash: str | None) -> tuple[list[dict[str, Any]], list[str]]:
    """The runs view (the latest finished run of each version, with its means) through ``reads``: the
    SQLAlchemy readers (:mod:`evalops.warehouse.history`, ``source`` an engine) or the driver's
    (:mod:`evalops.warehouse.direct`, ``source`` a reader), which give the same rows."""
    reads.check_history_query(source, retriever=retriever, dataset=dataset, versions=versions)
    rows = reads.latest_run_rows(source, retriever=retriever, dataset=dataset, fingerprint_hash=fingerprint_hash,
                                 statuses=FINISHED_STATUSES)
    if versions:
        rows = [r for r in rows if r["version"] in versions]
    return _with_means(reads.run_mean_rows(source, [int(r["run_id"]) for r in rows]), rows)


def _with_means(means: dict[int, dict[str, float | None]],
                rows: list[dict[str, Any]]) -> tuple[list[dict[str, Any]], list[str]]:
    """The runs with each run's mean of every measure it scored (one column per measure, in the order
    first seen; the Judged@k coverage measures left to the report), and those columns' names."""
    means = {run: {m: v for m, v in row.items() if not m.startswith("Judged@")} for run, row in means.items()}
    names = list(dict.fromkeys(m for row in means.values() for m in row))
    return [{**r, **{name: means.get(int(r["run_id"]), {}).get(name) for name in names}} for r in rows], names


@click.command()
@click.argument("retriever")
@click.argument("version", required=False)
@click.option("--reason", required=True, help="Why (recorded with the promotion).")
@click.option("--by", "who", default=None, help="Who (recorded). Default: the current OS user.")
@click.option("--run-id", type=click.IntRange(1, 2**31 - 1),  # eval_runs.id: an INTEGER on PostgreSQL
              help="Promote this run instead of the latest succeeded gold run of VERSION.")
@click.option("--fingerprint", "fingerprint_hash", help="Pick the run under this fingerprint hash.")
@click.option("--rollback", is_flag=True, help="Restore the baseline the current one replaced.")
@URL_OPTION
@PROJECT_OPTION
@FORMAT_OPTION
@reports_errors
def promote(
    retriever: str,
    version: str | None,
    reason: str,
    who: str | None,
    run_id: int | None,
    fingerprint_hash: str | None,
    rollback: bool,
    url: str | None,
    project: Path | None,
    fmt: str,
    output_path: Any,
) -> None:
    """Make a run the baseline of RETRIEVER (or roll the baseline back with --rollback).

    By default the latest succeeded gold-set run of VERSION is promoted (under --fingerprint when given).
    A rollback needs --fingerprint, because baselines are kept per fingerprint.
    """
    from evalops.warehouse.baselines import promote_baseline, rollback_baseline
    from evalops.warehouse.catalog import find_fingerprint_hash
    from evalops.warehouse.history import latest_runs
    from evalops.warehouse.runs import get_run

    who = who or getpass.getuser()
    # a promotion needs a stored run: a warehouse that does not exist is not created (in whatever folder)
    engine, resolved, home = _read_only_engine(url, project, required=False)
    started = utc.now()
    try:
        with _naming(resolved, home):
            if rollback:
                if not fingerprint_hash:
                    raise InputError("--rollback needs --fingerprint HASH (see `evalops history RETRIEVER --baselines`)")
                baseline = rollback_baseline(engine, retriever, find_fingerprint_hash(engine, fingerprint_hash), by=who, reason=reason)
            else:
                if run_id is None:
                    if not version:
                        raise InputError("give a VERSION to promote, or --run-id")
                    latest = latest_runs(
                        engine,
                        retriever=retriever,
                        fingerprint_hash=find_fingerprint_hash(engine, fingerprint_hash) if fingerprint_hash else None,
                        statuses=("succeeded",),
                    )
                    latest = latest[latest["version"] == version]
                    if latest.empty:
                        raise WarehouseError(f"{retriever}@{version} has no succeeded gold-set run to promote")
                    run_id = int(latest["run_id"].iloc[0])
                elif version and get_run(engine, run_id).version != version:
                    raise InputError(f"run {run_id} is not a run of version {version!r}")
                baseline = promote_baseline(engine, run_id, by=who, reason=reason, at=started)
    finally:
        engine.dispose()
    record = {k: _plain(v) for k, v in dataclasses.asdict(baseline).items()}
    # promoting the run that already is the baseline changes nothing (the warehouse keeps the row it had)
    unchanged = not rollback and as_utc(baseline.promoted_at) < started - dt.timedelta(milliseconds=1)
    record["changed"] = not unchanged
    line = (f"{baseline.retriever}: baseline is now {baseline.version} (run {baseline.run_id}, fingerprint "
            f"{baseline.fingerprint_hash[:12]}), {_DONE.get(baseline.action, baseline.action)} by {baseline.promoted_by}: "
            f"{baseline.reason}")
    if unchanged:
        line = (f"{baseline.retriever}: {baseline.version} (run {baseline.run_id}, fingerprint "
                f"{baseline.fingerprint_hash[:12]}) already is the baseline, {_DONE.get(baseline.action, baseline.action)} "
                f"by {baseline.promoted_by} at {as_utc(baseline.promoted_at):%Y-%m-%d %H:%M} UTC: {baseline.reason}; "
                "nothing changed (the reason given now is not recorded)")
    emit(Output(data=record, columns=tuple(record), rows=[record],
                draw=lambda console: console.print(line, highlight=False, markup=False)), fmt, output_path)


_DONE = {"promote": "promoted", "rollback": "rolled back"}  # a baseline action as the line reports it


def _plain(value: Any) -> Any:
    if isinstance(value, (dt.datetime, dt.date)):
        return value.isoformat()
    if hasattr(value, "item"):
        return value.item()
    return value


# The columns a person reads in a terminal; json and csv always carry every column.
TABLE_COLUMNS = {
    "runs": ("run_id", "retriever", "version", "dataset", "logical_date", "status", "fingerprint_hash",
             "n_queries", "n_failed"),
    "measure": ("logical_date", "retriever", "version", "run_id", "status", "fingerprint_hash", "measure", "n",
                "mean", "ci_low", "ci_high", "superseded_by"),
    "baselines": ("id", "retriever", "version", "run_id", "fingerprint_hash", "action", "is_current",
                  "promoted_by", "promoted_at", "reason"),
}


def _emit(rows: list[dict[str, Any]], columns: Sequence[str], fmt: str, view: str, output_path: Any = None,
          empty: str = "(no rows)", extra: Sequence[str] = ()) -> None:
    columns = (*columns, *extra)
    drawn = fmt in ("table", "markdown")  # cells through _cell: the JSON records are not made (a year is 1,825 rows)
    records = [] if drawn else [{c: _json_value(row[c]) for c in columns} for row in rows]
    emit(Output(data=records, columns=tuple(columns), rows=rows if drawn else records,
                table_columns=(*TABLE_COLUMNS[view], *extra), cell=_cell, empty=empty), fmt, output_path)


def _json_value(value: Any) -> Any:
    """A cell for JSON and CSV: datetimes in ISO-8601 UTC to the second (``2024-05-01T00:00:00Z``), NaN empty."""
    if isinstance(value, dt.datetime):
        return value.astimezone(dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    if isinstance(value, float) and value != value:
        return None
    return value


def _cell(column: str, value: Any) -> str:
    if value is None or (isinstance(value, float) and value != value):
        return ""
    if column == "fingerprint_hash":
        return str(value)[:12]
    if isinstance(value, dt.datetime):
        return value.astimezone(dt.UTC).strftime("%Y-%m-%d %H:%M")
    if isinstance(value, float):
        return f"{value:.4f}"
    return str(value)
