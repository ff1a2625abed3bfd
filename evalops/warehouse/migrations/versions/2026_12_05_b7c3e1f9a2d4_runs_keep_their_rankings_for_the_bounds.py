"""runs keep their rankings for the bounds of the unjudged documents (run_rankings)

A comparison's bounds give each unjudged (query, document) one grade in both runs (evalops.bounds), so they
need the baseline run's ranking, which may have been scored on another day: every run keeps its judged
documents and its unjudged ones down to the deepest compared cutoff, as one Parquet blob.

Revision ID: b7c3e1f9a2d4
Revises: a4d2f6b8c1e9
Create Date: 2026-12-05 06:00:00.000000
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = 'b7c3e1f9a2d4'
down_revision: str | Sequence[str] | None = 'a4d2f6b8c1e9'
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table('run_rankings',
    sa.Column('run_id', sa.Integer(), nullable=False),
    sa.Column('depth', sa.Integer(), nullable=False),
    sa.Column('n_rows', sa.Integer(), nullable=False),
    sa.Column('data', sa.LargeBinary(), nullable=False),
    sa.ForeignKeyConstraint(['run_id'], ['eval_runs.id'], name=op.f('fk_run_rankings_run_id_eval_runs'),
                            ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('run_id', name=op.f('pk_run_rankings'))
    )


def downgrade() -> None:
    op.drop_table('run_rankings')
