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

from evalops.warehouse.types import NaNFloat

revision: str = 'a7c3e5f1d9b2'
down_revision: str | Sequence[str] | None = 'f2a9c4e7b1d6'
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

# (column, type, NOT NULL, the record's field it copied) in the table's former order
_COPIES: tuple[tuple[str, Any, bool, str], ...] = (
    ("n", sa.Integer(), True, "n"),
    ("baseline_mean", sa.Double(), False, "baseline_mean"),
    ("candidate_mean", sa.Double(), False, "candidate_mean"),
    ("delta", sa.Double(), False, "delta"),
    ("delta_ci_low", sa.Double(), False, "delta_ci_low"),
    ("delta_ci_high", sa.Double(), False, "delta_ci_high"),
    ("ci_level", sa.Double(), True, ""),
    ("test", sa.String(length=100), True, "test"),
    ("p_value", sa.Double(), False, "p_value"),
    ("p_adjusted", sa.Double(), False, "p_adjusted"),
    ("d_z", sa.Double(), False, "effect_size_dz"),
    ("d_z_ci_low", sa.Double(), False, ""),
    ("d_z_ci_high", sa.Double(), False, ""),
    ("wins", sa.Integer(), True, "wins"),
    ("ties", sa.Integer(), True, "ties"),
    ("losses", sa.Integer(), True, "losses"),
    ("reasons", sa.JSON(), True, "reasons"),
    ("severity", sa.String(length=20), False, "severity"),
    ("criterion", sa.String(length=50), False, "criterion"),
    ("reason_code", sa.String(length=50), False, "reason_code"),
    ("margin", sa.Double(), False, "margin"),
    ("interval_low", sa.Double(), False, "interval_low"),
    ("interval_high", sa.Double(), False, "interval_high"),
    ("interval_level", sa.Double(), False, "interval_level"),
    ("family_size", sa.Integer(), False, "family_size"),
    ("judged_coverage", sa.JSON(), False, "judged_coverage"),
    ("delta_holes_relevant", sa.Double(), False, ""),
)




def _ab_tests(*, record_required: bool) -> sa.Table:
    """ab_tests as revision e6b1d3f5a7c9 left it (``record`` nullable) or as revision f2a9c4e7b1d6 leaves it:
    described rather than reflected, so that ``evalops db upgrade --sql`` writes the SQLite script too."""
    double = ("baseline_mean", "candidate_mean", "delta", "delta_ci_low", "delta_ci_high")
    return sa.Table(
        'ab_tests', sa.MetaData(),
        sa.Column('id', sa.Integer(), nullable=False),
        sa.Column('baseline_run_id', sa.Integer(), nullable=False),
        sa.Column('candidate_run_id', sa.Integer(), nullable=False),
        sa.Column('measure_id', sa.Integer(), nullable=False),
        sa.Column('n', sa.Integer(), nullable=False),
        *(sa.Column(name, sa.Double(), nullable=True) for name in double),
        sa.Column('ci_level', sa.Double(), nullable=False),
        sa.Column('test', sa.String(length=100), nullable=False),
        *(sa.Column(name, sa.Double(), nullable=True)
          for name in ("p_value", "p_adjusted", "d_z", "d_z_ci_low", "d_z_ci_high")),
        *(sa.Column(name, sa.Integer(), nullable=False) for name in ("wins", "ties", "losses")),
        sa.Column('decision', sa.String(length=50), nullable=False),
        sa.Column('reasons', sa.JSON(), nullable=False),
        sa.Column('policy', sa.JSON(), nullable=False),
        sa.Column('created_at', sa.DateTime(timezone=True), nullable=False),
        sa.Column('severity', sa.String(length=20), nullable=True),
        sa.Column('criterion', sa.String(length=50), nullable=True),
        sa.Column('reason_code', sa.String(length=50), nullable=True),
        *(sa.Column(name, sa.Double(), nullable=True)
          for name in ("margin", "interval_low", "interval_high", "interval_level")),
        sa.Column('family_size', sa.Integer(), nullable=True),
        sa.Column('family', sa.String(length=50), nullable=True),
        sa.Column('judged_coverage', sa.JSON(), nullable=True),
        sa.Column('segments', sa.JSON(), nullable=True),
        sa.Column('delta_holes_relevant', sa.Double(), nullable=True),
        sa.Column('record', sa.JSON(), nullable=not record_required),
        sa.ForeignKeyConstraint(['baseline_run_id'], ['eval_runs.id'], name='fk_ab_tests_baseline_run_id_eval_runs'),
        sa.ForeignKeyConstraint(['candidate_run_id'], ['eval_runs.id'],
                                name='fk_ab_tests_candidate_run_id_eval_runs'),
        sa.ForeignKeyConstraint(['measure_id'], ['measures.id'], name='fk_ab_tests_measure_id_measures'),
        sa.PrimaryKeyConstraint('id', name='pk_ab_tests'),
        sa.UniqueConstraint('candidate_run_id', 'baseline_run_id', 'measure_id',
                            name='uq_ab_tests_candidate_run_id_baseline_run_id_measure_id'),
        sa.Index('ix_ab_tests_baseline_run_id', 'baseline_run_id'),
    )


def upgrade() -> None:
    with op.batch_alter_table('ab_tests', schema=None, copy_from=_ab_tests(record_required=True)) as batch_op:
        for name, *_ in _COPIES:
            batch_op.drop_column(name)


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
    with op.batch_alter_table('ab_tests', schema=None) as batch_op:
        for name, kind, _, _ in _COPIES:
            batch_op.add_column(sa.Column(name, kind, nullable=True))
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
