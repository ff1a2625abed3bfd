"""ab_tests record the judged coverage of each comparison and its per-segment reading

Revision ID: 6a3f0d9c1e52
Revises: 5b8e21c4d9a7
Create Date: 2026-12-01 14:00:00.000000
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa

from evalops.warehouse.migrations import steps

revision: str = '6a3f0d9c1e52'
down_revision: str | Sequence[str] | None = '5b8e21c4d9a7'


upgrade, downgrade = steps.adds_columns('ab_tests', ('judged_coverage', sa.JSON()), ('segments', sa.JSON()))
