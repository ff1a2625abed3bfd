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

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # pragma: no cover
    from sqlalchemy.engine import Engine

    from evalops.fingerprint import EvalFingerprint
    from evalops.warehouse.abtests import (
        ab_test_results,
        comparison_look,
        load_ab_tests,
        record_ab_tests,
    )
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
    from evalops.warehouse.baselines import (
        baseline_history,
        find_baseline,
        promote_baseline,
        rollback_baseline,
    )
    from evalops.warehouse.catalog import (
        find_fingerprint_hash,
        get_fingerprint,
        get_gold_set_version,
        get_kb_snapshot,
        record_gold_set_version,
        record_kb_snapshot,
    )
    from evalops.warehouse.config import (
        WarehouseURL,
        create_warehouse_engine,
        resolve_url,
    )
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
    from evalops.warehouse.leases import abandon_expired_runs, release_runs, renew_lease
    from evalops.warehouse.migrate import (
        current_revision,
        downgrade,
        head_revisions,
        upgrade,
    )
    from evalops.warehouse.runs import (
        RunRanking,
        find_run,
        get_run,
        load_ranking,
        record_run,
    )
    from evalops.warehouse.scores import (
        load_aggregates,
        load_paired_scores,
        load_score_vectors,
        load_scores,
        prune_query_scores,
        record_aggregates,
        upsert_scores,
    )

# Each public name and the module that holds it: imported on first use (PEP 562), so that a command that
# reads one part of the warehouse (``evalops history``) does not import every part (the A/B tests' and the
# scores' numpy, the alerts...).
_WHERE = {
    "EvalFingerprint": "evalops.fingerprint",
    "ab_test_results": "evalops.warehouse.abtests",
    "comparison_look": "evalops.warehouse.abtests",
    "load_ab_tests": "evalops.warehouse.abtests",
    "record_ab_tests": "evalops.warehouse.abtests",
    "alert_dedup_key": "evalops.warehouse.alerts",
    "alert_deliveries": "evalops.warehouse.alerts",
    "last_sent_alerts": "evalops.warehouse.alerts",
    "list_alerts": "evalops.warehouse.alerts",
    "mark_alert_delivery": "evalops.warehouse.alerts",
    "mark_notifier_attempt": "evalops.warehouse.alerts",
    "mark_notifier_delivery": "evalops.warehouse.alerts",
    "record_alert": "evalops.warehouse.alerts",
    "retryable_alerts": "evalops.warehouse.alerts",
    "load_segment_spreads": "evalops.warehouse.breakdowns",
    "load_source_shares": "evalops.warehouse.breakdowns",
    "record_breakdowns": "evalops.warehouse.breakdowns",
    "source_share_history": "evalops.warehouse.breakdowns",
    "baseline_history": "evalops.warehouse.baselines",
    "find_baseline": "evalops.warehouse.baselines",
    "promote_baseline": "evalops.warehouse.baselines",
    "rollback_baseline": "evalops.warehouse.baselines",
    "find_fingerprint_hash": "evalops.warehouse.catalog",
    "get_fingerprint": "evalops.warehouse.catalog",
    "get_gold_set_version": "evalops.warehouse.catalog",
    "get_kb_snapshot": "evalops.warehouse.catalog",
    "record_gold_set_version": "evalops.warehouse.catalog",
    "record_kb_snapshot": "evalops.warehouse.catalog",
    "WarehouseURL": "evalops.warehouse.config",
    "create_warehouse_engine": "evalops.warehouse.config",
    "resolve_url": "evalops.warehouse.config",
    "ABTestResult": "evalops.warehouse.domain",
    "AlertRow": "evalops.warehouse.domain",
    "Baseline": "evalops.warehouse.domain",
    "BaselineLookup": "evalops.warehouse.domain",
    "EvalRun": "evalops.warehouse.domain",
    "GoldSetVersion": "evalops.warehouse.domain",
    "KBSnapshot": "evalops.warehouse.domain",
    "PairedScores": "evalops.warehouse.domain",
    "RunKey": "evalops.warehouse.domain",
    "ScoreVectors": "evalops.warehouse.domain",
    "check_history_query": "evalops.warehouse.history",
    "latest_per_logical_date": "evalops.warehouse.history",
    "latest_runs": "evalops.warehouse.history",
    "measure_history": "evalops.warehouse.history",
    "runs_under_fingerprint": "evalops.warehouse.history",
    "current_revision": "evalops.warehouse.migrate",
    "downgrade": "evalops.warehouse.migrate",
    "head_revisions": "evalops.warehouse.migrate",
    "upgrade": "evalops.warehouse.migrate",
    "abandon_expired_runs": "evalops.warehouse.leases",
    "release_runs": "evalops.warehouse.leases",
    "renew_lease": "evalops.warehouse.leases",
    "RunRanking": "evalops.warehouse.runs",
    "find_run": "evalops.warehouse.runs",
    "get_run": "evalops.warehouse.runs",
    "load_ranking": "evalops.warehouse.runs",
    "record_run": "evalops.warehouse.runs",
    "load_aggregates": "evalops.warehouse.scores",
    "load_paired_scores": "evalops.warehouse.scores",
    "load_score_vectors": "evalops.warehouse.scores",
    "load_scores": "evalops.warehouse.scores",
    "prune_query_scores": "evalops.warehouse.scores",
    "record_aggregates": "evalops.warehouse.scores",
    "upsert_scores": "evalops.warehouse.scores",
}


__all__ = [
    "ABTestResult",
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
    "load_segment_spreads",
    "load_source_shares",
    "record_breakdowns",
    "source_share_history",
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
    "release_runs",
    "resolve_url",
    "rollback_baseline",
    "runs_under_fingerprint",
    "upgrade",
    "upsert_scores",
]


def connect(url: str | None = None) -> Engine:
    """An engine for the configured warehouse (see ``evalops.warehouse.config`` for the lookup order)."""
    from evalops.warehouse.config import create_warehouse_engine, resolve_url

    return create_warehouse_engine(resolve_url(url))


def __getattr__(name: str) -> Any:
    where = _WHERE.get(name)
    if where is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(where), name)
    globals()[name] = value  # later look-ups skip this function
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_WHERE))
