"""cache judge labels (judgments) and record each judge step's usage and results (judge_runs)

Revision ID: 729886bfdb99
Revises: 5d1a8e0c3b7f
Create Date: 2026-12-01 10:48:58
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa

from evalops.warehouse.migrations import steps

revision: str = '729886bfdb99'
down_revision: str | Sequence[str] | None = '5d1a8e0c3b7f'


def upgrade() -> None:
    steps.create_table('judge_runs',
                       steps.id_column(),
                       *steps.typed_columns(sa.String(length=250), 'dag_id', 'dag_run_id', nullable=False),
                       sa.Column('scope', sa.String(length=200), nullable=False),
                       sa.Column('judge', sa.JSON(), nullable=False),
                       sa.Column('prompt', sa.String(length=100), nullable=False),
                       *steps.typed_columns(sa.Integer(), 'items', 'requests', 'cache_hits', 'missing', nullable=False),
                       sa.Column('missing_reasons', sa.JSON(), nullable=False),
                       *steps.typed_columns(sa.Integer(), 'input_tokens', 'output_tokens', nullable=False),
                       sa.Column('cost', sa.Double(), nullable=False),
                       sa.Column('gate', sa.JSON(), nullable=False),
                       sa.Column('agreement', sa.JSON(), nullable=True),
                       sa.Column('results', sa.JSON(), nullable=False),
                       steps.created_at(),
                       steps.primary_key('judge_runs', 'id'),
                       steps.unique('judge_runs', 'dag_id', 'dag_run_id', 'scope'))
    steps.create_table('judgments',
                       sa.Column('query_hash', sa.String(length=64), nullable=False),
                       sa.Column('document_hash', sa.String(length=64), nullable=False),
                       sa.Column('judge_model', sa.String(length=200), nullable=False),
                       sa.Column('prompt', sa.String(length=100), nullable=False),
                       sa.Column('decoding', sa.String(length=200), nullable=False),
                       sa.Column('sample', sa.Integer(), nullable=False),
                       sa.Column('label', sa.Double(), nullable=True),
                       sa.Column('detail', sa.JSON(), nullable=False),
                       sa.Column('offline', sa.Boolean(), nullable=False),
                       *steps.typed_columns(sa.Integer(), 'input_tokens', 'output_tokens', nullable=False),
                       sa.Column('cost', sa.Double(), nullable=False),
                       steps.created_at(),
                       steps.primary_key('judgments', 'query_hash', 'document_hash', 'judge_model', 'prompt',
                                         'decoding', 'sample'))


def downgrade() -> None:
    steps.drop_table('judgments')
    steps.drop_table('judge_runs')
