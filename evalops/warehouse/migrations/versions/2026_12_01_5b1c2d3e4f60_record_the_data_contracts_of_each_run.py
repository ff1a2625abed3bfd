"""record the data contracts of each run

Revision ID: 5b1c2d3e4f60
Revises: 07f3ed2060d6
Create Date: 2026-12-01 10:30:00
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa

from evalops.warehouse.migrations import steps

revision: str = "5b1c2d3e4f60"
down_revision: str | Sequence[str] | None = "07f3ed2060d6"


upgrade, downgrade = steps.adds_columns("eval_runs", ("contracts", sa.JSON()))
