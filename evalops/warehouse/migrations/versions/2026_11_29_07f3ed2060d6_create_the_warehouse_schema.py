"""create the warehouse schema

Revision ID: 07f3ed2060d6
Revises:
Create Date: 2026-11-29 14:09:39.571705
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import sqlalchemy as sa
from alembic import op

from evalops.warehouse.migrations import steps

revision: str = '07f3ed2060d6'
down_revision: str | Sequence[str] | None = None


_INDEXES = {  # the plain indexes of each table
    'eval_fingerprints': [['gold_set_version'], ['kb_snapshot_id']],
    'eval_runs': [['fingerprint_hash'], ['retriever', 'version', 'logical_date']],
    'ab_tests': [['baseline_run_id']],
    'baselines': [['retriever', 'fingerprint_hash', 'promoted_at']],
    'alerts': [['delivery_status']],
}
_DATETIME = sa.DateTime(timezone=True)


def _create(table: str, *items: Any) -> None:
    steps.create_table(table, *items, indexes=_INDEXES.get(table, ()))


def _recorded_input(table: str, key: str, *own: Any) -> None:
    """A table of an input's recorded versions (gold sets, knowledge-base snapshots): the version's key, its
    own columns, where it came from, its metadata and when it was recorded."""
    _create(table,
            sa.Column(key, sa.String(length=128), nullable=False),
            *own,
            sa.Column('source', sa.Text(), nullable=True),
            sa.Column('meta', sa.JSON(), nullable=False),
            steps.created_at(),
            steps.primary_key(table, key))


def upgrade() -> None:
    _recorded_input('gold_set_versions', 'version',
                    sa.Column('name', sa.String(length=200), nullable=False),
                    *steps.typed_columns(sa.Integer(), 'n_queries', 'n_judgments', nullable=False))
    _recorded_input('kb_snapshots', 'snapshot_id',
                    sa.Column('n_documents', sa.Integer(), nullable=False),
                    sa.Column('content_hash', sa.String(length=128), nullable=False))
    _create('measures',
            steps.id_column(),
            sa.Column('name', sa.String(length=200), nullable=False),
            steps.primary_key('measures', 'id'),
            steps.unique('measures', 'name'))
    _create('eval_fingerprints',
            sa.Column('hash', sa.String(length=64), nullable=False),
            *steps.typed_columns(sa.String(length=128), 'gold_set_version', 'kb_snapshot_id', nullable=False),
            *steps.typed_columns(sa.JSON(), 'measures', 'policies', nullable=False),
            steps.created_at(),
            steps.foreign_key('eval_fingerprints', 'gold_set_version', 'gold_set_versions.version'),
            steps.foreign_key('eval_fingerprints', 'kb_snapshot_id', 'kb_snapshots.snapshot_id'),
            steps.primary_key('eval_fingerprints', 'hash'))
    _create('eval_runs',
            steps.id_column(),
            *steps.typed_columns(sa.String(length=250), 'dag_id', 'dag_run_id', nullable=False),
            *steps.typed_columns(sa.String(length=200), 'retriever', 'version', nullable=False),
            sa.Column('dataset', sa.String(length=50), nullable=False),
            sa.Column('logical_date', _DATETIME, nullable=False),
            sa.Column('status', sa.String(length=20), nullable=False),
            sa.Column('started_at', _DATETIME, nullable=False),
            sa.Column('finished_at', _DATETIME, nullable=True),
            sa.Column('fingerprint_hash', sa.String(length=64), nullable=False),
            *steps.typed_columns(sa.Integer(), 'n_queries', 'n_failed', nullable=False),
            sa.Column('failed_query_ids', sa.JSON(), nullable=False),
            sa.Column('error', sa.Text(), nullable=True),
            *steps.typed_columns(_DATETIME, 'created_at', 'updated_at', nullable=False),
            steps.check('eval_runs', 'status', "status IN ('running', 'succeeded', 'partial', 'failed')"),
            steps.foreign_key('eval_runs', 'fingerprint_hash', 'eval_fingerprints.hash'),
            steps.primary_key('eval_runs', 'id'),
            steps.unique('eval_runs', 'dag_id', 'dag_run_id', 'retriever', 'version', 'dataset'))
    _create('ab_tests', *steps.ab_tests_columns(), *steps.ab_tests_keys())
    _create('baselines',
            steps.id_column(),
            sa.Column('retriever', sa.String(length=200), nullable=False),
            sa.Column('fingerprint_hash', sa.String(length=64), nullable=False),
            sa.Column('run_id', sa.Integer(), nullable=False),
            sa.Column('action', sa.String(length=20), nullable=False),
            sa.Column('is_current', sa.Boolean(), nullable=False),
            sa.Column('promoted_by', sa.String(length=200), nullable=False),
            sa.Column('promoted_at', _DATETIME, nullable=False),
            sa.Column('reason', sa.Text(), nullable=False),
            sa.Column('replaced_at', _DATETIME, nullable=True),
            sa.Column('previous_id', sa.Integer(), nullable=True),
            steps.check('baselines', 'action', "action IN ('promote', 'rollback')"),
            steps.foreign_key('baselines', 'fingerprint_hash', 'eval_fingerprints.hash'),
            steps.foreign_key('baselines', 'previous_id', 'baselines.id'),
            steps.foreign_key('baselines', 'run_id', 'eval_runs.id'),
            steps.primary_key('baselines', 'id'))
    op.create_index('ux_baselines_current', 'baselines', ['retriever', 'fingerprint_hash'], unique=True,
                    postgresql_where=sa.text('is_current'), sqlite_where=sa.text('is_current'))
    _create('query_scores',
            *steps.typed_columns(sa.Integer(), 'run_id', 'measure_id', nullable=False),
            sa.Column('query_id', sa.String(length=500), nullable=False),
            sa.Column('value', sa.Double(), nullable=True),
            steps.foreign_key('query_scores', 'run_id', 'eval_runs.id', ondelete='CASCADE'),
            steps.primary_key('query_scores', 'run_id', 'measure_id', 'query_id'))
    _create('run_aggregates',
            *steps.typed_columns(sa.Integer(), 'run_id', 'measure_id', 'n', nullable=False),
            *steps.typed_columns(sa.Double(), 'mean', 'ci_low', 'ci_high'),
            sa.Column('ci_level', sa.Double(), nullable=False),
            sa.Column('ci_method', sa.String(length=100), nullable=False),
            steps.foreign_key('run_aggregates', 'measure_id', 'measures.id'),
            steps.foreign_key('run_aggregates', 'run_id', 'eval_runs.id', ondelete='CASCADE'),
            steps.primary_key('run_aggregates', 'run_id', 'measure_id'))
    _create('alerts',
            steps.id_column(),
            sa.Column('dedup_key', sa.String(length=1000), nullable=False),
            sa.Column('kind', sa.String(length=100), nullable=False),
            sa.Column('retriever', sa.String(length=200), nullable=False),
            *steps.typed_columns(sa.String(length=200), 'version', 'measure'),
            sa.Column('fingerprint_hash', sa.String(length=64), nullable=True),
            sa.Column('day', sa.Date(), nullable=False),
            sa.Column('severity', sa.String(length=20), nullable=False),
            sa.Column('message', sa.Text(), nullable=False),
            sa.Column('payload', sa.JSON(), nullable=False),
            *steps.typed_columns(sa.Integer(), 'run_id', 'ab_test_id'),
            steps.created_at(),
            sa.Column('delivery_status', sa.String(length=20), nullable=False),
            sa.Column('delivery_attempts', sa.Integer(), nullable=False),
            sa.Column('delivered_at', _DATETIME, nullable=True),
            sa.Column('delivery_error', sa.Text(), nullable=True),
            steps.check('alerts', 'delivery_status', "delivery_status IN ('pending', 'delivered', 'undelivered')"),
            steps.foreign_key('alerts', 'ab_test_id', 'ab_tests.id'),
            steps.foreign_key('alerts', 'run_id', 'eval_runs.id'),
            steps.primary_key('alerts', 'id'),
            steps.unique('alerts', 'dedup_key'))


def downgrade() -> None:
    for table in ('alerts', 'run_aggregates', 'query_scores', 'baselines', 'ab_tests', 'eval_runs',
                  'eval_fingerprints', 'measures', 'kb_snapshots', 'gold_set_versions'):
        if table == 'baselines':
            op.drop_index('ux_baselines_current', table_name='baselines', postgresql_where=sa.text('is_current'),
                          sqlite_where=sa.text('is_current'))
        steps.drop_table(table, indexes=_INDEXES.get(table, ()))
