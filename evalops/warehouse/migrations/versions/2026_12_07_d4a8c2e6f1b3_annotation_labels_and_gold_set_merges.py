"""annotation labels, adjudications and gold-set merges (annotation_labels, annotation_adjudications,
gold_set_merges)

People label the annotation queue in the dashboard: each answer is a row of ``annotation_labels`` (one per
item and annotator), an adjudicator's settled grade a row of ``annotation_adjudications``, and each
gold-set version that ``evalops gold merge`` makes from them a row of ``gold_set_merges`` with its
provenance.

Revision ID: d4a8c2e6f1b3
Revises: c5e2a7f1b9d3
Create Date: 2026-12-07 09:00:00.000000
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = 'd4a8c2e6f1b3'
down_revision: str | Sequence[str] | None = 'c5e2a7f1b9d3'
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "annotation_labels",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("item_id", sa.String(length=64), nullable=False),
        sa.Column("source", sa.String(length=20), nullable=False),
        sa.Column("query_id", sa.String(length=500), nullable=True),
        sa.Column("doc_id", sa.String(length=500), nullable=True),
        sa.Column("annotator", sa.String(length=200), nullable=False),
        sa.Column("grade", sa.Integer(), nullable=True),
        sa.Column("comment", sa.Text(), nullable=True),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.CheckConstraint("source IN ('generated', 'sampled_query', 'hole')",
                           name=op.f("ck_annotation_labels_source")),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_annotation_labels")),
        sa.UniqueConstraint("item_id", "annotator", name=op.f("uq_annotation_labels_item_id_annotator")),
    )
    op.create_index(op.f("ix_annotation_labels_item_id"), "annotation_labels", ["item_id"], unique=False)
    op.create_table(
        "annotation_adjudications",
        sa.Column("item_id", sa.String(length=64), nullable=False),
        sa.Column("query_id", sa.String(length=500), nullable=True),
        sa.Column("doc_id", sa.String(length=500), nullable=True),
        sa.Column("grade", sa.Integer(), nullable=False),
        sa.Column("adjudicator", sa.String(length=200), nullable=False),
        sa.Column("comment", sa.Text(), nullable=True),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("item_id", name=op.f("pk_annotation_adjudications")),
    )
    op.create_table(
        "gold_set_merges",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("gold_set", sa.String(length=200), nullable=False),
        sa.Column("number", sa.Integer(), nullable=False),
        sa.Column("version", sa.String(length=128), nullable=False),
        sa.Column("parent_version", sa.String(length=128), nullable=True),
        sa.Column("path", sa.Text(), nullable=False),
        sa.Column("merged_by", sa.String(length=200), nullable=False),
        sa.Column("n_added", sa.Integer(), nullable=False),
        sa.Column("provenance", sa.JSON(), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_gold_set_merges")),
        sa.UniqueConstraint("gold_set", "number", name=op.f("uq_gold_set_merges_gold_set_number")),
    )


def downgrade() -> None:
    op.drop_table("gold_set_merges")
    op.drop_table("annotation_adjudications")
    op.drop_index(op.f("ix_annotation_labels_item_id"), table_name="annotation_labels")
    op.drop_table("annotation_labels")
