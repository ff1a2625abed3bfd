"""Score rows inside a caller's transaction: validation, bulk insert (COPY / executemany) and bulk fetch.

The public functions in ``scores`` and ``runs`` compose these, so that a run, its scores and its aggregates
can be written in one transaction.
"""

from __future__ import annotations

import itertools
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np
from sqlalchemy import delete, select
from sqlalchemy.engine import Connection

from evalops.errors import InputError, WarehouseError
from evalops.warehouse._db import insert_for, measure_ids, measures_table
from evalops.warehouse.catalog import fingerprint_from_row, fingerprints
from evalops.warehouse.tables import aggregates, query_scores, runs
from evalops.warehouse.types import SQLITE_NAN

if TYPE_CHECKING:  # pragma: no cover
    import pandas as pd

    from evalops.fingerprint import EvalFingerprint


MAX_QUERY_ID_LENGTH = query_scores.c.query_id.type.length
AGGREGATE_COLUMNS = ("measure", "n", "mean", "ci_low", "ci_high")
# Score rows turned into Python objects at a time while they are written (the rows of one run can be millions).
WRITE_BLOCK = 1 << 16


def fetch_scores(conn: Connection, run_id: int, ids: Sequence[int]) -> tuple[np.ndarray, list[str], np.ndarray]:
    """(measure ids, query ids, float64 values) straight from the driver cursor, inside the transaction.

    Skips SQLAlchemy's per-row result processing (the bulk of the cost at 100,000 rows); the NaNFloat
    decoding is applied to the whole column instead: ``'NaN'`` text (SQLite) becomes NaN via ``astype``.
    """
    _, mids, qids, values = fetch_scores_of_runs(conn, [run_id], ids)
    return mids, qids, values


def fetch_scores_of_runs(conn: Connection, run_ids: Sequence[int], ids: Sequence[int]
                         ) -> tuple[np.ndarray, np.ndarray, list[str], np.ndarray]:
    """(run ids, measure ids, query ids, float64 values) of several runs in one read (:func:`fetch_scores`);
    the primary key (run_id, measure_id, query_id) serves it. Rows in no particular order."""
    stmt = select(query_scores.c.run_id, query_scores.c.measure_id, query_scores.c.query_id, query_scores.c.value
                  ).where(query_scores.c.run_id.in_([int(r) for r in run_ids]),
                          query_scores.c.measure_id.in_([int(i) for i in ids]))
    # Only integers are inlined, so literal binds are safe here.
    sql = str(stmt.compile(dialect=conn.dialect, compile_kwargs={"literal_binds": True}))
    cursor = conn.connection.driver_connection.cursor()
    try:
        cursor.execute(sql)
        rows = cursor.fetchall()
    finally:
        cursor.close()
    if not rows:
        return np.array([], dtype=np.int64), np.array([], dtype=np.int64), [], np.array([], dtype=np.float64)
    table = np.array(rows, dtype=object)  # one (rows, 4) array: a third of the cost of zip(*rows)
    return (table[:, 0].astype(np.int64), table[:, 1].astype(np.int64), table[:, 2].tolist(),
            table[:, 3].astype(np.float64))


def run_fingerprint(conn: Connection, run_id: int, *, for_update: bool = False) -> EvalFingerprint:
    """The fingerprint of a run; with ``for_update`` the run row stays locked until commit (PostgreSQL)."""
    stmt = select(runs.c.id).where(runs.c.id == run_id)
    if for_update:
        stmt = stmt.with_for_update()
    if conn.execute(stmt).first() is None:
        raise WarehouseError(f"there is no evaluation run with id {run_id}")
    row = conn.execute(
        select(fingerprints).join(runs, runs.c.fingerprint_hash == fingerprints.c.hash).where(runs.c.id == run_id)
    ).mappings().one()
    return fingerprint_from_row(row)


def lock_run(conn: Connection, run_id: int) -> EvalFingerprint:
    """Lock the run row so that two writers of one run take turns (delete-then-insert stays consistent)."""
    return run_fingerprint(conn, run_id, for_update=True)


def measure_ids_for_read(conn: Connection, names: Sequence[str]) -> dict[str, int]:
    """Ids of the given measure names that exist (reading never inserts)."""
    table = measures_table
    rows = conn.execute(select(table.c.name, table.c.id).where(table.c.name.in_(list(names))))
    return {name: id_ for name, id_ in rows}


def score_columns(
    scores: pd.DataFrame, allowed_measures: Sequence[str]
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Validate a long score frame; return (query ids, measures, float64 values) as arrays."""
    import pandas as pd

    if not isinstance(scores, pd.DataFrame):
        raise InputError(f"scores must be a pandas DataFrame, got {type(scores).__name__}")
    missing = [c for c in ("query_id", "measure", "value") if c not in scores.columns]
    if missing:
        raise InputError(
            f"scores frame is missing column(s) {missing}; expected query_id, measure, value "
            f"(have {list(scores.columns)})"
        )
    for column in ("query_id", "measure"):
        empty = scores[column].isna() | (scores[column].astype(str).str.len() == 0)
        if empty.any():
            raise InputError(f"scores row {_row(scores, empty)} has no {column}")
    qids = scores["query_id"].astype(str)
    too_long = qids.str.len() > MAX_QUERY_ID_LENGTH
    if too_long.any():
        raise InputError(
            f"scores row {_row(scores, too_long)}: query id is longer than {MAX_QUERY_ID_LENGTH} characters"
        )
    measures = _fingerprint_measures(scores, allowed_measures, "scores")
    values = pd.to_numeric(scores["value"], errors="coerce")
    bad = values.isna() & scores["value"].notna()
    if bad.any():
        raise InputError(
            f"scores row {_row(scores, bad)}: value {scores['value'][bad].iloc[0]!r} is not a number"
        )
    duplicated = pd.DataFrame({"q": qids, "m": measures}).duplicated()
    if duplicated.any():
        i = int(np.flatnonzero(duplicated.to_numpy())[0])
        raise InputError(
            f"scores row {i}: query {qids.iloc[i]!r} has more than one {measures.iloc[i]!r} score; "
            "keep one row per query and measure"
        )
    return (
        qids.to_numpy(dtype=object),
        measures.to_numpy(dtype=object),
        values.to_numpy(dtype=np.float64, na_value=np.nan),
    )


def write_scores(
    conn: Connection, run_id: int, query_ids: np.ndarray, measures: np.ndarray, values: np.ndarray, *, replace_all: bool
) -> int:
    """Delete the run's rows (all of them, or those of the given measures), then bulk-insert."""
    import pandas as pd

    codes, names = pd.factorize(measures)  # a handful of distinct names over every row
    ids = measure_ids(conn, names.tolist())
    stmt = delete(query_scores).where(query_scores.c.run_id == run_id)
    if not replace_all:
        stmt = stmt.where(query_scores.c.measure_id.in_(list(ids.values())))
    conn.execute(stmt)
    if len(query_ids) == 0:
        return 0
    measure_column = np.array([ids[name] for name in names.tolist()], dtype=np.int64)[codes]
    order = primary_key_order(measure_column, query_ids)
    rows = (query_ids[order], measure_column[order], values[order])
    if conn.dialect.name == "postgresql":
        _copy_scores(conn, run_id, *rows)
    else:
        _executemany_scores(conn, run_id, *rows)
    return len(query_ids)


def primary_key_order(mids: np.ndarray, qids: np.ndarray) -> np.ndarray:
    """The permutation that puts one run's rows in primary-key order (measure id, then query id).

    Both backends then append to the key's B-tree instead of inserting all over it: at 120,000 rows a
    shuffled order cost PostgreSQL's COPY and SQLite's inserts 1.5-1.8x the time of the sorted order (and
    left PostgreSQL's index a quarter larger); the pipeline's frames are nearly sorted already (measure by
    measure, each shard's query ids in order), and sorting them costs about 0.01 s. Query ids are ordered
    by code point (Python's ``str`` order), which is SQLite's BINARY collation and PostgreSQL's under the C
    collation; under another collation the order is merely less helpful, never wrong. Each distinct query
    id is compared once (20,000 ids, not 120,000 rows).
    """
    import pandas as pd

    codes, uniques = pd.factorize(qids)
    rank = np.empty(len(uniques), dtype=np.int64)
    rank[np.argsort(np.asarray(uniques, dtype=object), kind="stable")] = np.arange(len(uniques))
    return np.lexsort((rank[codes], mids))


def _copy_scores(conn: Connection, run_id: int, qids: np.ndarray, mids: np.ndarray, values: np.ndarray) -> None:
    # write_row is psycopg's C binary encoder: 120,000 rows cost about 0.05 s of CPU, no more than building
    # the COPY block with numpy and writing it at once, so the rows go one by one.
    raw = conn.connection.driver_connection  # psycopg connection, inside the same transaction
    with raw.cursor() as cursor:
        sql = "COPY query_scores (run_id, measure_id, query_id, value) FROM STDIN (FORMAT BINARY)"
        with cursor.copy(sql) as copy:
            copy.set_types(["int4", "int4", "text", "float8"])
            for lo in range(0, len(qids), WRITE_BLOCK):  # Python objects for one block of rows at a time
                hi = lo + WRITE_BLOCK
                for row in zip(itertools.repeat(run_id), mids[lo:hi].tolist(), qids[lo:hi].tolist(),
                               values[lo:hi].tolist()):
                    copy.write_row(row)


def _executemany_scores(
    conn: Connection, run_id: int, qids: np.ndarray, mids: np.ndarray, values: np.ndarray
) -> None:
    # The driver's cursor, in the same transaction, fed an iterator: no list of 120,000 tuples is built, and
    # the Python objects of one block of rows are alive at a time.
    cursor = conn.connection.driver_connection.cursor()
    try:
        for lo in range(0, len(qids), WRITE_BLOCK):
            hi = lo + WRITE_BLOCK
            encoded = values[lo:hi].astype(object)
            encoded[np.isnan(values[lo:hi])] = SQLITE_NAN  # the NaNFloat encoding, applied to the block at once
            cursor.executemany("INSERT INTO query_scores (run_id, measure_id, query_id, value) VALUES (?, ?, ?, ?)",
                               zip(itertools.repeat(run_id), mids[lo:hi].tolist(), qids[lo:hi].tolist(),
                                   encoded.tolist()))
    finally:
        cursor.close()


def aggregate_rows(
    frame: pd.DataFrame, allowed_measures: Sequence[str], *, ci_level: float, ci_method: str
) -> list[dict[str, Any]]:
    import pandas as pd

    if not isinstance(frame, pd.DataFrame):
        raise InputError(f"aggregates must be a pandas DataFrame, got {type(frame).__name__}")
    missing = [c for c in AGGREGATE_COLUMNS if c not in frame.columns]
    if missing:
        raise InputError(f"aggregates frame is missing column(s) {missing}; expected {list(AGGREGATE_COLUMNS)}")
    if not 0 < float(ci_level) < 1:
        raise InputError(f"ci_level must be between 0 and 1 (e.g. 0.95), got {ci_level!r}")
    if not ci_method:
        raise InputError("ci_method must name how the intervals were computed (e.g. 'bootstrap-percentile')")
    measures = _fingerprint_measures(frame, allowed_measures, "aggregates")
    if measures.duplicated().any():
        raise InputError(f"aggregates row {_row(frame, measures.duplicated())}: measure listed twice")
    rows = []
    for i, record in enumerate(frame[list(AGGREGATE_COLUMNS)].to_dict("records")):
        try:
            rows.append(
                {
                    "measure": str(record["measure"]),
                    "n": int(record["n"]),
                    **{c: float(record[c]) for c in ("mean", "ci_low", "ci_high")},
                    "ci_level": float(ci_level),
                    "ci_method": str(ci_method),
                }
            )
        except (TypeError, ValueError) as exc:
            raise InputError(f"aggregates row {i}: {exc}") from None
    return rows


def write_aggregates(conn: Connection, run_id: int, rows: Sequence[Mapping[str, Any]]) -> int:
    if not rows:
        return 0
    ids = measure_ids(conn, [r["measure"] for r in rows])
    values = [{"run_id": run_id, "measure_id": ids[r["measure"]], **{k: v for k, v in r.items() if k != "measure"}}
              for r in rows]
    stmt = insert_for(conn, aggregates)
    stmt = stmt.on_conflict_do_update(
        index_elements=["run_id", "measure_id"],
        set_={c: stmt.excluded[c] for c in ("n", "mean", "ci_low", "ci_high", "ci_level", "ci_method")},
    )
    conn.execute(stmt, values)
    return len(values)


def _fingerprint_measures(frame: pd.DataFrame, allowed: Sequence[str], what: str) -> pd.Series:
    """The frame's measure column as strings; every measure must belong to the run's fingerprint."""
    measures = frame["measure"].astype(str)
    unknown = ~measures.isin(list(allowed))
    if unknown.any():
        raise InputError(
            f"{what} row {_row(frame, unknown)}: measure {measures[unknown].iloc[0]!r} is not in the run's "
            f"fingerprint measures {list(allowed)}"
        )
    return measures


def _row(frame: pd.DataFrame, mask: Any) -> int:
    """Position (0-based) of the first row where ``mask`` holds."""
    return int(np.flatnonzero(np.asarray(mask))[0])
