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

from evalops.warehouse.migrations import steps

revision: str = 'd4a8c2e6f1b3'
down_revision: str | Sequence[str] | None = 'c5e2a7f1b9d3'


def upgrade() -> None:
    steps.create_table(
        "annotation_labels",
        steps.id_column(),
        sa.Column("item_id", sa.String(length=64), nullable=False),
        sa.Column("source", sa.String(length=20), nullable=False),
        *steps.typed_columns(sa.String(length=500), "query_id", "doc_id"),
        sa.Column("annotator", sa.String(length=200), nullable=False),
        sa.Column("grade", sa.Integer(), nullable=True),
        sa.Column("comment", sa.Text(), nullable=True),
        steps.created_at(),
        steps.check("annotation_labels", "source", "source IN ('generated', 'sampled_query', 'hole')"),
        steps.primary_key("annotation_labels", "id"),
        steps.unique("annotation_labels", "item_id", "annotator"),
        indexes=[["item_id"]],
    )
    steps.create_table(
        "annotation_adjudications",
        sa.Column("item_id", sa.String(length=64), nullable=False),
        *steps.typed_columns(sa.String(length=500), "query_id", "doc_id"),
        sa.Column("grade", sa.Integer(), nullable=False),
        sa.Column("adjudicator", sa.String(length=200), nullable=False),
        sa.Column("comment", sa.Text(), nullable=True),
        steps.created_at(),
        steps.primary_key("annotation_adjudications", "item_id"),
    )
    steps.create_table(
        "gold_set_merges",
        steps.id_column(),
        sa.Column("gold_set", sa.String(length=200), nullable=False),
        sa.Column("number", sa.Integer(), nullable=False),
        sa.Column("version", sa.String(length=128), nullable=False),
        sa.Column("parent_version", sa.String(length=128), nullable=True),
        sa.Column("path", sa.Text(), nullable=False),
        sa.Column("merged_by", sa.String(length=200), nullable=False),
        sa.Column("n_added", sa.Integer(), nullable=False),
        sa.Column("provenance", sa.JSON(), nullable=False),
        steps.created_at(),
        steps.primary_key("gold_set_merges", "id"),
        steps.unique("gold_set_merges", "gold_set", "number"),
    )


def downgrade() -> None:
    steps.drop_table("gold_set_merges")
    steps.drop_table("annotation_adjudications")
    steps.drop_table("annotation_labels", indexes=[["item_id"]])
