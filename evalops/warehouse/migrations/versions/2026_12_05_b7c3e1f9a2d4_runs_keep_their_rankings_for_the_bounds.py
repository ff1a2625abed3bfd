"""runs keep their rankings for the bounds of the unjudged documents (run_rankings)

A comparison's bounds give each unjudged (query, document) one grade in both runs (evalops.judged.bounds), so they
need the baseline run's ranking, which may have been scored on another day: every run keeps its judged
documents and its unjudged ones down to the deepest compared cutoff, as one Parquet blob.

Revision ID: b7c3e1f9a2d4
Revises: a4d2f6b8c1e9
Create Date: 2026-12-05 06:00:00.000000
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa

from evalops.warehouse.migrations import steps

revision: str = 'b7c3e1f9a2d4'
down_revision: str | Sequence[str] | None = 'a4d2f6b8c1e9'


def upgrade() -> None:
    steps.create_table('run_rankings',
                       *steps.run_key('run_rankings'),
                       *steps.typed_columns(sa.Integer(), 'depth', 'n_rows', nullable=False),
                       sa.Column('data', sa.LargeBinary(), nullable=False),
                       steps.primary_key('run_rankings', 'run_id'))


def downgrade() -> None:
    steps.drop_table('run_rankings')
