"""ab_tests record the regression rule's reading: severity, criterion, reason code, margin, interval, family

Revision ID: 5c1e9a7d2b40
Revises: 729886bfdb99
Create Date: 2026-12-01 10:30:00.000000
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa

from evalops.warehouse.migrations import steps

revision: str = '5c1e9a7d2b40'
down_revision: str | Sequence[str] | None = '729886bfdb99'

upgrade, downgrade = steps.adds_columns(
    'ab_tests',
    ('severity', sa.String(length=20)),
    ('criterion', sa.String(length=50)),
    ('reason_code', sa.String(length=50)),
    ('margin', sa.Double()),
    ('interval_low', sa.Double()),
    ('interval_high', sa.Double()),
    ('interval_level', sa.Double()),
    ('family_size', sa.Integer()),
    ('family', sa.String(length=50)),
)
