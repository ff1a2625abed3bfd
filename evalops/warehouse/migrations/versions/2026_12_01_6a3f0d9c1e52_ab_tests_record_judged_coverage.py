"""ab_tests record the judged coverage of each comparison and its per-segment reading

Revision ID: 6a3f0d9c1e52
Revises: 5b8e21c4d9a7
Create Date: 2026-12-01 14:00:00.000000
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op


revision: str = '6a3f0d9c1e52'
down_revision: str | Sequence[str] | None = '5b8e21c4d9a7'
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table('ab_tests', schema=None) as batch_op:
        batch_op.add_column(sa.Column('judged_coverage', sa.JSON(), nullable=True))
        batch_op.add_column(sa.Column('segments', sa.JSON(), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table('ab_tests', schema=None) as batch_op:
        batch_op.drop_column('segments')
        batch_op.drop_column('judged_coverage')
