"""query texts and run timings, for the dashboard

Revision ID: 5d1a8e0c3b7f
Revises: 5b1c2d3e4f60
Create Date: 2026-12-01 10:20:00
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op


revision: str = '5d1a8e0c3b7f'
down_revision: str | Sequence[str] | None = '5b1c2d3e4f60'
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table('query_texts',
    sa.Column('query_set_version', sa.String(length=128), nullable=False),
    sa.Column('query_id', sa.String(length=500), nullable=False),
    sa.Column('text', sa.Text(), nullable=False),
    sa.PrimaryKeyConstraint('query_set_version', 'query_id', name=op.f('pk_query_texts'))
    )
    op.create_table('run_timings',
    sa.Column('run_id', sa.Integer(), nullable=False),
    sa.Column('latency_p50_ms', sa.Double(), nullable=True),
    sa.Column('latency_p95_ms', sa.Double(), nullable=True),
    sa.Column('latency_max_ms', sa.Double(), nullable=True),
    sa.Column('wall_seconds', sa.Double(), nullable=True),
    sa.Column('n_failed', sa.Integer(), nullable=False),
    sa.Column('recorded_at', sa.DateTime(timezone=True), nullable=False),
    sa.ForeignKeyConstraint(['run_id'], ['eval_runs.id'], name=op.f('fk_run_timings_run_id_eval_runs'), ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('run_id', name=op.f('pk_run_timings'))
    )


def downgrade() -> None:
    op.drop_table('run_timings')
    op.drop_table('query_texts')
