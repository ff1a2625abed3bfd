"""A run's statuses (``eval_runs.status``), import-light: the readers on the driver alone
(:mod:`evalops.warehouse.direct`) filter on them without loading the models."""

from __future__ import annotations

__all__ = ["FINISHED_STATUSES", "RUN_STATUSES", "SCORED_STATUSES", "UNFINISHED_STATUSES"]

RUN_STATUSES = ("running", "succeeded", "partial", "failed", "abandoned")
# The statuses a reader may treat as results: a run is visible only once its final write committed.
FINISHED_STATUSES = ("succeeded", "partial", "failed")
# The statuses of a run that produced scores (the history's default).
SCORED_STATUSES = ("succeeded", "partial")
# A run that never finished: the only rows a re-run may mark ``running`` again, or a lease mark ``abandoned``.
UNFINISHED_STATUSES = ("running", "abandoned")
