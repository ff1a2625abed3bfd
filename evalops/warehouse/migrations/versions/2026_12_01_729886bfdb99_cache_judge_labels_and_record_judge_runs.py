"""cache judge labels (judgments) and record each judge step's usage and results (judge_runs)

Revision ID: 729886bfdb99
Revises: 5d1a8e0c3b7f
Create Date: 2026-12-01 10:48:58
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = '729886bfdb99'
down_revision: str | Sequence[str] | None = '5d1a8e0c3b7f'
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table('judge_runs',
    sa.Column('id', sa.Integer(), nullable=False),
    sa.Column('dag_id', sa.String(length=250), nullable=False),
    sa.Column('dag_run_id', sa.String(length=250), nullable=False),
    sa.Column('scope', sa.String(length=200), nullable=False),
    sa.Column('judge', sa.JSON(), nullable=False),
    sa.Column('prompt', sa.String(length=100), nullable=False),
    sa.Column('items', sa.Integer(), nullable=False),
    sa.Column('requests', sa.Integer(), nullable=False),
    sa.Column('cache_hits', sa.Integer(), nullable=False),
    sa.Column('missing', sa.Integer(), nullable=False),
    sa.Column('missing_reasons', sa.JSON(), nullable=False),
    sa.Column('input_tokens', sa.Integer(), nullable=False),
    sa.Column('output_tokens', sa.Integer(), nullable=False),
    sa.Column('cost', sa.Double(), nullable=False),
    sa.Column('gate', sa.JSON(), nullable=False),
    sa.Column('agreement', sa.JSON(), nullable=True),
    sa.Column('results', sa.JSON(), nullable=False),
    sa.Column('created_at', sa.DateTime(timezone=True), nullable=False),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_judge_runs')),
    sa.UniqueConstraint('dag_id', 'dag_run_id', 'scope', name=op.f('uq_judge_runs_dag_id_dag_run_id_scope'))
    )
    op.create_table('judgments',
    sa.Column('query_hash', sa.String(length=64), nullable=False),
    sa.Column('document_hash', sa.String(length=64), nullable=False),
    sa.Column('judge_model', sa.String(length=200), nullable=False),
    sa.Column('prompt', sa.String(length=100), nullable=False),
    sa.Column('decoding', sa.String(length=200), nullable=False),
    sa.Column('sample', sa.Integer(), nullable=False),
    sa.Column('label', sa.Double(), nullable=True),
    sa.Column('detail', sa.JSON(), nullable=False),
    sa.Column('offline', sa.Boolean(), nullable=False),
    sa.Column('input_tokens', sa.Integer(), nullable=False),
    sa.Column('output_tokens', sa.Integer(), nullable=False),
    sa.Column('cost', sa.Double(), nullable=False),
    sa.Column('created_at', sa.DateTime(timezone=True), nullable=False),
    sa.PrimaryKeyConstraint('query_hash', 'document_hash', 'judge_model', 'prompt', 'decoding', 'sample', name=op.f('pk_judgments'))
    )


def downgrade() -> None:
    op.drop_table('judgments')
    op.drop_table('judge_runs')
