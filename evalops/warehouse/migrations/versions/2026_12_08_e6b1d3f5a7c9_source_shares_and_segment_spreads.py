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

from evalops.warehouse.migrations import steps

revision: str = 'e6b1d3f5a7c9'
down_revision: str | Sequence[str] | None = 'd4a8c2e6f1b3'


def upgrade() -> None:
    steps.create_table(
        "source_shares",
        *steps.run_key("source_shares"),
        sa.Column("source", sa.String(length=200), nullable=False),
        sa.Column("field", sa.String(length=100), nullable=False),
        *steps.typed_columns(sa.Integer(), "k", "slots", "total", nullable=False),
        sa.Column("share", sa.Double(), nullable=False),
        *steps.typed_columns(sa.Integer(), "judged", "relevant", nullable=False),
        *steps.typed_columns(sa.Double(), "precision", "baseline_share", "shift", "bound"),
        steps.primary_key("source_shares", "run_id", "source"),
    )
    steps.create_table(
        "segment_spreads",
        *steps.run_key("segment_spreads"),
        sa.Column("facet", sa.String(length=40), nullable=False),
        *steps.typed_columns(sa.String(length=200), "segment", "measure", nullable=False),
        sa.Column("n", sa.Integer(), nullable=False),
        *steps.typed_columns(sa.Double(), "mean", "std", "var", "p10", "median", "p90"),
        steps.primary_key("segment_spreads", "run_id", "facet", "segment", "measure"),
    )


def downgrade() -> None:
    steps.drop_table("segment_spreads")
    steps.drop_table("source_shares")
