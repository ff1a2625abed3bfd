"""query texts and run timings, for the dashboard

Revision ID: 5d1a8e0c3b7f
Revises: 5b1c2d3e4f60
Create Date: 2026-12-01 10:20:00
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa

from evalops.warehouse.migrations import steps

revision: str = '5d1a8e0c3b7f'
down_revision: str | Sequence[str] | None = '5b1c2d3e4f60'


def upgrade() -> None:
    steps.create_table('query_texts',
                       sa.Column('query_set_version', sa.String(length=128), nullable=False),
                       sa.Column('query_id', sa.String(length=500), nullable=False),
                       sa.Column('text', sa.Text(), nullable=False),
                       steps.primary_key('query_texts', 'query_set_version', 'query_id'))
    steps.create_table('run_timings',
                       *steps.run_key('run_timings'),
                       *steps.typed_columns(sa.Double(), 'latency_p50_ms', 'latency_p95_ms', 'latency_max_ms',
                                            'wall_seconds'),
                       sa.Column('n_failed', sa.Integer(), nullable=False),
                       sa.Column('recorded_at', sa.DateTime(timezone=True), nullable=False),
                       steps.primary_key('run_timings', 'run_id'))


def downgrade() -> None:
    steps.drop_table('run_timings')
    steps.drop_table('query_texts')
