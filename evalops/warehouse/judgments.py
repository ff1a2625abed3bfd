"""The judgment cache and the judge runs: repository functions over ``judgments`` and ``judge_runs``.

``WarehouseJudgmentStore`` is the warehouse side of :class:`evalops.judges.cache.JudgmentStore`: labels
are inserted once per key (``ON CONFLICT DO NOTHING``: the first label made under a key stays, so a
re-run never changes it). ``record_judge_run`` upserts one judge step's record on (dag_id, dag_run_id,
scope), so a retried task replaces its row, and stores the comparisons on its labels in the same transaction:
a step stopped while writing leaves both or neither, never a judge run without (or with an earlier
attempt's) comparisons.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from sqlalchemy import select, tuple_

from evalops.judges.base import Judgment
from evalops.warehouse._db import insert_for, now_utc, transaction
from evalops.warehouse.abtests import record_judge_ab_tests
from evalops.warehouse.tables import judge_runs, judgments

if TYPE_CHECKING:  # pragma: no cover
    import pandas as pd
    from sqlalchemy.engine import Connection, Engine

    from evalops.warehouse.domain import ABTestResult

__all__ = ["WarehouseJudgmentStore", "count_judgments", "load_judge_runs", "record_judge_run"]

_KEY = ("query_hash", "document_hash", "judge_model", "prompt", "decoding", "sample")
_CHUNK = 300


class WarehouseJudgmentStore:
    def __init__(self, engine: Engine):
        self.engine = engine

    def load(self, keys: Sequence[tuple[str, str, str, str, str, int]]) -> dict[tuple, Judgment]:
        out: dict[tuple, Judgment] = {}
        columns = [judgments.c[name] for name in _KEY]
        with transaction(self.engine, "reading cached judgments") as conn:
            for start in range(0, len(keys), _CHUNK):
                chunk = list(keys[start : start + _CHUNK])
                rows = conn.execute(select(judgments).where(tuple_(*columns).in_(chunk))).mappings()
                for row in rows:
                    key = tuple(row[name] for name in _KEY)
                    out[key] = Judgment(row["label"], None, dict(row["detail"] or {}), row["input_tokens"],
                                        row["output_tokens"], row["cost"])
        return out

    def save(self, entries: Iterable[tuple[tuple, Judgment]], *, offline: bool) -> None:
        now = now_utc()
        rows = [dict(zip(_KEY, key), label=j.label, detail=dict(j.detail), offline=offline,
                     input_tokens=j.input_tokens, output_tokens=j.output_tokens, cost=j.cost, created_at=now)
                for key, j in entries]
        if not rows:
            return
        with transaction(self.engine, "storing judgments") as conn:
            for start in range(0, len(rows), _CHUNK):
                stmt = insert_for(conn, judgments).on_conflict_do_nothing(index_elements=list(_KEY))
                conn.execute(stmt, rows[start : start + _CHUNK])


def count_judgments(engine: Engine) -> int:
    from sqlalchemy import func

    with transaction(engine, "counting judgments") as conn:
        return int(conn.execute(select(func.count()).select_from(judgments)).scalar_one())


def record_judge_run(engine: Engine | Connection, *, dag_id: str, dag_run_id: str, scope: str,
                     values: Mapping[str, Any],
                     comparisons: Callable[[int], Iterable[ABTestResult]] | None = None) -> int:
    """Upsert one judge step's record; returns its id.

    ``comparisons`` (given the run's id, the comparisons on its labels, each naming it) replace the run's
    stored ones (:func:`evalops.warehouse.abtests.record_judge_ab_tests`) in the same transaction: the
    record and its comparisons are stored together or not at all. Without it the run's stored comparisons
    are left as they are."""
    row = {"dag_id": dag_id, "dag_run_id": dag_run_id, "scope": scope, "created_at": now_utc(), **values}
    what = "recording a judge run" + (" and its comparisons" if comparisons is not None else "")
    with transaction(engine, what) as conn:
        stmt = insert_for(conn, judge_runs).values(row)
        update = {k: stmt.excluded[k] for k in row if k not in ("dag_id", "dag_run_id", "scope")}
        conn.execute(stmt.on_conflict_do_update(index_elements=["dag_id", "dag_run_id", "scope"], set_=update))
        judge_run_id = int(conn.execute(select(judge_runs.c.id).where(
            judge_runs.c.dag_id == dag_id, judge_runs.c.dag_run_id == dag_run_id, judge_runs.c.scope == scope)
        ).scalar_one())
        if comparisons is not None:
            record_judge_ab_tests(conn, judge_run_id, comparisons(judge_run_id))
        return judge_run_id


def load_judge_runs(engine: Engine, dag_run_id: str | None = None) -> pd.DataFrame:
    import pandas as pd

    query = select(judge_runs).order_by(judge_runs.c.id)
    if dag_run_id is not None:
        query = query.where(judge_runs.c.dag_run_id == dag_run_id)
    with transaction(engine, "reading judge runs") as conn:
        return pd.DataFrame([dict(r) for r in conn.execute(query).mappings()])
