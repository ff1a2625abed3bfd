"""judge-label comparisons are ab_tests rows: judge_runs.results keeps only what the judge step measured

A judge step's comparisons (each candidate version against its baseline on a judge-label measure,
``judge:nDCG@10``) were kept as public-view dicts in ``judge_runs.results["comparisons"]``. They are now
``ab_tests`` rows like every other comparison: the comparison's record, its decision, policy and family,
and the judge run whose labels they are on (``ab_tests.judge_run_id``, NULL for a comparison on the
fingerprint's own labels), so that judge-label and human-label comparisons are never read together.

The upgrade adds the column (indexed, a foreign key to ``judge_runs``) and moves every stored judge
comparison: its two runs are the DAG run's runs of the query set (``scope``) named ``retriever@version``,
its record the comparison read back from the view (a production comparison's stored policy key as its
policy; a gold one was stored without its policy and takes the default). A comparison already stored for
that (candidate run, baseline run, measure) is not stored again, so a second pass adds no rows. A
comparison whose runs are no longer in the warehouse stays in ``results["comparisons"]``. A SQL script of
the upgrade (``evalops db upgrade --sql``) cannot move rows: a warehouse with judge runs is upgraded online.

The downgrade puts each judge run's comparisons back into its ``results["comparisons"]`` as the step
wrote them (the public view with ``family``, ``look`` (from the family's looks) and, on the production
sample, the policy key), deletes those rows and drops the column.

Revision ID: b8d4f2a6c0e3
Revises: a7c3e5f1d9b2
Create Date: 2026-12-10 09:00:00.000000
"""

from __future__ import annotations

import json
import logging
from collections.abc import Mapping, Sequence
from typing import Any

import sqlalchemy as sa
from alembic import context, op

from evalops.stats.compare import Comparison

revision: str = 'b8d4f2a6c0e3'
down_revision: str | Sequence[str] | None = 'a7c3e5f1d9b2'
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

log = logging.getLogger("alembic.runtime.migration")

PRODUCTION = "production"
# what the judge step kept beside a comparison's public view, not in it
_BESIDE = ("family", "look", "policy")

_jr = sa.table("judge_runs", sa.column("id", sa.Integer()), sa.column("dag_id", sa.String()),
               sa.column("dag_run_id", sa.String()), sa.column("scope", sa.String()),
               sa.column("results", sa.JSON()), sa.column("created_at", sa.DateTime(timezone=True)))
_runs = sa.table("eval_runs", sa.column("id", sa.Integer()), sa.column("dag_id", sa.String()),
                 sa.column("dag_run_id", sa.String()), sa.column("retriever", sa.String()),
                 sa.column("version", sa.String()), sa.column("dataset", sa.String()))
_measures = sa.table("measures", sa.column("id", sa.Integer()), sa.column("name", sa.String()))
_ab = sa.table("ab_tests", sa.column("id", sa.Integer()), sa.column("baseline_run_id", sa.Integer()),
               sa.column("candidate_run_id", sa.Integer()), sa.column("measure_id", sa.Integer()),
               sa.column("decision", sa.String()), sa.column("policy", sa.JSON()),
               sa.column("created_at", sa.DateTime(timezone=True)), sa.column("family", sa.String()),
               sa.column("segments", sa.JSON()), sa.column("record", sa.JSON()),
               sa.column("judge_run_id", sa.Integer()))


def _ab_tests() -> sa.Table:
    """ab_tests as revision a7c3e5f1d9b2 leaves it: described rather than reflected, so that ``evalops db
    upgrade --sql`` writes the SQLite script too."""
    return sa.Table(
        'ab_tests', sa.MetaData(),
        sa.Column('id', sa.Integer(), nullable=False),
        sa.Column('baseline_run_id', sa.Integer(), nullable=False),
        sa.Column('candidate_run_id', sa.Integer(), nullable=False),
        sa.Column('measure_id', sa.Integer(), nullable=False),
        sa.Column('decision', sa.String(length=50), nullable=False),
        sa.Column('policy', sa.JSON(), nullable=False),
        sa.Column('created_at', sa.DateTime(timezone=True), nullable=False),
        sa.Column('family', sa.String(length=50), nullable=True),
        sa.Column('segments', sa.JSON(), nullable=True),
        sa.Column('record', sa.JSON(), nullable=False),
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
    with op.batch_alter_table('ab_tests', schema=None, copy_from=_ab_tests()) as batch_op:
        batch_op.add_column(sa.Column('judge_run_id', sa.Integer(), nullable=True))
        batch_op.create_index('ix_ab_tests_judge_run_id', ['judge_run_id'], unique=False)
        batch_op.create_foreign_key('fk_ab_tests_judge_run_id_judge_runs', 'judge_runs', ['judge_run_id'], ['id'])
    if not context.is_offline_mode():  # a SQL script cannot read the rows it moves
        move_into_ab_tests(op.get_bind())


def _policy_key(policy: Mapping[str, Any]) -> dict[str, Any]:
    """``evalops.warehouse.looks.policy_key``: the policy without its seed, as plain JSON."""
    return json.loads(json.dumps({k: v for k, v in policy.items() if k != "seed"}, sort_keys=True))


def record_of(view: Mapping[str, Any]) -> dict[str, Any]:
    """The comparison record (without per-query deltas) of a stored judge comparison's view."""
    record = {k: v for k, v in view.items() if k not in _BESIDE}
    if isinstance(view.get("policy"), Mapping):  # a production comparison kept its policy key
        record["policy"] = dict(view["policy"])
    return {k: v for k, v in Comparison.from_record(record).to_record().items() if k != "deltas"}


def view_of(record: Mapping[str, Any], family: str | None, look: int | None, scope: str) -> dict[str, Any]:
    """A stored comparison as the judge step wrote it into ``judge_runs.results`` before this revision."""
    view: dict[str, Any] = {**Comparison.from_record(record).to_dict(), "family": family, "look": look}
    if scope == PRODUCTION:
        view["policy"] = _policy_key(record.get("policy") or {})
    return view


def _run_id(conn: Any, judge_run: Any, name: str) -> int | None:
    retriever, _, version = str(name).rpartition("@")
    found = conn.execute(sa.select(_runs.c.id).where(
        _runs.c.dag_id == judge_run.dag_id, _runs.c.dag_run_id == judge_run.dag_run_id,
        _runs.c.retriever == retriever, _runs.c.version == version, _runs.c.dataset == judge_run.scope)
        .order_by(_runs.c.id)).first()
    return None if found is None else int(found[0])


def _measure_id(conn: Any, name: str) -> int:
    found = conn.execute(sa.select(_measures.c.id).where(_measures.c.name == name)).first()
    if found is None:
        conn.execute(sa.insert(_measures).values(name=name))
        found = conn.execute(sa.select(_measures.c.id).where(_measures.c.name == name)).first()
    return int(found[0])


def move_into_ab_tests(conn: Any) -> int:
    """Move every judge run's stored comparisons into ``ab_tests``; returns the rows added (none on a
    second pass)."""
    added = 0
    for jr in conn.execute(sa.select(_jr).order_by(_jr.c.id)).all():
        results = dict(jr.results or {})
        if "comparisons" not in results:
            continue
        kept = []
        for view in results.pop("comparisons") or []:
            cand, base = _run_id(conn, jr, view.get("candidate", "")), _run_id(conn, jr, view.get("baseline", ""))
            if cand is None or base is None:
                kept.append(view)
                continue
            record = record_of(view)
            measure_id = _measure_id(conn, str(record["measure"]))
            there = conn.execute(sa.select(_ab.c.id).where(
                _ab.c.candidate_run_id == cand, _ab.c.baseline_run_id == base, _ab.c.measure_id == measure_id)).first()
            if there is not None:
                continue
            conn.execute(sa.insert(_ab).values(
                baseline_run_id=base, candidate_run_id=cand, measure_id=measure_id, decision=record["decision"],
                policy=record["policy"], created_at=jr.created_at, family=view.get("family") or f"judge-{jr.scope}",
                segments=[], record=record, judge_run_id=jr.id))
            added += 1
        if kept:
            log.warning("judge run %s: %d comparison(s) whose runs are not in the warehouse stay in its results",
                        jr.id, len(kept))
            results["comparisons"] = kept
        conn.execute(sa.update(_jr).where(_jr.c.id == jr.id).values(results=results))
    return added


def move_out_of_ab_tests(conn: Any) -> None:
    """Put each judge run's ``ab_tests`` rows back into its ``results["comparisons"]`` and delete them."""
    stmt = (sa.select(_ab.c.judge_run_id, _ab.c.family, _ab.c.record).where(_ab.c.judge_run_id.is_not(None))
            .order_by(_ab.c.id))
    by_run: dict[int, list[Any]] = {}
    for row in conn.execute(stmt).all():
        by_run.setdefault(int(row.judge_run_id), []).append(row)
    for jr in conn.execute(sa.select(_jr).where(_jr.c.id.in_(list(by_run)))).all():
        results = dict(jr.results or {})
        families = results.get("families") or {}
        views = [view_of(r.record, r.family, (families.get(r.family) or {}).get("looks", {}).get(
                 r.record.get("candidate_name")), jr.scope) for r in by_run[int(jr.id)]]
        results["comparisons"] = [*(results.get("comparisons") or []), *views]
        conn.execute(sa.update(_jr).where(_jr.c.id == jr.id).values(results=results))
    conn.execute(sa.delete(_ab).where(_ab.c.judge_run_id.is_not(None)))


def downgrade() -> None:
    if not context.is_offline_mode():
        move_out_of_ab_tests(op.get_bind())
    with op.batch_alter_table('ab_tests', schema=None) as batch_op:
        batch_op.drop_constraint('fk_ab_tests_judge_run_id_judge_runs', type_='foreignkey')
        batch_op.drop_index('ix_ab_tests_judge_run_id')
        batch_op.drop_column('judge_run_id')
