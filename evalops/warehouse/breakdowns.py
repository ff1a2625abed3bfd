"""A run's breakdowns beside its aggregates: its sources' shares of the top-k slots (``source_shares``,
``evalops.sources``) and its mean and spread per segment (``segment_spreads``, ``evalops.spread``).

Each write replaces the run's rows in one transaction (a retried compare step writes the same rows again).
Reads return plain dicts, the shapes the report and the dashboard render.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any

from sqlalchemy import delete, insert, select

from evalops.warehouse._db import transaction
from evalops.warehouse.tables import runs as runs_table, segment_spreads as spreads_table, source_shares as shares_table

if TYPE_CHECKING:  # pragma: no cover
    from sqlalchemy.engine import Connection, Engine

__all__ = ["load_segment_spreads", "load_source_shares", "record_breakdowns", "source_share_history"]


_SHARE_COLUMNS = ("source", "field", "k", "slots", "total", "share", "judged", "relevant", "precision",
                  "baseline_share", "shift", "bound")
_SPREAD_COLUMNS = ("facet", "segment", "measure", "n", "mean", "std", "var", "p10", "median", "p90")


def record_breakdowns(engine: Engine | Connection, run_id: int, *, shares: Iterable[Mapping[str, Any]] | None,
                      spreads: Iterable[Mapping[str, Any]]) -> None:
    """Replace the run's source shares (``shares``: rows with :data:`_SHARE_COLUMNS`; None leaves none) and
    segment spreads (rows of ``evalops.segments.segment_aggregates``)."""
    share_rows = [{"run_id": run_id, **{c: row.get(c) for c in _SHARE_COLUMNS}} for row in shares or ()]
    spread_rows = [{"run_id": run_id, **{c: row.get(c) for c in _SPREAD_COLUMNS}} for row in spreads
                   if row.get("n") is not None]
    with transaction(engine, f"writing the source shares and segment spreads of run {run_id}") as conn:
        conn.execute(delete(shares_table).where(shares_table.c.run_id == run_id))
        conn.execute(delete(spreads_table).where(spreads_table.c.run_id == run_id))
        if share_rows:
            conn.execute(insert(shares_table), share_rows)
        if spread_rows:
            conn.execute(insert(spreads_table), spread_rows)


def load_source_shares(engine: Engine | Connection, run_id: int) -> list[dict[str, Any]]:
    """The run's source rows, by source."""
    with transaction(engine, f"reading the source shares of run {run_id}", read_only=True) as conn:
        rows = conn.execute(select(*(shares_table.c[c] for c in _SHARE_COLUMNS))
                            .where(shares_table.c.run_id == run_id).order_by(shares_table.c.source)).all()
    return [dict(r._mapping) for r in rows]


def load_segment_spreads(engine: Engine | Connection, run_id: int) -> list[dict[str, Any]]:
    """The run's mean and spread per (facet, segment, measure)."""
    with transaction(engine, f"reading the segment spreads of run {run_id}", read_only=True) as conn:
        rows = conn.execute(select(*(spreads_table.c[c] for c in _SPREAD_COLUMNS))
                            .where(spreads_table.c.run_id == run_id)
                            .order_by(spreads_table.c.facet, spreads_table.c.segment, spreads_table.c.measure)).all()
    return [dict(r._mapping) for r in rows]


def source_share_history(engine: Engine | Connection, *, retriever: str | None = None, dataset: str | None = None,
                         limit: int = 500) -> list[dict[str, Any]]:
    """Source rows of the finished runs, newest logical date first (at most ``limit`` rows), each with its
    run's id, retriever, version, dataset and logical date."""
    r = runs_table.c
    query = (select(r.id.label("run_id"), r.retriever, r.version, r.dataset, r.logical_date,
                    *(shares_table.c[c] for c in _SHARE_COLUMNS))
             .join(shares_table, shares_table.c.run_id == r.id)
             .where(r.status.in_(("succeeded", "partial"))))
    if retriever is not None:
        query = query.where(r.retriever == retriever)
    if dataset is not None:
        query = query.where(r.dataset == dataset)
    query = query.order_by(r.logical_date.desc(), r.id.desc(), shares_table.c.source).limit(limit)
    with transaction(engine, "reading the source-share history", read_only=True) as conn:
        rows = conn.execute(query).all()
    return [dict(row._mapping) for row in rows]
