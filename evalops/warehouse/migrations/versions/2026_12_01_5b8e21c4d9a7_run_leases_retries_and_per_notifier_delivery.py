"""run leases, retry counts and per-notifier alert delivery

``eval_runs`` gains ``n_retries``, ``lease_expires_at`` and ``abandoned_at`` and the ``abandoned`` status;
alerts may be ``unknown`` (a timed-out delivery the receiver may have got); ``alert_deliveries`` keeps the
delivery state per notifier.

Revision ID: 5b8e21c4d9a7
Revises: 5c1e9a7d2b40
Create Date: 2026-12-01 10:20:00
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

from evalops.warehouse.migrations import steps

revision: str = "5b8e21c4d9a7"
down_revision: str | Sequence[str] | None = "5c1e9a7d2b40"

OLD_RUN = "status IN ('running', 'succeeded', 'partial', 'failed')"
NEW_RUN = "status IN ('running', 'succeeded', 'partial', 'failed', 'abandoned')"
OLD_ALERT = "delivery_status IN ('pending', 'delivered', 'undelivered')"
NEW_ALERT = "delivery_status IN ('pending', 'delivered', 'undelivered', 'unknown')"


def upgrade() -> None:
    new_columns = [
        sa.Column("n_retries", sa.Integer(), server_default=sa.text("0"), nullable=False),
        sa.Column("lease_expires_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("abandoned_at", sa.DateTime(timezone=True), nullable=True),
    ]
    if steps.offline_sqlite():
        # the SQL script adds the columns and leaves the old constraints (copying a table needs the live one)
        for column in new_columns:
            op.add_column("eval_runs", column)
        op.execute("-- SQLite: the status CHECK constraints of eval_runs and alerts keep their old values in this "
                   "script ('abandoned' and 'unknown' need `evalops db upgrade` on the live database)")
    else:
        with op.batch_alter_table("eval_runs") as batch:
            for column in new_columns:
                batch.add_column(column)
            steps.replace_check("eval_runs", "status", NEW_RUN, batch)
        steps.replace_check("alerts", "delivery_status", NEW_ALERT)
    steps.create_table(
        "alert_deliveries",
        sa.Column("alert_id", sa.Integer(), nullable=False),
        sa.Column("notifier", sa.String(length=100), nullable=False),
        sa.Column("status", sa.String(length=20), nullable=False),
        sa.Column("attempts", sa.Integer(), nullable=False),
        *steps.typed_columns(sa.DateTime(timezone=True), "last_attempt_at", "next_attempt_at", "delivered_at"),
        sa.Column("error", sa.Text(), nullable=True),
        steps.check("alert_deliveries", "status", "status IN ('pending', 'delivered', 'undelivered', 'unknown')"),
        steps.foreign_key("alert_deliveries", "alert_id", "alerts.id", ondelete="CASCADE"),
        steps.primary_key("alert_deliveries", "alert_id", "notifier"),
    )


def downgrade() -> None:
    steps.drop_table("alert_deliveries")
    op.execute("UPDATE alerts SET delivery_status = 'undelivered' WHERE delivery_status = 'unknown'")
    steps.replace_check("alerts", "delivery_status", OLD_ALERT)
    op.execute("UPDATE eval_runs SET status = 'failed' WHERE status = 'abandoned'")
    with op.batch_alter_table("eval_runs") as batch:
        steps.replace_check("eval_runs", "status", OLD_RUN, batch)
        for name in ("abandoned_at", "lease_expires_at", "n_retries"):
            batch.drop_column(name)
