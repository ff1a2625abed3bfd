"""alerts may be suppressed (an unchanged regression already sent, within the reminder cadence)

A regression found again on a later day, unchanged (same version, baseline, measure and fingerprint, same
severity, its interval within ``alerting.realert_shift``), is stored with ``delivery_status``
``suppressed`` until ``alerting.remind_every_days`` have passed since it was last sent: the row keeps the
day's finding (and the gate's verdict), the notifiers are not asked again.

Revision ID: 7e2a4c9d1b35
Revises: 8e4b7c2a9d31
Create Date: 2026-12-02 01:00:00
"""

from __future__ import annotations

from collections.abc import Sequence

from alembic import op

from evalops.warehouse.migrations import steps

revision: str = "7e2a4c9d1b35"
down_revision: str | Sequence[str] | None = "8e4b7c2a9d31"

OLD_ALERT = "delivery_status IN ('pending', 'delivered', 'undelivered', 'unknown')"
NEW_ALERT = "delivery_status IN ('pending', 'delivered', 'undelivered', 'unknown', 'suppressed')"


def upgrade() -> None:
    if steps.offline_sqlite():
        op.execute("-- SQLite: the delivery_status CHECK constraint of alerts keeps its old values in this script "
                   "('suppressed' needs `evalops db upgrade` on the live database)")
        return
    steps.replace_check("alerts", "delivery_status", NEW_ALERT)


def downgrade() -> None:
    op.execute("UPDATE alerts SET delivery_status = 'delivered' WHERE delivery_status = 'suppressed'")
    if steps.offline_sqlite():
        return
    steps.replace_check("alerts", "delivery_status", OLD_ALERT)
