"""a re-run keeps the finished run until it finishes (eval_runs.attempt_started_at, attempt_contracts)

A re-run of a finished day used to mark its runs ``running`` before scoring; killed, they were later marked
``abandoned`` and the day was lost (the baseline too, when it named one of them). Now a re-run of a finished
run is an attempt beside it: the row keeps its status, scores and contracts, and records only when the
attempt started and the contracts it runs under, with the lease, until the attempt's final write.

Revision ID: c5e2a7f1b9d3
Revises: b7c3e1f9a2d4
Create Date: 2026-12-06 09:00:00.000000
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa

from evalops.warehouse.migrations import steps

revision: str = 'c5e2a7f1b9d3'
down_revision: str | Sequence[str] | None = 'b7c3e1f9a2d4'


upgrade, downgrade = steps.adds_columns("eval_runs", ("attempt_started_at", sa.DateTime(timezone=True)),
                                   ("attempt_contracts", sa.JSON()))
