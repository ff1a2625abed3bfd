"""source shares and segment spreads (source_shares, segment_spreads)

Each run keeps its sources' shares of the top-k slots with their precision and the shift against the
baseline (``evalops.sources``), and its mean and spread per segment (``evalops.spread``), so the history
and the dashboard show them.

Revision ID: e6b1d3f5a7c9
Revises: d4a8c2e6f1b3
Create Date: 2026-12-08 09:00:00.000000
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = 'e6b1d3f5a7c9'
down_revision: str | Sequence[str] | None = 'd4a8c2e6f1b3'
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "source_shares",
        sa.Column("run_id", sa.Integer(), nullable=False),
        sa.Column("source", sa.String(length=200), nullable=False),
        sa.Column("field", sa.String(length=100), nullable=False),
        sa.Column("k", sa.Integer(), nullable=False),
        sa.Column("slots", sa.Integer(), nullable=False),
        sa.Column("total", sa.Integer(), nullable=False),
        sa.Column("share", sa.Double(), nullable=False),
        sa.Column("judged", sa.Integer(), nullable=False),
        sa.Column("relevant", sa.Integer(), nullable=False),
        sa.Column("precision", sa.Double(), nullable=True),
        sa.Column("baseline_share", sa.Double(), nullable=True),
        sa.Column("shift", sa.Double(), nullable=True),
        sa.Column("bound", sa.Double(), nullable=True),
        sa.ForeignKeyConstraint(["run_id"], ["eval_runs.id"], name=op.f("fk_source_shares_run_id_eval_runs"),
                                ondelete="CASCADE"),
        sa.PrimaryKeyConstraint("run_id", "source", name=op.f("pk_source_shares")),
    )
    op.create_table(
        "segment_spreads",
        sa.Column("run_id", sa.Integer(), nullable=False),
        sa.Column("facet", sa.String(length=40), nullable=False),
        sa.Column("segment", sa.String(length=200), nullable=False),
        sa.Column("measure", sa.String(length=200), nullable=False),
        sa.Column("n", sa.Integer(), nullable=False),
        sa.Column("mean", sa.Double(), nullable=True),
        sa.Column("std", sa.Double(), nullable=True),
        sa.Column("var", sa.Double(), nullable=True),
        sa.Column("p10", sa.Double(), nullable=True),
        sa.Column("median", sa.Double(), nullable=True),
        sa.Column("p90", sa.Double(), nullable=True),
        sa.ForeignKeyConstraint(["run_id"], ["eval_runs.id"], name=op.f("fk_segment_spreads_run_id_eval_runs"),
                                ondelete="CASCADE"),
        sa.PrimaryKeyConstraint("run_id", "facet", "segment", "measure", name=op.f("pk_segment_spreads")),
    )


def downgrade() -> None:
    op.drop_table("segment_spreads")
    op.drop_table("source_shares")
