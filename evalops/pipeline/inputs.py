"""The input steps: snapshot the knowledge base, validate the gold set, sample the query logs.

A broken input stops the run before anything is scored. The step stores a validation alert (and tries
to deliver it), then re-raises the typed error, which the DAG's retry policy treats as final. Nothing is
written to the metric tables.
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

from evalops.alerting import validation_alert
from evalops.errors import InputError, ValidationError
from evalops.pipeline.context import RunContext
from evalops.pipeline.notify import deliver
from evalops.pipeline.store import engine_for
from evalops.pipeline.workdir import log_sample_folder, manifest_file

if TYPE_CHECKING:  # pragma: no cover
    from evalops.config import Config
    from evalops.goldset import GoldSet
    from evalops.knowledge import KnowledgeBaseSnapshot

__all__ = [
    "describe_knowledge_base",
    "load_gold_set_for",
    "load_knowledge_base",
    "sample_query_logs",
    "snapshot_knowledge_base",
    "validate_inputs",
]

log = logging.getLogger(__name__)


@contextlib.contextmanager
def _contract(cfg: Config, run: RunContext, stage: str, source: str) -> Iterator[None]:
    """Bad input inside the block stores and sends the validation alert of ``stage``, then re-raises."""
    try:
        yield
    except (InputError, ValidationError) as exc:
        summary = exc.summary if isinstance(exc, ValidationError) else str(exc)
        docs = exc.docs_path if isinstance(exc, ValidationError) else None
        deliver(cfg, [validation_alert(stage=stage, summary=summary, day=run.day, source=source, docs_path=docs)])
        raise


def load_knowledge_base(cfg: Config) -> KnowledgeBaseSnapshot:
    from evalops.knowledge import load_snapshot

    return load_snapshot(cfg.knowledge_base)


def load_gold_set_for(cfg: Config) -> GoldSet:
    from evalops.goldset import load_gold_set

    return load_gold_set(cfg.gold_set)


def describe_knowledge_base(cfg: Config) -> dict[str, Any]:
    """The snapshot id, source and size of the knowledge base (what a producer attaches to its event)."""
    return load_knowledge_base(cfg).describe()


def snapshot_knowledge_base(cfg: Config, run: RunContext) -> str:
    """Content-hash the knowledge base, validate it, record the snapshot and keep its manifest.

    Returns the snapshot id. A snapshot that cannot be read or breaks its contract stops the run.
    """
    from evalops.goldset import validate_knowledge_base
    from evalops.warehouse import record_kb_snapshot

    source = str(cfg.knowledge_base)
    with _contract(cfg, run, "knowledge_base", source):
        snapshot = load_knowledge_base(cfg)
        validate_knowledge_base(snapshot, docs_dir=cfg.work_dir / "data_docs")
    record_kb_snapshot(
        engine_for(cfg),
        snapshot.snapshot_id,
        n_documents=len(snapshot),
        content_hash=snapshot.snapshot_id,
        source=source,
        meta={"recorded_by": run.label},
    )
    manifest = manifest_file(cfg, snapshot.snapshot_id)
    if not manifest.exists():
        manifest.parent.mkdir(parents=True, exist_ok=True)
        snapshot.save_manifest(manifest)
    log.info("knowledge base %s: snapshot %s, %d documents", source, snapshot.snapshot_id, len(snapshot))
    return snapshot.snapshot_id


def validate_inputs(cfg: Config, run: RunContext, snapshot_id: str) -> str:
    """Validate the gold set against the snapshot (every judged doc must exist in it); record its version.

    Returns the gold-set version. Also refuses a knowledge base that changed since the snapshot step.
    """
    from evalops.goldset import validate_gold_set
    from evalops.warehouse import record_gold_set_version

    source = str(cfg.gold_set)
    with _contract(cfg, run, "gold_set", source):
        snapshot = current_snapshot(cfg, snapshot_id)
        gold = load_gold_set_for(cfg)
        report = validate_gold_set(gold, snapshot, docs_dir=cfg.work_dir / "data_docs")
    record_gold_set_version(
        engine_for(cfg),
        gold.version,
        name=cfg.gold_set.name,
        n_queries=len(gold),
        n_judgments=len(gold.judgments),
        source=source,
        meta={"types": gold.type_counts(), "checked_expectations": report.checked},
    )
    log.info("gold set %s: version %s, %d queries", source, gold.version, len(gold))
    return gold.version


def current_snapshot(cfg: Config, snapshot_id: str) -> KnowledgeBaseSnapshot:
    """The knowledge base as it is now, refused when it is no longer the snapshot this run planned on."""
    snapshot = load_knowledge_base(cfg)
    if snapshot.snapshot_id != snapshot_id:
        raise InputError(
            f"{cfg.knowledge_base}: the knowledge base changed during the run (snapshot {snapshot_id} became "
            f"{snapshot.snapshot_id}); the next run will evaluate the new one"
        )
    return snapshot


def sample_query_logs(cfg: Config, run: RunContext, snapshot_id: str) -> dict[str, Any]:
    """Validate the run's log window, scrub it and draw the day's seeded sample into the work folder.

    Returns ``{"folder": path, "queries": n, "judged": n, "version": hash}``; ``queries`` is 0 when the
    sample is switched off (``log_sample_size: 0``) or the logs folder does not exist.
    """
    if cfg.log_sample_size == 0:
        return {"folder": None, "queries": 0, "judged": 0, "version": None, "reason": "log_sample_size is 0"}
    if not cfg.query_logs.exists():
        log.warning("no query logs at %s: production queries are not scored", cfg.query_logs)
        return {"folder": None, "queries": 0, "judged": 0, "version": None,
                "reason": f"no query logs at {cfg.query_logs}"}
    from evalops.goldset import QueryLogRules
    from evalops.querylog import draw_log_sample, read_log_window

    from evalops.pipeline.registry import known_log_versions

    source = str(cfg.query_logs)
    with _contract(cfg, run, "query_logs", source):
        rules = QueryLogRules(start=run.window_start, end=run.window_end, known_versions=known_log_versions(cfg))
        window = read_log_window(cfg.query_logs, run.window_start, run.window_end)
        sample = draw_log_sample(window, rules, logical_date=run.anchor, size=cfg.log_sample_size,
                                 docs_dir=cfg.work_dir / "data_docs")
    folder = log_sample_folder(cfg, run)
    sample.write(folder)
    judged = len(set(sample.weak_qrels.query_ids.tolist())) if len(sample.weak_qrels) else 0
    log.info("query logs %s: %d rows, %d sampled queries, %d with feedback", source, sample.rows,
             len(sample.query_ids), judged)
    return {"folder": str(folder), "queries": len(sample.query_ids), "judged": judged,
            "version": _sample_version(sample), "window": [run.window_start.isoformat(), run.window_end.isoformat()]}


def _sample_version(sample: Any) -> str:
    """A content hash of what production scoring uses: the sampled queries and their weak judgments."""
    from evalops.goldset.model import content_digest

    qrels = sample.weak_qrels
    rows = sorted(zip(qrels.query_ids.tolist(), qrels.doc_ids.tolist(), qrels.grades.tolist()))
    return content_digest({"queries": sorted(sample.query_ids), "weak_judgments": [list(r) for r in rows]})
