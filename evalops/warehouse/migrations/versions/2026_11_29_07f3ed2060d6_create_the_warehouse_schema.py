"""create the warehouse schema

Revision ID: 07f3ed2060d6
Revises:
Create Date: 2026-11-29 14:09:39.571705
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op


revision: str = '07f3ed2060d6'
down_revision: str | Sequence[str] | None = None
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table('gold_set_versions',
    sa.Column('version', sa.String(length=128), nullable=False),
    sa.Column('name', sa.String(length=200), nullable=False),
    sa.Column('n_queries', sa.Integer(), nullable=False),
    sa.Column('n_judgments', sa.Integer(), nullable=False),
    sa.Column('source', sa.Text(), nullable=True),
    sa.Column('meta', sa.JSON(), nullable=False),
    sa.Column('created_at', sa.DateTime(timezone=True), nullable=False),
    sa.PrimaryKeyConstraint('version', name=op.f('pk_gold_set_versions'))
    )
    op.create_table('kb_snapshots',
    sa.Column('snapshot_id', sa.String(length=128), nullable=False),
    sa.Column('n_documents', sa.Integer(), nullable=False),
    sa.Column('content_hash', sa.String(length=128), nullable=False),
    sa.Column('source', sa.Text(), nullable=True),
    sa.Column('meta', sa.JSON(), nullable=False),
    sa.Column('created_at', sa.DateTime(timezone=True), nullable=False),
    sa.PrimaryKeyConstraint('snapshot_id', name=op.f('pk_kb_snapshots'))
    )
    op.create_table('measures',
    sa.Column('id', sa.Integer(), nullable=False),
    sa.Column('name', sa.String(length=200), nullable=False),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_measures')),
    sa.UniqueConstraint('name', name=op.f('uq_measures_name'))
    )
    op.create_table('eval_fingerprints',
    sa.Column('hash', sa.String(length=64), nullable=False),
    sa.Column('gold_set_version', sa.String(length=128), nullable=False),
    sa.Column('kb_snapshot_id', sa.String(length=128), nullable=False),
    sa.Column('measures', sa.JSON(), nullable=False),
    sa.Column('policies', sa.JSON(), nullable=False),
    sa.Column('created_at', sa.DateTime(timezone=True), nullable=False),
    sa.ForeignKeyConstraint(['gold_set_version'], ['gold_set_versions.version'], name=op.f('fk_eval_fingerprints_gold_set_version_gold_set_versions')),
    sa.ForeignKeyConstraint(['kb_snapshot_id'], ['kb_snapshots.snapshot_id'], name=op.f('fk_eval_fingerprints_kb_snapshot_id_kb_snapshots')),
    sa.PrimaryKeyConstraint('hash', name=op.f('pk_eval_fingerprints'))
    )
    op.create_index(op.f('ix_eval_fingerprints_gold_set_version'), 'eval_fingerprints', ['gold_set_version'], unique=False)
    op.create_index(op.f('ix_eval_fingerprints_kb_snapshot_id'), 'eval_fingerprints', ['kb_snapshot_id'], unique=False)
    op.create_table('eval_runs',
    sa.Column('id', sa.Integer(), nullable=False),
    sa.Column('dag_id', sa.String(length=250), nullable=False),
    sa.Column('dag_run_id', sa.String(length=250), nullable=False),
    sa.Column('retriever', sa.String(length=200), nullable=False),
    sa.Column('version', sa.String(length=200), nullable=False),
    sa.Column('dataset', sa.String(length=50), nullable=False),
    sa.Column('logical_date', sa.DateTime(timezone=True), nullable=False),
    sa.Column('status', sa.String(length=20), nullable=False),
    sa.Column('started_at', sa.DateTime(timezone=True), nullable=False),
    sa.Column('finished_at', sa.DateTime(timezone=True), nullable=True),
    sa.Column('fingerprint_hash', sa.String(length=64), nullable=False),
    sa.Column('n_queries', sa.Integer(), nullable=False),
    sa.Column('n_failed', sa.Integer(), nullable=False),
    sa.Column('failed_query_ids', sa.JSON(), nullable=False),
    sa.Column('error', sa.Text(), nullable=True),
    sa.Column('created_at', sa.DateTime(timezone=True), nullable=False),
    sa.Column('updated_at', sa.DateTime(timezone=True), nullable=False),
    sa.CheckConstraint("status IN ('running', 'succeeded', 'partial', 'failed')", name=op.f('ck_eval_runs_status')),
    sa.ForeignKeyConstraint(['fingerprint_hash'], ['eval_fingerprints.hash'], name=op.f('fk_eval_runs_fingerprint_hash_eval_fingerprints')),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_eval_runs')),
    sa.UniqueConstraint('dag_id', 'dag_run_id', 'retriever', 'version', 'dataset', name=op.f('uq_eval_runs_dag_id_dag_run_id_retriever_version_dataset'))
    )
    op.create_index(op.f('ix_eval_runs_fingerprint_hash'), 'eval_runs', ['fingerprint_hash'], unique=False)
    op.create_index(op.f('ix_eval_runs_retriever_version_logical_date'), 'eval_runs', ['retriever', 'version', 'logical_date'], unique=False)
    op.create_table('ab_tests',
    sa.Column('id', sa.Integer(), nullable=False),
    sa.Column('baseline_run_id', sa.Integer(), nullable=False),
    sa.Column('candidate_run_id', sa.Integer(), nullable=False),
    sa.Column('measure_id', sa.Integer(), nullable=False),
    sa.Column('n', sa.Integer(), nullable=False),
    sa.Column('baseline_mean', sa.Double(), nullable=True),
    sa.Column('candidate_mean', sa.Double(), nullable=True),
    sa.Column('delta', sa.Double(), nullable=True),
    sa.Column('delta_ci_low', sa.Double(), nullable=True),
    sa.Column('delta_ci_high', sa.Double(), nullable=True),
    sa.Column('ci_level', sa.Double(), nullable=False),
    sa.Column('test', sa.String(length=100), nullable=False),
    sa.Column('p_value', sa.Double(), nullable=True),
    sa.Column('p_adjusted', sa.Double(), nullable=True),
    sa.Column('d_z', sa.Double(), nullable=True),
    sa.Column('d_z_ci_low', sa.Double(), nullable=True),
    sa.Column('d_z_ci_high', sa.Double(), nullable=True),
    sa.Column('wins', sa.Integer(), nullable=False),
    sa.Column('ties', sa.Integer(), nullable=False),
    sa.Column('losses', sa.Integer(), nullable=False),
    sa.Column('decision', sa.String(length=50), nullable=False),
    sa.Column('reasons', sa.JSON(), nullable=False),
    sa.Column('policy', sa.JSON(), nullable=False),
    sa.Column('created_at', sa.DateTime(timezone=True), nullable=False),
    sa.ForeignKeyConstraint(['baseline_run_id'], ['eval_runs.id'], name=op.f('fk_ab_tests_baseline_run_id_eval_runs')),
    sa.ForeignKeyConstraint(['candidate_run_id'], ['eval_runs.id'], name=op.f('fk_ab_tests_candidate_run_id_eval_runs')),
    sa.ForeignKeyConstraint(['measure_id'], ['measures.id'], name=op.f('fk_ab_tests_measure_id_measures')),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_ab_tests')),
    sa.UniqueConstraint('candidate_run_id', 'baseline_run_id', 'measure_id', name=op.f('uq_ab_tests_candidate_run_id_baseline_run_id_measure_id'))
    )
    op.create_index(op.f('ix_ab_tests_baseline_run_id'), 'ab_tests', ['baseline_run_id'], unique=False)
    op.create_table('baselines',
    sa.Column('id', sa.Integer(), nullable=False),
    sa.Column('retriever', sa.String(length=200), nullable=False),
    sa.Column('fingerprint_hash', sa.String(length=64), nullable=False),
    sa.Column('run_id', sa.Integer(), nullable=False),
    sa.Column('action', sa.String(length=20), nullable=False),
    sa.Column('is_current', sa.Boolean(), nullable=False),
    sa.Column('promoted_by', sa.String(length=200), nullable=False),
    sa.Column('promoted_at', sa.DateTime(timezone=True), nullable=False),
    sa.Column('reason', sa.Text(), nullable=False),
    sa.Column('replaced_at', sa.DateTime(timezone=True), nullable=True),
    sa.Column('previous_id', sa.Integer(), nullable=True),
    sa.CheckConstraint("action IN ('promote', 'rollback')", name=op.f('ck_baselines_action')),
    sa.ForeignKeyConstraint(['fingerprint_hash'], ['eval_fingerprints.hash'], name=op.f('fk_baselines_fingerprint_hash_eval_fingerprints')),
    sa.ForeignKeyConstraint(['previous_id'], ['baselines.id'], name=op.f('fk_baselines_previous_id_baselines')),
    sa.ForeignKeyConstraint(['run_id'], ['eval_runs.id'], name=op.f('fk_baselines_run_id_eval_runs')),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_baselines'))
    )
    op.create_index(op.f('ix_baselines_retriever_fingerprint_hash_promoted_at'), 'baselines', ['retriever', 'fingerprint_hash', 'promoted_at'], unique=False)
    op.create_index('ux_baselines_current', 'baselines', ['retriever', 'fingerprint_hash'], unique=True, postgresql_where=sa.text('is_current'), sqlite_where=sa.text('is_current'))
    op.create_table('query_scores',
    sa.Column('run_id', sa.Integer(), nullable=False),
    sa.Column('measure_id', sa.Integer(), nullable=False),
    sa.Column('query_id', sa.String(length=500), nullable=False),
    sa.Column('value', sa.Double(), nullable=True),
    sa.ForeignKeyConstraint(['run_id'], ['eval_runs.id'], name=op.f('fk_query_scores_run_id_eval_runs'), ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('run_id', 'measure_id', 'query_id', name=op.f('pk_query_scores'))
    )
    op.create_table('run_aggregates',
    sa.Column('run_id', sa.Integer(), nullable=False),
    sa.Column('measure_id', sa.Integer(), nullable=False),
    sa.Column('n', sa.Integer(), nullable=False),
    sa.Column('mean', sa.Double(), nullable=True),
    sa.Column('ci_low', sa.Double(), nullable=True),
    sa.Column('ci_high', sa.Double(), nullable=True),
    sa.Column('ci_level', sa.Double(), nullable=False),
    sa.Column('ci_method', sa.String(length=100), nullable=False),
    sa.ForeignKeyConstraint(['measure_id'], ['measures.id'], name=op.f('fk_run_aggregates_measure_id_measures')),
    sa.ForeignKeyConstraint(['run_id'], ['eval_runs.id'], name=op.f('fk_run_aggregates_run_id_eval_runs'), ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('run_id', 'measure_id', name=op.f('pk_run_aggregates'))
    )
    op.create_table('alerts',
    sa.Column('id', sa.Integer(), nullable=False),
    sa.Column('dedup_key', sa.String(length=1000), nullable=False),
    sa.Column('kind', sa.String(length=100), nullable=False),
    sa.Column('retriever', sa.String(length=200), nullable=False),
    sa.Column('version', sa.String(length=200), nullable=True),
    sa.Column('measure', sa.String(length=200), nullable=True),
    sa.Column('fingerprint_hash', sa.String(length=64), nullable=True),
    sa.Column('day', sa.Date(), nullable=False),
    sa.Column('severity', sa.String(length=20), nullable=False),
    sa.Column('message', sa.Text(), nullable=False),
    sa.Column('payload', sa.JSON(), nullable=False),
    sa.Column('run_id', sa.Integer(), nullable=True),
    sa.Column('ab_test_id', sa.Integer(), nullable=True),
    sa.Column('created_at', sa.DateTime(timezone=True), nullable=False),
    sa.Column('delivery_status', sa.String(length=20), nullable=False),
    sa.Column('delivery_attempts', sa.Integer(), nullable=False),
    sa.Column('delivered_at', sa.DateTime(timezone=True), nullable=True),
    sa.Column('delivery_error', sa.Text(), nullable=True),
    sa.CheckConstraint("delivery_status IN ('pending', 'delivered', 'undelivered')", name=op.f('ck_alerts_delivery_status')),
    sa.ForeignKeyConstraint(['ab_test_id'], ['ab_tests.id'], name=op.f('fk_alerts_ab_test_id_ab_tests')),
    sa.ForeignKeyConstraint(['run_id'], ['eval_runs.id'], name=op.f('fk_alerts_run_id_eval_runs')),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_alerts')),
    sa.UniqueConstraint('dedup_key', name=op.f('uq_alerts_dedup_key'))
    )
    op.create_index(op.f('ix_alerts_delivery_status'), 'alerts', ['delivery_status'], unique=False)


def downgrade() -> None:
    op.drop_index(op.f('ix_alerts_delivery_status'), table_name='alerts')
    op.drop_table('alerts')
    op.drop_table('run_aggregates')
    op.drop_table('query_scores')
    op.drop_index('ux_baselines_current', table_name='baselines', postgresql_where=sa.text('is_current'), sqlite_where=sa.text('is_current'))
    op.drop_index(op.f('ix_baselines_retriever_fingerprint_hash_promoted_at'), table_name='baselines')
    op.drop_table('baselines')
    op.drop_index(op.f('ix_ab_tests_baseline_run_id'), table_name='ab_tests')
    op.drop_table('ab_tests')
    op.drop_index(op.f('ix_eval_runs_retriever_version_logical_date'), table_name='eval_runs')
    op.drop_index(op.f('ix_eval_runs_fingerprint_hash'), table_name='eval_runs')
    op.drop_table('eval_runs')
    op.drop_index(op.f('ix_eval_fingerprints_kb_snapshot_id'), table_name='eval_fingerprints')
    op.drop_index(op.f('ix_eval_fingerprints_gold_set_version'), table_name='eval_fingerprints')
    op.drop_table('eval_fingerprints')
    op.drop_table('measures')
    op.drop_table('kb_snapshots')
    op.drop_table('gold_set_versions')
