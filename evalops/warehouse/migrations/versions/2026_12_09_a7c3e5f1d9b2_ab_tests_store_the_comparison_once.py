"""ab_tests store the comparison once: its record, and the columns SQL reads (decision, policy)

Every reader reads a stored comparison from ``record`` (revision f2a9c4e7b1d6 gave every row one), so the
columns that copied its numbers and words (n, means, delta and its interval, test, p-values, d_z and its
interval, wins/ties/losses, reasons, the rule's reading, the judged coverage and the holes-relevant bound)
are dropped. ``decision`` (the dashboard's trend, SQL) and ``policy`` (the pooled test's restart check)
stay as columns; ``family`` and ``segments`` are not fields of the comparison. The downgrade adds the columns
back and fills them from the record.

Revision ID: a7c3e5f1d9b2
Revises: f2a9c4e7b1d6
Create Date: 2026-12-09 10:00:00.000000
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import sqlalchemy as sa
from alembic import context, op

from evalops.warehouse.migrations import steps
from evalops.warehouse.types import NaNFloat

revision: str = 'a7c3e5f1d9b2'
down_revision: str | Sequence[str] | None = 'f2a9c4e7b1d6'

# the columns that copied a field of the record, in the table's former order
_COPIED = ("n", "baseline_mean", "candidate_mean", "delta", "delta_ci_low", "delta_ci_high", "ci_level", "test",
           "p_value", "p_adjusted", "d_z", "d_z_ci_low", "d_z_ci_high", "wins", "ties", "losses", "reasons",
           "severity", "criterion", "reason_code", "margin", "interval_low", "interval_high", "interval_level",
           "family_size", "judged_coverage", "delta_holes_relevant")
# the record's field of each, where it is not the column's name ("": none, the downgrade computes it)
_FIELDS = {"ci_level": "", "d_z": "effect_size_dz", "d_z_ci_low": "", "d_z_ci_high": "", "delta_holes_relevant": ""}
_FORMER = steps.ab_tests_table(record_required=True)
# (column, type, NOT NULL, the record's field it copied)
_COPIES: tuple[tuple[str, Any, bool, str], ...] = tuple(
    (name, _FORMER.c[name].type, not _FORMER.c[name].nullable, _FIELDS.get(name, name)) for name in _COPIED)


def upgrade() -> None:
    steps.drop_columns('ab_tests', [name for name, *_ in _COPIES], copy_from=steps.ab_tests_table(record_required=True))


def _confidence(policy: dict[str, Any]) -> float:
    alpha = float(policy.get("alpha", 0.05))
    return 1.0 - alpha  # Policy.confidence


def _columns(record: dict[str, Any]) -> dict[str, Any]:
    """The copied columns of a record, as the mapper wrote them before this revision."""
    values = {name: record.get(field) for name, _, _, field in _COPIES if field}
    ci = record.get("effect_size_ci") or (None, None)
    values.update(ci_level=_confidence(record.get("policy") or {}), d_z_ci_low=ci[0], d_z_ci_high=ci[1],
                  delta_holes_relevant=(record.get("judged_coverage") or {}).get("holes_relevant_delta"),
                  reasons=[str(r) for r in record.get("reasons") or []], n=record.get("n") or 0,
                  test=record.get("test") or "", wins=record.get("wins") or 0, ties=record.get("ties") or 0,
                  losses=record.get("losses") or 0)
    return {k: (None if isinstance(v, float) and not math.isfinite(v) else v) for k, v in values.items()}


def downgrade() -> None:
    steps.add_columns('ab_tests', [(name, kind) for name, kind, _, _ in _COPIES])
    ab = sa.table("ab_tests", sa.column("id", sa.Integer()), sa.column("record", sa.JSON()),
                  *(sa.column(name, NaNFloat() if isinstance(kind, sa.Double) else kind)
                    for name, kind, _, _ in _COPIES))
    if not context.is_offline_mode():  # a SQL script of the downgrade cannot read the rows it fills
        conn = op.get_bind()
        for row_id, record in conn.execute(sa.select(ab.c.id, ab.c.record)).all():
            conn.execute(sa.update(ab).where(ab.c.id == row_id).values(**_columns(record or {})))
    with op.batch_alter_table('ab_tests', schema=None) as batch_op:
        for name, kind, required, _ in _COPIES:
            if required:
                batch_op.alter_column(name, existing_type=kind, nullable=False)
