"""What the dashboard reads (and the two small facts it needs the pipeline to write).

The reads return plain lists of dicts, cheap to build for a page: a year of daily runs of ten versions is
tens of thousands of rows, and a DataFrame per request would cost more than the query. Datetimes are
timezone-aware UTC. Columns that other parts of the schema may add later (on ``ab_tests`` for one) are read
from the row when present and are ``None`` otherwise.

Writes:

* ``record_query_texts``: the text of each scored query once per query set version, so the A/B page can
  show the worst queries' text (production text arrives PII-scrubbed; it is untrusted);
  ``stored_query_text_ids`` says which are stored already, so a writer prepares only the others.
* ``record_run_timing``: a run's retrieval latency percentiles and failure count.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from sqlalchemy import Table, func, select

from evalops.errors import InputError
from evalops.util.utc import as_utc
from evalops.warehouse._bulk import fetch_scores
from evalops.warehouse._db import insert_for, measures_table, now_utc, transaction
from evalops.warehouse.abtests import ab_test_of, ab_test_view
from evalops.warehouse.alerts import alert_deliveries
from evalops.warehouse.statuses import FINISHED_STATUSES
from evalops.warehouse.tables import ab_tests, aggregates, alerts, baselines, fingerprints, runs, texts, timings

if TYPE_CHECKING:  # pragma: no cover
    from sqlalchemy.engine import Connection, Engine

__all__ = [
    "dashboard_ab_detail",
    "dashboard_ab_state",
    "dashboard_aggregates",
    "dashboard_alerts",
    "dashboard_comparisons",
    "dashboard_latest_runs",
    "dashboard_measures",
    "dashboard_promotions",
    "dashboard_runs",
    "dashboard_timings",
    "dashboard_trend",
    "dashboard_version",
    "record_query_texts",
    "record_run_timing",
    "stored_query_text_ids",
]


_RUN_COLUMNS = (runs.c.id.label("run_id"), runs.c.dag_id, runs.c.dag_run_id, runs.c.retriever, runs.c.version,
                runs.c.dataset, runs.c.logical_date, runs.c.status, runs.c.started_at, runs.c.finished_at,
                runs.c.fingerprint_hash, runs.c.n_queries, runs.c.n_failed, runs.c.error,
                fingerprints.c.gold_set_version, fingerprints.c.kb_snapshot_id)


def record_query_texts(engine: Engine, query_set_version: str, query_texts: Mapping[str, str]) -> int:
    """Store each query's text under its query set version (kept if already stored); returns rows offered."""
    if not query_set_version:
        raise InputError("query texts need the query set version they belong to")
    rows = [(query_set_version, str(q), str(t)) for q, t in sorted(query_texts.items())]
    if not rows:
        return 0
    with transaction(engine, f"recording the query texts of {query_set_version}") as conn:
        if conn.dialect.name == "postgresql":
            _copy_query_texts(conn, rows)
        else:
            stmt = insert_for(conn, texts).on_conflict_do_nothing(index_elements=["query_set_version", "query_id"])
            conn.execute(stmt, [dict(zip(("query_set_version", "query_id", "text"), row)) for row in rows])
    return len(rows)


def _copy_query_texts(conn: Connection, rows: list[tuple[str, str, str]]) -> None:
    """PostgreSQL: COPY into a transaction-scoped temporary table, then one INSERT ... ON CONFLICT DO NOTHING
    (COPY cannot skip the stored rows itself). 20,000 texts: about 0.02 s of CPU and 0.25-0.37 s of wall,
    against 0.3-0.4 s of CPU and 0.66-0.96 s for SQLAlchemy's batched INSERT (under a load average of 4)."""
    with conn.connection.driver_connection.cursor() as cursor:
        cursor.execute("CREATE TEMPORARY TABLE incoming_query_texts (query_set_version TEXT, query_id TEXT, "
                       "text TEXT) ON COMMIT DROP")
        with cursor.copy("COPY incoming_query_texts (query_set_version, query_id, text) FROM STDIN") as copy:
            for row in rows:
                copy.write_row(row)
        cursor.execute("INSERT INTO query_texts (query_set_version, query_id, text) "
                       "SELECT query_set_version, query_id, text FROM incoming_query_texts "
                       "ON CONFLICT (query_set_version, query_id) DO NOTHING")


def stored_query_text_ids(engine: Engine, query_set_version: str) -> set[str]:
    """The query ids whose text is stored under ``query_set_version`` (one indexed read)."""
    with engine.connect() as conn:
        return set(conn.execute(select(texts.c.query_id).where(texts.c.query_set_version == query_set_version))
                   .scalars())


def record_run_timing(
    engine: Engine,
    run_id: int,
    *,
    latency_p50_ms: float | None,
    latency_p95_ms: float | None,
    latency_max_ms: float | None = None,
    wall_seconds: float | None = None,
    n_failed: int = 0,
) -> None:
    """Upsert the run's latency percentiles (milliseconds) and failed-query count."""
    values = {"run_id": run_id, "latency_p50_ms": latency_p50_ms, "latency_p95_ms": latency_p95_ms,
              "latency_max_ms": latency_max_ms, "wall_seconds": wall_seconds, "n_failed": int(n_failed),
              "recorded_at": now_utc()}
    with transaction(engine, f"recording the timings of run {run_id}") as conn:
        stmt = insert_for(conn, timings).values(**values)
        conn.execute(stmt.on_conflict_do_update(index_elements=["run_id"],
                                                set_={k: v for k, v in values.items() if k != "run_id"}))


# What a trend needs of each run (a year of ten versions is 3,650 rows: every column read costs).
_SLIM_COLUMNS = (runs.c.id.label("run_id"), runs.c.version, runs.c.logical_date, runs.c.status, runs.c.n_queries,
                 runs.c.n_failed, fingerprints.c.gold_set_version, fingerprints.c.kb_snapshot_id)


def _run_select(*extra: Any, slim: bool = False) -> Any:
    return (select(*(_SLIM_COLUMNS if slim else _RUN_COLUMNS), *extra)
            .join(fingerprints, fingerprints.c.hash == runs.c.fingerprint_hash))


def _rows(conn: Connection, stmt: Any) -> list[dict[str, Any]]:
    result = conn.execute(stmt)
    keys = list(result.keys())
    return [dict(zip(keys, row)) for row in result.all()]  # one fetch from the driver, not one per row


def dashboard_latest_runs(engine: Engine) -> list[dict[str, Any]]:
    """The latest run (any status) of every (retriever, version, dataset), by logical date then id."""
    rank = func.row_number().over(
        partition_by=(runs.c.retriever, runs.c.version, runs.c.dataset),
        order_by=(runs.c.logical_date.desc(), runs.c.id.desc()),
    ).label("rank")
    inner = select(runs.c.id, rank).subquery()
    stmt = (_run_select().where(runs.c.id.in_(select(inner.c.id).where(inner.c.rank == 1)))
            .order_by(runs.c.retriever, runs.c.dataset, runs.c.version))
    with transaction(engine, "reading the latest runs", read_only=True) as conn:
        return _rows(conn, stmt)


def dashboard_measures(engine: Engine) -> dict[str, list[str]]:
    """Each retriever's measures, in the order of its newest fingerprint's measure list."""
    # one row per (retriever, fingerprint), newest first: a year of daily runs shares a handful of fingerprints
    rank = func.row_number().over(partition_by=(runs.c.retriever, runs.c.fingerprint_hash),
                                  order_by=(runs.c.logical_date.desc(), runs.c.id.desc())).label("rank")
    newest = select(runs.c.retriever, runs.c.fingerprint_hash, runs.c.logical_date, runs.c.id, rank).subquery()
    stmt = (select(newest.c.retriever, fingerprints.c.measures)
            .join(fingerprints, fingerprints.c.hash == newest.c.fingerprint_hash)
            .where(newest.c.rank == 1)
            .order_by(newest.c.retriever, newest.c.logical_date.desc(), newest.c.id.desc()))
    out: dict[str, list[str]] = {}
    with transaction(engine, "reading the measures", read_only=True) as conn:
        for retriever, measures in conn.execute(stmt).all():  # newest first; duplicates are dropped here
            known = out.setdefault(retriever, [])
            known += [m for m in measures if m not in known]
    return out


def dashboard_aggregates(engine: Engine, run_ids: Iterable[int]) -> dict[int, dict[str, dict[str, Any]]]:
    """``{run_id: {measure: {n, mean, ci_low, ci_high, ci_level}}}``."""
    ids = sorted(set(run_ids))
    out: dict[int, dict[str, dict[str, Any]]] = {i: {} for i in ids}
    if not ids:
        return out
    stmt = (select(aggregates.c.run_id, measures_table.c.name.label("measure"), aggregates.c.n, aggregates.c.mean,
                   aggregates.c.ci_low, aggregates.c.ci_high, aggregates.c.ci_level)
            .join(measures_table, measures_table.c.id == aggregates.c.measure_id)
            .where(aggregates.c.run_id.in_(ids)))
    with transaction(engine, "reading run aggregates", read_only=True) as conn:
        for row in _rows(conn, stmt):
            out[row.pop("run_id")][row.pop("measure")] = row
    return out


def _ab_select() -> Any:
    base = runs.alias("base")
    return (select(ab_tests, measures_table.c.name.label("measure"), base.c.version.label("baseline_version"),
                   base.c.logical_date.label("baseline_logical_date"))
            .join(measures_table, measures_table.c.id == ab_tests.c.measure_id)
            .join(base, base.c.id == ab_tests.c.baseline_run_id))


def _ab_rows(conn: Connection, stmt: Any) -> list[dict[str, Any]]:
    """The rows of an ``_ab_select``: each stored comparison read back from its record (``ab_test_of``) in the
    flat view the pages read (``ab_test_view``), with the row's measure, id, time and baseline."""
    return [{**row, **ab_test_view(ab_test_of(row))} for row in _rows(conn, stmt)]


def dashboard_comparisons(engine: Engine, candidate_run_ids: Iterable[int]) -> dict[int, list[dict[str, Any]]]:
    """The stored comparisons of each candidate run on the fingerprint's labels (none on a judge's), newest
    baseline first, one per measure."""
    ids = sorted(set(candidate_run_ids))
    out: dict[int, list[dict[str, Any]]] = {i: [] for i in ids}
    if not ids:
        return out
    stmt = (_ab_select().where(ab_tests.c.candidate_run_id.in_(ids), ab_tests.c.judge_run_id.is_(None))
            .order_by(ab_tests.c.id.desc()))
    with transaction(engine, "reading comparisons", read_only=True) as conn:
        for row in _ab_rows(conn, stmt):
            out[row["candidate_run_id"]].append(row)
    return out


def _last_days(conn: Connection, stmt: Any, days: int | None) -> Any:
    """``stmt`` cut to the ``days`` before its own newest row's logical date (all of it for 0 or None)."""
    if not days:
        return stmt
    newest = conn.execute(select(func.max(stmt.order_by(None).subquery().c.logical_date))).scalar()
    if newest is None:
        return stmt
    newest = newest.replace(tzinfo=dt.UTC) if newest.tzinfo is None else newest  # SQLite's max() is naive
    return stmt.where(runs.c.logical_date >= newest - dt.timedelta(days=days))


def dashboard_trend(
    engine: Engine, retriever: str, measure: str, *, dataset: str = "gold", since: dt.datetime | None = None,
    days: int | None = None,
) -> list[dict[str, Any]]:
    """One row per scored run of ``retriever`` on ``dataset``: the measure's mean and interval, the run's
    fingerprint parts, and the id of the run's comparison on this measure (if any), oldest first. ``days``:
    only the rows of the ``days`` before the newest one's logical date (the trend page's range), read as such
    rather than cut from a year."""
    # The run's newest comparison on the measure, looked up per run through the (candidate, baseline, measure)
    # index: a grouped subquery over all comparisons was re-aggregated once per run by PostgreSQL when its
    # statistics were stale (1,200 runs of 120 days: 1.3 s instead of a few ms).
    newest = ab_tests.alias("newest_ab")
    newest_id = (select(func.max(newest.c.id))
                 .where(newest.c.candidate_run_id == runs.c.id, newest.c.measure_id == aggregates.c.measure_id,
                        newest.c.judge_run_id.is_(None))
                 .correlate(runs, aggregates).scalar_subquery())
    stmt = (_run_select(aggregates.c.n, aggregates.c.mean, aggregates.c.ci_low, aggregates.c.ci_high,
                        ab_tests.c.id.label("ab_id"), ab_tests.c.decision, slim=True)
            .join(aggregates, aggregates.c.run_id == runs.c.id)
            .join(measures_table, measures_table.c.id == aggregates.c.measure_id)
            .outerjoin(ab_tests, ab_tests.c.id == newest_id)
            .where(runs.c.retriever == retriever, runs.c.dataset == dataset, measures_table.c.name == measure,
                   runs.c.status.in_(("succeeded", "partial")))
            .order_by(runs.c.logical_date, runs.c.version, runs.c.id))
    if since is not None:
        stmt = stmt.where(runs.c.logical_date >= as_utc(since))
    with transaction(engine, f"reading the {measure} trend of {retriever}", read_only=True) as conn:
        return _rows(conn, _last_days(conn, stmt, days))


def dashboard_timings(
    engine: Engine, retriever: str, *, dataset: str = "gold", since: dt.datetime | None = None,
    days: int | None = None,
) -> list[dict[str, Any]]:
    """Latency percentiles and failure counts of every run with recorded timings, oldest first (``days`` as
    in :func:`dashboard_trend`)."""
    stmt = (_run_select(timings.c.latency_p50_ms, timings.c.latency_p95_ms, timings.c.latency_max_ms,
                        timings.c.wall_seconds, timings.c.n_failed.label("timing_failed"), slim=True)
            .join(timings, timings.c.run_id == runs.c.id)
            .where(runs.c.retriever == retriever, runs.c.dataset == dataset)
            .order_by(runs.c.logical_date, runs.c.version, runs.c.id))
    if since is not None:
        stmt = stmt.where(runs.c.logical_date >= as_utc(since))
    with transaction(engine, f"reading the timings of {retriever}", read_only=True) as conn:
        return _rows(conn, _last_days(conn, stmt, days))


def dashboard_promotions(engine: Engine, retriever: str | None = None) -> list[dict[str, Any]]:
    """Every promotion and rollback with the promoted run's version and logical date, oldest first."""
    stmt = (select(baselines, runs.c.version, runs.c.logical_date, runs.c.dataset)
            .join(runs, runs.c.id == baselines.c.run_id).order_by(baselines.c.promoted_at, baselines.c.id))
    if retriever is not None:
        stmt = stmt.where(baselines.c.retriever == retriever)
    with transaction(engine, "reading the baseline history", read_only=True) as conn:
        return _rows(conn, stmt)


def dashboard_alerts(
    engine: Engine,
    *,
    retriever: str | None = None,
    kind: str | None = None,
    severity: str | None = None,
    delivery_status: str | None = None,
    since: dt.date | None = None,
    limit: int | None = 500,
) -> list[dict[str, Any]]:
    """Stored alerts, newest first, with the logical date of the run they name (when they name one) and
    their per-notifier deliveries (``notifiers``, :func:`evalops.warehouse.alerts.alert_deliveries`)."""
    stmt = (select(alerts, runs.c.logical_date, runs.c.dataset).outerjoin(runs, runs.c.id == alerts.c.run_id)
            .order_by(alerts.c.day.desc(), alerts.c.id.desc()))
    for column, value in (("retriever", retriever), ("kind", kind), ("severity", severity),
                          ("delivery_status", delivery_status)):
        if value:
            stmt = stmt.where(alerts.c[column] == value)
    if since is not None:
        stmt = stmt.where(alerts.c.day >= since)
    if limit is not None:
        stmt = stmt.limit(limit)
    with transaction(engine, "reading alerts", read_only=True) as conn:
        found = _rows(conn, stmt)
    per_notifier = alert_deliveries(engine, [row["id"] for row in found])
    for row in found:  # which notifiers had it: the log alone told nobody
        row["notifiers"] = per_notifier.get(row["id"], {})
    return found


def dashboard_runs(
    engine: Engine,
    *,
    retriever: str | None = None,
    version: str | None = None,
    dataset: str | None = None,
    status: str | None = None,
    statuses: Sequence[str] | None = None,
    limit: int | None = 500,
) -> list[dict[str, Any]]:
    """Runs, newest first, with their timings when recorded."""
    stmt = (_run_select(timings.c.latency_p50_ms, timings.c.latency_p95_ms)
            .outerjoin(timings, timings.c.run_id == runs.c.id)
            .order_by(runs.c.logical_date.desc(), runs.c.id.desc()))
    for column, value in (("retriever", retriever), ("version", version), ("dataset", dataset),
                          ("status", status)):
        if value:
            stmt = stmt.where(runs.c[column] == value)
    if statuses:
        stmt = stmt.where(runs.c.status.in_(list(statuses)))
    if limit is not None:
        stmt = stmt.limit(limit)
    with transaction(engine, "reading runs", read_only=True) as conn:
        return _rows(conn, stmt)


def dashboard_ab_detail(engine: Engine, ab_id: int) -> dict[str, Any] | None:
    """One comparison with both runs, the paired per-query values (with the query text when stored) and
    the comparison's fingerprint; ``None`` when there is no such comparison."""
    with transaction(engine, f"reading comparison {ab_id}", read_only=True) as conn:
        found = _ab_rows(conn, _ab_select().where(ab_tests.c.id == ab_id))
        if not found:
            return None
        ab = found[0]
        run_rows = {r["run_id"]: r for r in _rows(conn, _run_select().where(
            runs.c.id.in_((ab["baseline_run_id"], ab["candidate_run_id"]))))}
        candidate = run_rows[ab["candidate_run_id"]]
        fingerprint = _rows(conn, select(fingerprints).where(fingerprints.c.hash == candidate["fingerprint_hash"]))[0]
        per_run: dict[int, dict[str, float | None]] = {}
        for run_id in (ab["baseline_run_id"], ab["candidate_run_id"]):
            # straight from the driver cursor: 10,000 queries a side are 20,000 rows per page
            _, query_ids, values = fetch_scores(conn, run_id, [ab["measure_id"]])
            per_run[run_id] = dict(zip(query_ids, values.tolist()))
        query_text = dict(conn.execute(select(texts.c.query_id, texts.c.text).where(
            texts.c.query_set_version == candidate["gold_set_version"])).all())
    base, cand = per_run[ab["baseline_run_id"]], per_run[ab["candidate_run_id"]]
    queries = [{"query_id": q, "baseline": base[q], "candidate": cand[q], "delta": _delta(base[q], cand[q]),
                "text": query_text.get(q)} for q in sorted(set(base) & set(cand))]
    return {"ab": ab, "baseline_run": run_rows[ab["baseline_run_id"]], "candidate_run": candidate,
            "fingerprint": fingerprint, "queries": queries}


def dashboard_ab_state(engine: Engine, ab_id: int) -> tuple[Any, ...] | None:
    """What one comparison's page is made from, in one small read: the comparison's ``created_at`` (a new
    decision rewrites it) and each run's id, status, ``updated_at`` and open attempt. ``None`` when there is
    no such comparison or a run has not finished (its page may change at any time)."""
    base, cand = runs.alias("base"), runs.alias("cand")
    stmt = (select(ab_tests.c.created_at, base.c.id, base.c.status, base.c.updated_at, base.c.attempt_started_at,
                   cand.c.id, cand.c.status, cand.c.updated_at, cand.c.attempt_started_at)
            .join(base, base.c.id == ab_tests.c.baseline_run_id)
            .join(cand, cand.c.id == ab_tests.c.candidate_run_id)
            .where(ab_tests.c.id == ab_id))
    with transaction(engine, f"reading the state of comparison {ab_id}", read_only=True) as conn:
        row = conn.execute(stmt).first()
    if row is None or row[2] not in FINISHED_STATUSES or row[6] not in FINISHED_STATUSES:
        return None
    return tuple(row)


def dashboard_version(engine: Engine) -> tuple[Any, ...]:
    """A token that changes whenever anything the dashboard's pages read changes, in one small read: each
    table's row count and newest write (runs by ``updated_at``, comparisons by ``created_at``, which a new
    decision rewrites, alerts by their delivery attempts, baselines by id: a promotion or rollback adds a
    row; aggregates, fingerprints and query texts are written with their run)."""
    def scalar(column: Any, table: Table) -> Any:
        return select(column).select_from(table).scalar_subquery()

    stmt = select(scalar(func.count(), runs), scalar(func.max(runs.c.updated_at), runs),
                  scalar(func.count(), ab_tests), scalar(func.max(ab_tests.c.created_at), ab_tests),
                  scalar(func.count(), alerts), scalar(func.sum(alerts.c.delivery_attempts), alerts),
                  scalar(func.max(baselines.c.id), baselines), scalar(func.count(), timings))
    with transaction(engine, "reading whether the warehouse changed", read_only=True) as conn:
        return tuple(conn.execute(stmt).one())


def _delta(baseline: float | None, candidate: float | None) -> float | None:
    if baseline is None or candidate is None or baseline != baseline or candidate != candidate:
        return None
    return candidate - baseline
