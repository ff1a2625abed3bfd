"""Which run this is: the identity, the day, the data window and the seed of one evaluation run.

Built from an Airflow task context (:meth:`RunContext.from_airflow`) or for a CLI run
(:meth:`RunContext.for_day`). Conventions owned here:

* The **run key** is ``(dag_id, run_id)``. A re-run or retry of the same DAG run writes to the same key,
  so its warehouse writes are upserts of the same rows.
* The **day** is the UTC date of the logical date; an asset-triggered run has none, so its ``run_after``
  is used instead.
* The **window** of query logs is the run's data interval (the daily schedule runs at 00:00 UTC, so it
  is the previous UTC day, matching the logs' date partitions). When the interval is missing or empty
  (asset triggers, manual runs), it is the UTC day before the anchor's date.
* The **seed** of the day's draws (log sampling, the judge's sample of production queries) is the day as
  ``YYYYMMDD``, so a re-run of a day draws the same sample and a different day a different one. The
  comparisons' bootstrap and randomization tests are seeded by their data instead
  (``evalops.pipeline.comparing.data_seed``): identical data gives identical intervals on any day.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from evalops.util.utc import UTC, as_utc

__all__ = ["RunContext"]


def _utc(value: Any, what: str) -> dt.datetime | None:
    """An Airflow context's datetime in UTC (:func:`evalops.util.utc.as_utc`), or None when absent."""
    return None if value is None else as_utc(value, what)


@dataclass(frozen=True)
class RunContext:
    dag_id: str
    run_id: str
    anchor: dt.datetime
    window_start: dt.datetime
    window_end: dt.datetime
    trigger: str = "manual"
    # The asset events that triggered the run: [{"asset", "extra", "source_dag_id", "source_run_id",
    # "timestamp"}] (JSON-ready), empty for scheduled and manual runs.
    trigger_events: tuple[dict[str, Any], ...] = field(default=(), compare=False)

    def trigger_record(self) -> dict[str, Any]:
        """How the run was started, as recorded with each of its warehouse runs and shown in its report."""
        return {"type": self.trigger, "asset_events": [dict(e) for e in self.trigger_events]}

    @property
    def day(self) -> str:
        return self.anchor.date().isoformat()

    @property
    def seed(self) -> int:
        return int(self.anchor.strftime("%Y%m%d"))

    @property
    def label(self) -> str:
        """A short name for logs and reports."""
        return f"{self.dag_id}/{self.run_id}"

    @classmethod
    def for_day(cls, day: dt.date | str, *, dag_id: str = "cli", run_id: str | None = None) -> RunContext:
        """The run the daily schedule makes at 00:00 UTC on ``day``: its log window is the day before."""
        date = dt.date.fromisoformat(day) if isinstance(day, str) else day
        anchor = dt.datetime.combine(date, dt.time(0), tzinfo=UTC)
        return cls(dag_id, run_id or f"cli__{date.isoformat()}", anchor, anchor - dt.timedelta(days=1), anchor,
                   "manual")

    @classmethod
    def from_airflow(cls, context: Mapping[str, Any]) -> RunContext:
        """From a task's ``get_current_context()`` (only plain attribute reads; no Airflow import)."""
        dag_run = context["dag_run"]
        logical = _utc(context.get("logical_date") or getattr(dag_run, "logical_date", None), "logical_date")
        run_after = _utc(getattr(dag_run, "run_after", None), "run_after")
        anchor = logical or run_after
        if anchor is None:
            raise ValueError("the DAG run has neither a logical date nor run_after")
        start = _utc(context.get("data_interval_start"), "data_interval_start")
        end = _utc(context.get("data_interval_end"), "data_interval_end")
        if start is None or end is None or end <= start:
            end = dt.datetime.combine(anchor.date(), dt.time(0), tzinfo=UTC)
            start = end - dt.timedelta(days=1)
        run_type = getattr(dag_run, "run_type", None)
        run_type = str(getattr(run_type, "value", run_type) or "").lower()
        trigger = "asset" if "asset" in run_type else "schedule" if "scheduled" in run_type else "manual"
        dag_id = getattr(dag_run, "dag_id", None) or context["dag"].dag_id
        events = _asset_events(context.get("triggering_asset_events")) if trigger == "asset" else ()
        return cls(str(dag_id), str(dag_run.run_id), anchor, start, end, trigger, events)


def _json_ready(value: Any) -> Any:
    """An event's extra as plain JSON values (anything else as its text)."""
    if isinstance(value, Mapping):
        return {str(k): _json_ready(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_json_ready(v) for v in value]
    if value is None or isinstance(value, (str, int, float, bool)):
        return value
    return str(value)


def _asset_events(events: Any) -> tuple[dict[str, Any], ...]:
    """The triggering asset events of a task context (``{asset: [event, ...]}``), oldest first."""
    if not events:
        return ()
    out = []
    for key, items in events.items():
        for e in items or ():
            asset = getattr(getattr(e, "asset", None), "name", None) or getattr(key, "name", None) or str(key)
            stamp = getattr(e, "timestamp", None)
            out.append({
                "asset": str(asset),
                "extra": _json_ready(dict(getattr(e, "extra", None) or {})),
                "source_dag_id": getattr(e, "source_dag_id", None),
                "source_run_id": getattr(e, "source_run_id", None),
                "timestamp": stamp.isoformat() if isinstance(stamp, dt.datetime) else None,
            })
    return tuple(sorted(out, key=lambda e: e["timestamp"] or ""))
