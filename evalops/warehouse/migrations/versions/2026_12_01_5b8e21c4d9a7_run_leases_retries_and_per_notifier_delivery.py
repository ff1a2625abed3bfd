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

revision: str = "5b8e21c4d9a7"
down_revision: str | Sequence[str] | None = "5c1e9a7d2b40"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

OLD_RUN = "status IN ('running', 'succeeded', 'partial', 'failed')"
NEW_RUN = "status IN ('running', 'succeeded', 'partial', 'failed', 'abandoned')"
OLD_ALERT = "delivery_status IN ('pending', 'delivered', 'undelivered')"
NEW_ALERT = "delivery_status IN ('pending', 'delivered', 'undelivered', 'unknown')"


def _offline_sqlite() -> bool:
    """``upgrade --sql`` on SQLite: a CHECK constraint can only change by copying the table, which needs the
    live table to reflect; the SQL script then adds the columns and leaves the old constraints (a note in the
    script says so)."""
    context = op.get_context()
    return context.as_sql and context.dialect.name == "sqlite"


def upgrade() -> None:
    new_columns = [
        sa.Column("n_retries", sa.Integer(), server_default=sa.text("0"), nullable=False),
        sa.Column("lease_expires_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("abandoned_at", sa.DateTime(timezone=True), nullable=True),
    ]
    if _offline_sqlite():
        for column in new_columns:
            op.add_column("eval_runs", column)
        op.execute("-- SQLite: the status CHECK constraints of eval_runs and alerts keep their old values in this "
                   "script ('abandoned' and 'unknown' need `evalops db upgrade` on the live database)")
    else:
        with op.batch_alter_table("eval_runs") as batch:
            for column in new_columns:
                batch.add_column(column)
            batch.drop_constraint(op.f("ck_eval_runs_status"), type_="check")
            batch.create_check_constraint("status", NEW_RUN)
        with op.batch_alter_table("alerts") as batch:
            batch.drop_constraint(op.f("ck_alerts_delivery_status"), type_="check")
            batch.create_check_constraint("delivery_status", NEW_ALERT)
    op.create_table(
        "alert_deliveries",
        sa.Column("alert_id", sa.Integer(), nullable=False),
        sa.Column("notifier", sa.String(length=100), nullable=False),
        sa.Column("status", sa.String(length=20), nullable=False),
        sa.Column("attempts", sa.Integer(), nullable=False),
        sa.Column("last_attempt_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("next_attempt_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("delivered_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("error", sa.Text(), nullable=True),
        sa.CheckConstraint("status IN ('pending', 'delivered', 'undelivered', 'unknown')",
                           name=op.f("ck_alert_deliveries_status")),
        sa.ForeignKeyConstraint(["alert_id"], ["alerts.id"], name=op.f("fk_alert_deliveries_alert_id_alerts"),
                                ondelete="CASCADE"),
        sa.PrimaryKeyConstraint("alert_id", "notifier", name=op.f("pk_alert_deliveries")),
    )


def downgrade() -> None:
    op.drop_table("alert_deliveries")
    op.execute("UPDATE alerts SET delivery_status = 'undelivered' WHERE delivery_status = 'unknown'")
    with op.batch_alter_table("alerts") as batch:
        batch.drop_constraint(op.f("ck_alerts_delivery_status"), type_="check")
        batch.create_check_constraint("delivery_status", OLD_ALERT)
    op.execute("UPDATE eval_runs SET status = 'failed' WHERE status = 'abandoned'")
    with op.batch_alter_table("eval_runs") as batch:
        batch.drop_constraint(op.f("ck_eval_runs_status"), type_="check")
        batch.create_check_constraint("status", OLD_RUN)
        batch.drop_column("abandoned_at")
        batch.drop_column("lease_expires_at")
        batch.drop_column("n_retries")
