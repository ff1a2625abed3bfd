"""A/B test results: one row per (candidate run, baseline run, measure), upserted.

One table holds every comparison: those on the fingerprint's own labels (gold grades, click labels;
``judge_run_id`` NULL) and those on a judge step's LLM-judge labels (``judge:`` measures, ``judge_run_id``
naming the judge run, :func:`record_judge_ab_tests`, :func:`judge_ab_tests`). The readers of the former
(:func:`ab_test_results`, :func:`load_ab_tests`, :func:`comparison_look`) never see the latter: the two
kinds of label are never decided, pooled or compared together."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any

from sqlalchemy import select

from evalops.errors import InputError, WarehouseError
from evalops.stats.compare import RECORD_FIELDS, Comparison
from evalops.warehouse._bulk import run_fingerprint
from evalops.warehouse._db import insert_for, measure_ids, measures_table, now_utc, transaction
from evalops.warehouse.domain import ABTestResult
from evalops.warehouse.tables import ab_tests, runs

if TYPE_CHECKING:  # pragma: no cover
    import pandas as pd
    from sqlalchemy.engine import Connection, Engine

__all__ = ["JUDGE_MEASURE_PREFIX", "ab_test_columns", "ab_test_of", "ab_test_results", "ab_test_view",
           "comparison_look", "judge_ab_tests", "load_ab_tests", "record_ab_tests", "record_judge_ab_tests"]

#: The prefix of a measure on judge labels (``judge:nDCG@10``): only a judge run's comparisons have one.
JUDGE_MEASURE_PREFIX = "judge:"

# the dashboard's flat view of a comparison: these fields under their own names (see ab_test_view)
_SAME_NAME = ("n", "baseline_mean", "candidate_mean", "delta", "delta_ci_low", "delta_ci_high", "test", "p_value",
              "p_adjusted", "wins", "ties", "losses", "decision", "severity", "criterion", "reason_code", "margin",
              "interval_low", "interval_high", "interval_level", "family_size", "judged_coverage")


def ab_test_columns(result: ABTestResult) -> dict[str, Any]:
    """The one mapper from a stored A/B test to its ``ab_tests`` columns (but the measure's id and the time):
    the comparison's JSON record without the per-query deltas (``record``, what the readers read back), the
    two columns SQL reads (``decision``, ``policy``), the runs, the family, the segments and the judge run
    whose labels it is on (``None``: the fingerprint's own)."""
    record: dict[str, Any] = {k: v for k, v in result.comparison.to_record().items() if k != "deltas"}
    return {"baseline_run_id": result.baseline_run_id, "candidate_run_id": result.candidate_run_id,
            "decision": record["decision"], "policy": record["policy"], "family": result.family,
            "segments": list(result.segments), "record": record, "judge_run_id": result.judge_run_id}


def ab_test_view(result: ABTestResult) -> dict[str, Any]:
    """A stored A/B test as the dashboard's pages read it: its comparison's fields under the names the
    ``ab_tests`` columns had (``d_z`` for ``effect_size_dz``, its interval as ``d_z_ci_low``/``high``, the
    reported interval's ``ci_level``, the holes-relevant bound ``delta_holes_relevant``), ``None`` for
    undefined values, with the runs, the family, the segments and the record."""
    record: dict[str, Any] = {k: v for k, v in result.comparison.to_record().items() if k != "deltas"}
    ci = record["effect_size_ci"] or (None, None)
    return {
        **{name: record[name] for name in _SAME_NAME},
        "ci_level": result.comparison.policy.confidence, "d_z": record["effect_size_dz"], "d_z_ci_low": ci[0],
        "d_z_ci_high": ci[1], "reasons": [str(r) for r in record["reasons"]],
        "delta_holes_relevant": (record["judged_coverage"] or {}).get("holes_relevant_delta"),
        **ab_test_columns(result),
    }


def ab_test_of(row: Mapping[Any, Any]) -> ABTestResult:
    """The one place a stored ``ab_tests`` row becomes a domain object: its comparison read back from its
    ``record``."""
    return ABTestResult(comparison=Comparison.from_record(row["record"]), baseline_run_id=row["baseline_run_id"],
                        candidate_run_id=row["candidate_run_id"], family=row["family"],
                        segments=list(row["segments"] or []), id=row["id"], created_at=row["created_at"],
                        judge_run_id=row["judge_run_id"])


def record_ab_tests(engine: Engine, results: Iterable[ABTestResult]) -> list[ABTestResult]:
    """Store comparison results (all in one transaction); returns them with ``id`` and ``created_at``.

    Writing a result for the same (candidate run, baseline run, measure) again replaces it. Both runs must
    share a fingerprint and the measure must belong to it: the warehouse never stores a comparison across
    fingerprints. A comparison on judge labels (``judge_run_id`` set) has a ``judge:`` measure instead, and
    only it has one: the two kinds of label never share a row or a measure.
    """
    results = _checked(results)
    with transaction(engine, "recording A/B test results") as conn:
        return _store(conn, results)


def record_judge_ab_tests(engine: Engine | Connection, judge_run_id: int,
                          results: Iterable[ABTestResult]) -> list[ABTestResult]:
    """Store the comparisons of one judge run (each naming it) with :func:`record_ab_tests`'s writer, in one
    transaction that first deletes the run's comparisons no longer among ``results`` (a retried judge step
    replaces what its earlier attempt stored, and a re-run adds no rows). Given a ``Connection``, in its
    transaction: the judge step stores its run and the run's comparisons as one
    (:func:`evalops.warehouse.judgments.record_judge_run`)."""
    from sqlalchemy import delete

    results = _checked(results)
    foreign = [r for r in results if r.judge_run_id != judge_run_id]
    if foreign:
        raise InputError(f"{len(foreign)} comparison(s) do not name judge run {judge_run_id}")
    with transaction(engine, "recording judge-label A/B test results") as conn:
        ids = measure_ids(conn, [r.comparison.measure for r in results])
        keep = {(r.candidate_run_id, r.baseline_run_id, ids[r.comparison.measure]) for r in results}
        stored = conn.execute(select(ab_tests.c.id, ab_tests.c.candidate_run_id, ab_tests.c.baseline_run_id,
                                     ab_tests.c.measure_id).where(ab_tests.c.judge_run_id == judge_run_id)).all()
        stale = [row.id for row in stored if (row.candidate_run_id, row.baseline_run_id, row.measure_id) not in keep]
        if stale:
            conn.execute(delete(ab_tests).where(ab_tests.c.id.in_(stale)))
        return _store(conn, results)


def _checked(results: Iterable[ABTestResult]) -> list[ABTestResult]:
    results = list(results)
    for result in results:
        if not isinstance(result, ABTestResult):
            raise InputError(f"expected ABTestResult objects, got {type(result).__name__}")
        judged = result.comparison.measure.startswith(JUDGE_MEASURE_PREFIX)
        if judged != (result.judge_run_id is not None):
            raise InputError(
                f"measure {result.comparison.measure!r}: " + (
                    "a judge-label measure is stored only with the judge run whose labels it is on" if judged
                    else f"a comparison of judge run {result.judge_run_id} needs a {JUDGE_MEASURE_PREFIX} measure"))
    return results


def _store(conn: Any, results: list[ABTestResult]) -> list[ABTestResult]:
    """Upsert checked results on an open transaction (the one writer of ``ab_tests``)."""
    created_at = now_utc()
    for pair in sorted({(r.baseline_run_id, r.candidate_run_id) for r in results}):
        baseline_fp, candidate_fp = (run_fingerprint(conn, run_id) for run_id in pair)
        if baseline_fp.hash != candidate_fp.hash:
            raise WarehouseError(
                f"baseline run {pair[0]} and candidate run {pair[1]} have different fingerprints "
                f"(changed: {', '.join(candidate_fp.diff(baseline_fp))}); results across fingerprints "
                "are not comparable and are not stored"
            )
        unknown = [r.comparison.measure for r in results
                   if r.baseline_run_id == pair[0] and r.candidate_run_id == pair[1] and r.judge_run_id is None
                   and r.comparison.measure not in candidate_fp.measures]
        if unknown:
            raise InputError(f"measure(s) {unknown} are not in the runs' fingerprint {list(candidate_fp.measures)}")
    if not results:
        return []
    ids = measure_ids(conn, [r.comparison.measure for r in results])
    rows = [{**ab_test_columns(r), "measure_id": ids[r.comparison.measure], "created_at": created_at}
            for r in results]
    stmt = insert_for(conn, ab_tests)
    stmt = stmt.on_conflict_do_update(
        index_elements=["candidate_run_id", "baseline_run_id", "measure_id"],
        set_={c: stmt.excluded[c] for c in rows[0] if c not in ("candidate_run_id", "baseline_run_id", "measure_id")},
    )
    conn.execute(stmt, rows)
    stored = conn.execute(
        _select_all().where(
            ab_tests.c.candidate_run_id.in_({r.candidate_run_id for r in results}),
            ab_tests.c.baseline_run_id.in_({r.baseline_run_id for r in results}),
            ab_tests.c.measure_id.in_(ids.values()),
        )
    ).mappings().all()
    by_key = {(s["candidate_run_id"], s["baseline_run_id"], s["measure"]): s for s in stored}
    return [ab_test_of(by_key[(r.candidate_run_id, r.baseline_run_id, r.comparison.measure)]) for r in results]


def ab_test_results(engine: Engine, *, candidate_run_id: int, baseline_run_id: int) -> list[ABTestResult]:
    """The stored comparisons of one candidate run against one baseline run on the fingerprint's labels (none
    on judge labels: :func:`judge_ab_tests`), typed, in the order they were first stored (the decide step's
    order)."""
    stmt = (_select().where(ab_tests.c.candidate_run_id == candidate_run_id,
                            ab_tests.c.baseline_run_id == baseline_run_id).order_by(ab_tests.c.id))
    with transaction(engine, "reading A/B test results") as conn:
        rows = conn.execute(stmt).mappings().all()
    return [ab_test_of(r) for r in rows]


def judge_ab_tests(engine: Engine, judge_run_ids: Iterable[int]) -> dict[int, list[ABTestResult]]:
    """The stored comparisons on the labels of each judge run (``judge_runs.id``), typed, in the order the
    judge step stored them; a judge run with none has an empty list."""
    ids = sorted(set(judge_run_ids))
    out: dict[int, list[ABTestResult]] = {i: [] for i in ids}
    if not ids:
        return out
    stmt = _select_all().where(ab_tests.c.judge_run_id.in_(ids)).order_by(ab_tests.c.id)
    with transaction(engine, "reading judge-label A/B test results") as conn:
        for row in conn.execute(stmt).mappings().all():
            out[row["judge_run_id"]].append(ab_test_of(row))
    return out


def load_ab_tests(
    engine: Engine, *, candidate_run_id: int | None = None, baseline_run_id: int | None = None
) -> pd.DataFrame:
    """Stored comparisons on the fingerprint's labels (one row per measure; none on judge labels), optionally
    for one candidate and/or baseline run."""
    import pandas as pd

    stmt = _select().order_by(ab_tests.c.candidate_run_id, ab_tests.c.baseline_run_id, measures_table.c.name)
    if candidate_run_id is not None:
        stmt = stmt.where(ab_tests.c.candidate_run_id == candidate_run_id)
    if baseline_run_id is not None:
        stmt = stmt.where(ab_tests.c.baseline_run_id == baseline_run_id)
    with transaction(engine, "reading A/B test results") as conn:
        rows = conn.execute(stmt).mappings().all()
    return pd.DataFrame([_frame_row(ab_test_of(r)) for r in rows], columns=_frame_columns())


def _frame_row(result: ABTestResult) -> dict[str, Any]:
    """A stored A/B test as one row of :func:`load_ab_tests`: the comparison's fields (its record without
    the per-query deltas) beside where it belongs, and the ``record`` itself."""
    record: dict[str, Any] = {k: v for k, v in result.comparison.to_record().items() if k != "deltas"}
    return {**record, "baseline_run_id": result.baseline_run_id, "candidate_run_id": result.candidate_run_id,
            "family": result.family, "segments": list(result.segments), "record": record, "id": result.id,
            "created_at": result.created_at}


def _frame_columns() -> list[str]:
    return [*(f for f in RECORD_FIELDS if f != "deltas"), "baseline_run_id", "candidate_run_id", "family", "segments",
            "record", "id", "created_at"]


def comparison_look(engine: Engine, candidate_run_id: int, baseline_run_id: int | None = None) -> int:
    """Which look this is: 1 + the earlier days on which the same retriever version was compared on the same
    dataset (the count a daily-repeated comparison spends its error over). With ``baseline_run_id``, only
    the days it was compared against the same baseline version count: the counter starts again when the
    baseline or the candidate changes (a new pair of versions is a new comparison, with its whole alpha)."""
    from sqlalchemy import func

    with transaction(engine, "counting earlier comparisons") as conn:
        me = conn.execute(select(runs.c.retriever, runs.c.version, runs.c.dataset, runs.c.logical_date)
                          .where(runs.c.id == candidate_run_id)).one_or_none()
        if me is None:
            raise InputError(f"run {candidate_run_id} is not in the warehouse")
        query = (select(func.count(func.distinct(runs.c.logical_date)))
                 .select_from(runs.join(ab_tests, ab_tests.c.candidate_run_id == runs.c.id))
                 .where(runs.c.retriever == me.retriever, runs.c.version == me.version, runs.c.dataset == me.dataset,
                        runs.c.logical_date < me.logical_date, ab_tests.c.judge_run_id.is_(None)))
        if baseline_run_id is not None:
            base = conn.execute(select(runs.c.retriever, runs.c.version)
                                .where(runs.c.id == baseline_run_id)).one_or_none()
            if base is None:
                raise InputError(f"run {baseline_run_id} is not in the warehouse")
            their = runs.alias("baseline_runs")
            query = (query.join_from(ab_tests, their, their.c.id == ab_tests.c.baseline_run_id)
                     .where(their.c.retriever == base.retriever, their.c.version == base.version))
        earlier = conn.execute(query).scalar_one()
    return int(earlier) + 1


def _select_all():
    """Every stored comparison, with its measure's name."""
    return select(ab_tests, measures_table.c.name.label("measure")).join(
        measures_table, measures_table.c.id == ab_tests.c.measure_id
    )


def _select():
    """The comparisons on the fingerprint's labels, with their measure's name."""
    return _select_all().where(ab_tests.c.judge_run_id.is_(None))
