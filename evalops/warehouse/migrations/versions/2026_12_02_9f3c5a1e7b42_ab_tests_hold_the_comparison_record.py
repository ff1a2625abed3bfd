"""ab_tests hold the comparison's whole record (Comparison.to_record without the per-query deltas)

The details no column holds (worst queries, notes, coverage, test statistic, relative change, query counts,
decision p) are stored with the decision, so the report, alerts, results event and gate read them from the
warehouse alone. Rows stored before this revision keep ``record`` NULL; readers fall back to the columns.

Revision ID: 9f3c5a1e7b42
Revises: 7e2a4c9d1b35
Create Date: 2026-12-02 05:15:00.000000
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa

from evalops.warehouse.migrations import steps

revision: str = '9f3c5a1e7b42'
down_revision: str | Sequence[str] | None = '7e2a4c9d1b35'


upgrade, downgrade = steps.adds_columns('ab_tests', ('record', sa.JSON()))
