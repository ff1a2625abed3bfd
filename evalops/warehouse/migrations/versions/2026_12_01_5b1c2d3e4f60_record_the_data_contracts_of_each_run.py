"""record the data contracts of each run

Revision ID: 5b1c2d3e4f60
Revises: 07f3ed2060d6
Create Date: 2026-12-01 10:30:00
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "5b1c2d3e4f60"
down_revision: str | Sequence[str] | None = "07f3ed2060d6"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table("eval_runs") as batch:
        batch.add_column(sa.Column("contracts", sa.JSON(), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("eval_runs") as batch:
        batch.drop_column("contracts")
