"""Per-query scores and per-run aggregates: the bulk path of the warehouse.

Scores travel as a long DataFrame with columns ``query_id``, ``measure``, ``value`` (one row per query and
measure). Writing is delete-then-insert of the affected slices inside one transaction, so a re-run
replaces rows and a failure leaves the previous rows untouched. The insert is PostgreSQL ``COPY`` (binary,
through psycopg) or one SQLite ``executemany``; both keep NaN (see ``evalops.warehouse.types``).

Reading returns the same long frame, or aligned numpy vectors for the paired statistics: query ids sorted
as strings, one float64 vector per measure.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable
from typing import TYPE_CHECKING

import numpy as np
from sqlalchemy import delete, select

from evalops.errors import AlignmentError, InputError, WarehouseError
from evalops.util.utc import as_utc
from evalops.warehouse._bulk import (
    AGGREGATE_COLUMNS,
    aggregate_rows,
    aggregates,
    fetch_scores,
    lock_run,
    measure_ids_for_read,
    query_scores,
    run_fingerprint,
    runs,
    score_columns,
    write_aggregates,
    write_scores,
)
from evalops.warehouse._db import measures_table, transaction
from evalops.warehouse.domain import PairedScores, ScoreVectors
from evalops.warehouse.tables import baselines

if TYPE_CHECKING:  # pragma: no cover
    import pandas as pd
    from sqlalchemy.engine import Engine

    from evalops.fingerprint import EvalFingerprint

__all__ = [
    "prune_query_scores",
    "load_aggregates",
    "load_paired_scores",
    "load_score_vectors",
    "load_scores",
    "record_aggregates",
    "upsert_scores",
]


def upsert_scores(engine: Engine, run_id: int, scores: pd.DataFrame) -> int:
    """Replace the run's scores for every measure present in ``scores``; other measures are kept.

    Returns the number of rows written. Measures must belong to the run's fingerprint.
    """
    with transaction(engine, f"writing scores of run {run_id}") as conn:
        fingerprint = lock_run(conn, run_id)
        columns = score_columns(scores, fingerprint.measures)
        return write_scores(conn, run_id, *columns, replace_all=False)


def record_aggregates(
    engine: Engine, run_id: int, frame: pd.DataFrame, *, ci_level: float, ci_method: str
) -> int:
    """Upsert one row per measure: ``measure, n, mean, ci_low, ci_high`` (NaN allowed).

    ``ci_level`` (e.g. 0.95) and ``ci_method`` (e.g. ``"bootstrap-percentile"``) are the CI policy and are
    stored with every row. Returns the number of rows written.
    """
    with transaction(engine, f"writing aggregates of run {run_id}") as conn:
        fingerprint = lock_run(conn, run_id)
        rows = aggregate_rows(frame, fingerprint.measures, ci_level=ci_level, ci_method=ci_method)
        return write_aggregates(conn, run_id, rows)


def load_scores(engine: Engine, run_id: int, measures: Iterable[str] | None = None) -> pd.DataFrame:
    """The run's per-query scores as a long frame ``query_id, measure, value``, sorted by measure, query."""
    import pandas as pd

    with transaction(engine, f"reading scores of run {run_id}") as conn:
        fingerprint = run_fingerprint(conn, run_id)
        ids = measure_ids_for_read(conn, _known_measures(measures, fingerprint))
        mids, qids, values = fetch_scores(conn, run_id, sorted(ids.values()))
    names = np.empty(max(ids.values(), default=0) + 1, dtype=object)
    for name, measure_id in ids.items():
        names[measure_id] = name
    frame = pd.DataFrame(
        {
            "query_id": pd.Series(qids, dtype=str),
            "measure": pd.Series(names[mids] if len(mids) else [], dtype=str),
            "value": values,
        }
    )
    return frame.sort_values(["measure", "query_id"], kind="stable", ignore_index=True)


def load_score_vectors(engine: Engine, run_id: int, measures: Iterable[str] | None = None) -> ScoreVectors:
    """The run's scores as aligned vectors; every measure must cover the same queries."""
    frame = load_scores(engine, run_id, measures)
    query_ids: np.ndarray | None = None
    values: dict[str, np.ndarray] = {}
    for measure, part in frame.groupby("measure", sort=True):
        qids = part["query_id"].to_numpy(dtype=object)
        if query_ids is None:
            query_ids = qids
        elif len(qids) != len(query_ids) or not np.array_equal(qids, query_ids):
            first = next(iter(values))
            raise AlignmentError(
                f"run {run_id}: measure {measure!r} covers different queries than {first!r} "
                f"({_set_difference(query_ids, qids)})"
            )
        values[str(measure)] = part["value"].to_numpy(dtype=np.float64)
    return ScoreVectors(run_id, query_ids if query_ids is not None else np.array([], dtype=object), values)


def load_paired_scores(engine: Engine, baseline_run_id: int, candidate_run_id: int, measure: str) -> PairedScores:
    """Aligned baseline and candidate vectors of one measure, for a paired test.

    Refuses runs scored under different fingerprints (the warehouse never compares across them) and runs
    that do not cover the same queries (every gold query must count in both).
    """
    with transaction(engine, "checking the fingerprints of a comparison") as conn:
        baseline_fp = run_fingerprint(conn, baseline_run_id)
        candidate_fp = run_fingerprint(conn, candidate_run_id)
    if baseline_fp.hash != candidate_fp.hash:
        raise WarehouseError(
            f"runs {baseline_run_id} and {candidate_run_id} were scored under different fingerprints "
            f"(changed: {', '.join(candidate_fp.diff(baseline_fp))}); re-score the baseline under the "
            "current fingerprint instead of comparing across fingerprints"
        )
    base = load_score_vectors(engine, baseline_run_id, [measure])
    cand = load_score_vectors(engine, candidate_run_id, [measure])
    if not np.array_equal(base.query_ids, cand.query_ids):
        raise AlignmentError(
            f"{measure}: baseline run {baseline_run_id} and candidate run {candidate_run_id} cover different "
            f"queries ({_set_difference(base.query_ids, cand.query_ids)})"
        )
    return PairedScores(
        measure,
        baseline_run_id,
        candidate_run_id,
        cand.query_ids,
        base.values.get(measure, np.array([], dtype=np.float64)),
        cand.values.get(measure, np.array([], dtype=np.float64)),
    )


def load_aggregates(engine: Engine, run_id: int) -> pd.DataFrame:
    """``measure, n, mean, ci_low, ci_high, ci_level, ci_method`` of one run, sorted by measure."""
    import pandas as pd

    stmt = (
        select(measures_table.c.name.label("measure"), *(aggregates.c[c] for c in AGGREGATE_COLUMNS[1:]),
               aggregates.c.ci_level, aggregates.c.ci_method)
        .join(measures_table, measures_table.c.id == aggregates.c.measure_id)
        .where(aggregates.c.run_id == run_id)
    )
    with transaction(engine, f"reading aggregates of run {run_id}") as conn:
        run_fingerprint(conn, run_id)
        rows = conn.execute(stmt).mappings().all()
    frame = pd.DataFrame([dict(r) for r in rows], columns=[*AGGREGATE_COLUMNS, "ci_level", "ci_method"])
    return frame.sort_values("measure", ignore_index=True)


def _known_measures(measures: Iterable[str] | None, fingerprint: EvalFingerprint) -> list[str]:
    if measures is None:
        return list(fingerprint.measures)
    wanted = [str(m) for m in measures]
    unknown = [m for m in wanted if m not in fingerprint.measures]
    if unknown:
        raise InputError(f"measure(s) {unknown} are not in the run's fingerprint measures {list(fingerprint.measures)}")
    return wanted


def _set_difference(left: np.ndarray, right: np.ndarray, limit: int = 5) -> str:
    only_left = sorted(set(left.tolist()) - set(right.tolist()))
    only_right = sorted(set(right.tolist()) - set(left.tolist()))
    parts = []
    if only_left:
        parts.append(f"{len(only_left)} only in the first, e.g. {only_left[:limit]}")
    if only_right:
        parts.append(f"{len(only_right)} only in the second, e.g. {only_right[:limit]}")
    return "; ".join(parts) or "same ids in a different order"


def prune_query_scores(engine: Engine, before: dt.datetime) -> int:
    """Delete the per-query scores of runs whose logical date is before ``before`` (the retention of
    per-query rows); returns the number of rows deleted.

    Kept whatever their age: the runs' aggregates, A/B results, decisions and alerts (other tables), and
    the per-query scores of every run a baseline row names (current or past: a rollback restores a past
    one, and comparisons read a baseline's per-query scores).
    """
    old = select(runs.c.id).where(runs.c.logical_date < as_utc(before), runs.c.id.not_in(select(baselines.c.run_id)))
    with transaction(engine, "pruning per-query scores") as conn:
        result = conn.execute(delete(query_scores).where(query_scores.c.run_id.in_(old)))
    return int(result.rowcount or 0)
