"""every ab_tests row holds its comparison's record: rows stored before the record column get it from their columns

The readers read a stored comparison from ``record`` alone (``evalops.warehouse.abtests.ab_test_of``), so
the rows written before revision 9f3c5a1e7b42 (``record`` NULL) get the record their columns hold: the
fields the columns keep, the names ``retriever@version`` of both runs, the measure's direction, whether it
alerted (a ``gold`` regression its policy's ``alert_on`` notifies) and, for what no column kept (worst
queries, notes, coverage, test statistic, ...), the value an older record reads as (``None`` or the field's
default; the policy without the settings this release no longer has, such as ``min_effect``, which the
``policy`` column keeps). The column is then NOT NULL. A SQL script of the upgrade (``evalops db upgrade
--sql``) cannot move rows: a warehouse with rows stored before the record column is upgraded online.
The downgrade makes it nullable again and keeps the records.

Revision ID: f2a9c4e7b1d6
Revises: e6b1d3f5a7c9
Create Date: 2026-12-09 09:00:00.000000
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Sequence
from typing import Any

import sqlalchemy as sa
from alembic import context, op

from evalops.context import parse_any_measure
from evalops.stats.decision import Policy
from evalops.warehouse.migrations import steps
from evalops.warehouse.types import NaNFloat

revision: str = 'f2a9c4e7b1d6'
down_revision: str | Sequence[str] | None = 'e6b1d3f5a7c9'

# the columns that hold a field of the comparison under the field's name
_SAME_NAME_FLOATS = ("baseline_mean", "candidate_mean", "delta", "delta_ci_low", "delta_ci_high", "p_value",
                     "p_adjusted", "margin", "interval_low", "interval_high", "interval_level")
_SAME_NAME_OTHERS = ("n", "test", "wins", "ties", "losses", "decision", "severity", "criterion", "reason_code",
                     "family_size", "judged_coverage")

_ab = sa.table(
    "ab_tests", sa.column("id", sa.Integer()), sa.column("baseline_run_id", sa.Integer()),
    sa.column("candidate_run_id", sa.Integer()), sa.column("measure_id", sa.Integer()),
    sa.column("family", sa.String()), sa.column("reasons", sa.JSON()), sa.column("policy", sa.JSON()),
    sa.column("d_z", NaNFloat()), sa.column("d_z_ci_low", NaNFloat()), sa.column("d_z_ci_high", NaNFloat()),
    sa.column("record", sa.JSON()),
    *(sa.column(name, NaNFloat()) for name in _SAME_NAME_FLOATS),
    *(sa.column(name, sa.JSON() if name == "judged_coverage" else sa.String() if name in (
        "test", "decision", "severity", "criterion", "reason_code") else sa.Integer()) for name in _SAME_NAME_OTHERS),
)
_runs = sa.table("eval_runs", sa.column("id", sa.Integer()), sa.column("retriever", sa.String()),
                 sa.column("version", sa.String()))
_measures = sa.table("measures", sa.column("id", sa.Integer()), sa.column("name", sa.String()))


def _plain(value: Any) -> Any:
    return None if isinstance(value, float) and not math.isfinite(value) else value


def _alerts(decision: str | None, severity: str | None, policy: dict[str, Any], family: str | None) -> bool:
    """What the regression rule's ``notifies`` said of it: only a gold regression, critical, or a warning
    under ``alert_on: warning``."""
    if family != "gold" or decision != "regression":
        return False
    return severity == "critical" or (severity == "warning" and policy.get("alert_on", "warning") == "warning")


def _higher_is_better(measure: str) -> bool:
    try:
        return bool(parse_any_measure(measure).higher_is_better)
    except Exception:  # a measure this release no longer reads: an IR measure's direction
        return True


def record_of(row: Any) -> dict[str, Any]:
    """The comparison record of an ``ab_tests`` row stored without one, from its columns."""
    policy = dict(row.policy or {})
    known = {f.name for f in dataclasses.fields(Policy)}  # a setting an older release stored (min_effect) is left out
    record: dict[str, Any] = {name: _plain(getattr(row, name)) for name in (*_SAME_NAME_FLOATS, *_SAME_NAME_OTHERS)}
    record.update(
        measure=row.measure, baseline_name=f"{row.baseline_retriever}@{row.baseline_version}",
        candidate_name=f"{row.candidate_retriever}@{row.candidate_version}", relative_change=None, test_method=None,
        statistic=None, effect_size_dz=_plain(row.d_z),
        effect_size_ci=None if row.d_z_ci_low is None else [_plain(row.d_z_ci_low), _plain(row.d_z_ci_high)],
        effect_size_gz=None, reasons=[str(r) for r in (row.reasons or [])], worst_queries=[],
        policy={k: v for k, v in policy.items() if k in known},
        notes=[], coverage=None, alert=_alerts(row.decision, row.severity, policy, row.family),
        higher_is_better=_higher_is_better(row.measure),
    )
    return record


def upgrade() -> None:
    if not context.is_offline_mode():  # a SQL script (`evalops db upgrade --sql`) cannot read the rows it moves
        _fill_records()
    with op.batch_alter_table('ab_tests', copy_from=steps.ab_tests_table(record_required=False)) as batch_op:
        batch_op.alter_column('record', existing_type=sa.JSON(), nullable=False)


def _fill_records() -> None:
    conn = op.get_bind()
    base, cand = _runs.alias("base"), _runs.alias("cand")
    stmt = (sa.select(*_ab.c, _measures.c.name.label("measure"),
                      base.c.retriever.label("baseline_retriever"), base.c.version.label("baseline_version"),
                      cand.c.retriever.label("candidate_retriever"), cand.c.version.label("candidate_version"))
            .join(_measures, _measures.c.id == _ab.c.measure_id)
            .join(base, base.c.id == _ab.c.baseline_run_id)
            .join(cand, cand.c.id == _ab.c.candidate_run_id))
    # SQL NULL (a row stored before the column) and JSON null both read as None
    for row in conn.execute(stmt).all():
        if row.record is not None:
            continue
        conn.execute(sa.update(_ab).where(_ab.c.id == row.id).values(record=record_of(row)))


def downgrade() -> None:
    with op.batch_alter_table('ab_tests', copy_from=steps.ab_tests_table(record_required=True)) as batch_op:
        batch_op.alter_column('record', existing_type=sa.JSON(), nullable=True)
