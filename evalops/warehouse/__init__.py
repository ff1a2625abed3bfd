"""The metrics warehouse: run history, per-query scores, baselines, A/B results and alerts.

SQLAlchemy 2.0 models with Alembic migrations, on SQLite (the embedded default) or PostgreSQL. The
functions here take an ``Engine`` (from ``connect``) and return frozen dataclasses or DataFrames; no ORM
object leaves the package. Every write is one transaction and an upsert on a natural key, so a retried
task neither duplicates nor half-writes anything.

    engine = connect()                      # EVALOPS_WAREHOUSE_URL, Airflow conn, or .evalops/warehouse.db
    upgrade(engine)                         # Alembic migrations to head
    record_gold_set_version(engine, ...); record_kb_snapshot(engine, ...)
    run = record_run(engine, RunKey(...), fingerprint=fp, ..., scores=frame, aggregates=agg, ...)
    lookup = find_baseline(engine, "bm25", fp)   # current / stale (+ what changed) / missing
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from evalops.fingerprint import EvalFingerprint
from evalops.warehouse.abtests import ab_test_result, ab_test_results, comparison_look, load_ab_tests, record_ab_tests
from evalops.warehouse.alerts import (
    alert_dedup_key,
    alert_deliveries,
    last_sent_alerts,
    list_alerts,
    mark_alert_delivery,
    mark_notifier_attempt,
    mark_notifier_delivery,
    record_alert,
    retryable_alerts,
)
from evalops.warehouse.breakdowns import (
    load_segment_spreads,
    load_source_shares,
    record_breakdowns,
    source_share_history,
)
from evalops.warehouse.baselines import baseline_history, find_baseline, promote_baseline, rollback_baseline
from evalops.warehouse.catalog import (
    find_fingerprint_hash,
    get_fingerprint,
    get_gold_set_version,
    get_kb_snapshot,
    record_gold_set_version,
    record_kb_snapshot,
)
from evalops.warehouse.config import WarehouseURL, create_warehouse_engine, resolve_url
from evalops.warehouse.domain import (
    ABTestResult,
    AlertRow,
    Baseline,
    BaselineLookup,
    EvalRun,
    GoldSetVersion,
    KBSnapshot,
    PairedScores,
    RunKey,
    ScoreVectors,
)
from evalops.warehouse.history import (
    check_history_query,
    latest_per_logical_date,
    latest_runs,
    measure_history,
    runs_under_fingerprint,
)
from evalops.warehouse.migrate import current_revision, downgrade, head_revisions, upgrade
from evalops.warehouse.leases import abandon_expired_runs, release_runs, renew_lease
from evalops.warehouse.runs import RunRanking, find_run, get_run, load_ranking, record_run
from evalops.warehouse.scores import (
    load_aggregates,
    load_paired_scores,
    load_score_vectors,
    load_scores,
    prune_query_scores,
    record_aggregates,
    upsert_scores,
)

if TYPE_CHECKING:  # pragma: no cover
    from sqlalchemy.engine import Engine

__all__ = [
    "ABTestResult",
    "ab_test_result",
    "AlertRow",
    "Baseline",
    "BaselineLookup",
    "EvalFingerprint",
    "EvalRun",
    "GoldSetVersion",
    "KBSnapshot",
    "PairedScores",
    "RunKey",
    "ScoreVectors",
    "WarehouseURL",
    "alert_dedup_key",
    "baseline_history",
    "check_history_query",
    "connect",
    "create_warehouse_engine",
    "current_revision",
    "downgrade",
    "find_baseline",
    "find_fingerprint_hash",
    "find_run",
    "get_fingerprint",
    "get_gold_set_version",
    "get_kb_snapshot",
    "get_run",
    "head_revisions",
    "latest_per_logical_date",
    "latest_runs",
    "last_sent_alerts",
    "list_alerts",
    "comparison_look",
    "load_ab_tests",
    "ab_test_results",
    "load_aggregates",
    "load_paired_scores",
    "load_score_vectors",
    "load_scores",
    "prune_query_scores",
    "mark_alert_delivery",
    "measure_history",
    "promote_baseline",
    "record_ab_tests",
    "record_aggregates",
    "record_alert",
    "record_gold_set_version",
    "record_kb_snapshot",
    "record_run",
    "RunRanking",
    "load_ranking",
    "alert_deliveries",
    "mark_notifier_attempt",
    "mark_notifier_delivery",
    "retryable_alerts",
    "renew_lease",
    "abandon_expired_runs",
    "load_segment_spreads",
    "load_source_shares",
    "record_breakdowns",
    "source_share_history",
    "release_runs",
    "resolve_url",
    "rollback_baseline",
    "runs_under_fingerprint",
    "upgrade",
    "upsert_scores",
]


def connect(url: str | None = None) -> Engine:
    """An engine for the configured warehouse (see ``evalops.warehouse.config`` for the lookup order)."""
    return create_warehouse_engine(resolve_url(url))
