"""The input steps: snapshot the knowledge base, validate the gold set, sample the query logs.

A broken input stops the run before anything is scored. The step stores a validation alert (and tries
to deliver it), then re-raises the typed error, which the DAG's retry policy treats as final. Nothing is
written to the metric tables.
"""

from __future__ import annotations

import contextlib
import json
import logging
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

from evalops.alerting import validation_alert
from evalops.config import DEFAULT_GOLD_SET
from evalops.contracts import validate_gold_set, validate_knowledge_base
from evalops.conversations.io import load_gold_set_folder
from evalops.errors import InputError, ValidationError
from evalops.fingerprint import content_digest
from evalops.formats._table import load_arrow_readers
from evalops.goldset import load_gold_set_trec
from evalops.knowledge import load_snapshot
from evalops.pipeline.context import RunContext
from evalops.pipeline.known_kb import known_snapshot
from evalops.pipeline.notify import deliver
from evalops.pipeline.prepared import keep_gold_set, keep_snapshot, prepared_gold_set, prepared_snapshot
from evalops.pipeline.registry import known_log_versions
from evalops.pipeline.spans import is_anchored_file, load_anchored_gold_set
from evalops.pipeline.store import engine_for
from evalops.pipeline.validated import remembered_validation
from evalops.pipeline.workdir import is_local, log_sample_folder, manifest_file, run_folder, upload
from evalops.querylog import draw_log_sample, read_log_window
from evalops.util.storage import make_folder
from evalops.warehouse import record_gold_set_version, record_kb_snapshot

if TYPE_CHECKING:  # pragma: no cover
    from evalops.config import Config
    from evalops.goldset import GoldSet
    from evalops.knowledge import KnowledgeBaseSnapshot
    from evalops.pipeline.workdir import WorkFolder

__all__ = [
    "describe_knowledge_base",
    "gold_set_for_run",
    "load_gold_set_for",
    "load_knowledge_base",
    "sample_query_logs",
    "snapshot_knowledge_base",
    "validate_inputs",
]

log = logging.getLogger(__name__)


@contextlib.contextmanager
def _contract(cfg: Config, run: RunContext, stage: str, source: str) -> Iterator[None]:
    """Bad input inside the block stores and sends the validation alert of ``stage``, then re-raises. The
    Data Docs folder is made first: one that cannot be made is a bad setting, not bad input of ``stage``."""
    if cfg.data_docs is not None:
        make_folder(cfg.data_docs, "the Data Docs folder (data_docs)")
    try:
        yield
    except (InputError, ValidationError) as exc:
        summary = exc.summary if isinstance(exc, ValidationError) else str(exc)
        docs = exc.docs_path if isinstance(exc, ValidationError) else None
        alert = validation_alert(stage=stage, summary=summary, day=run.day, source=source, docs_path=docs)
        deliver(cfg.alerting, engine_for(cfg), [alert])
        raise


def load_knowledge_base(cfg: Config) -> KnowledgeBaseSnapshot:

    return load_snapshot(cfg.knowledge_base_path())


def load_gold_set_for(cfg: Config, name: str = DEFAULT_GOLD_SET) -> GoldSet:
    """The gold set ``name`` as configured: a folder (BEIR, JSONL, CSV) or TREC qrels with ``queries``."""

    # the run imports pyarrow anyway (its run files, the work storage's Parquet): import it now, so that the
    # qrels are read in columns rather than line by line (formats._table.read_table)
    load_arrow_readers()
    spec = cfg.gold_set_named(name)
    options = {"default_type": spec.default_type, "default_language": spec.default_language}
    if spec.queries is not None:

        if is_anchored_file(spec.path):  # text-anchored judgments: the documents of their excerpts
            return load_anchored_gold_set(cfg, name, options)
        return load_gold_set_trec(spec.path, spec.queries, **options)
    if spec.path.is_file():
        raise InputError(f"{spec.path}: a gold set file needs its queries; set "
                         f"{'gold_set' if name == DEFAULT_GOLD_SET else 'gold_sets.' + name}.queries to the queries "
                         "file (.jsonl, .csv or .tsv), or point path at a BEIR folder")
    return load_gold_set_folder(spec.path, **options)  # a conversation gold set too (evalops.conversations.io)


def gold_set_for_run(cfg: Config, name: str = DEFAULT_GOLD_SET) -> GoldSet:
    """Gold set ``name`` for the steps after validation: the copy ``validate_inputs`` prepared while the
    source is unchanged (:mod:`evalops.pipeline.prepared`), else read from the source."""
    return prepared_gold_set(cfg, name, lambda: load_gold_set_for(cfg, name))


def contracts_file(work: WorkFolder, run: RunContext) -> Path:
    """The run's contract outcomes (rules in force, not-applicable checks, warnings), for the report."""
    return run_folder(work, run) / "contracts.json"


def _record_contract(cfg: Config, run: RunContext, key: str, report: Any, reused: dict[str, Any] | None = None) -> None:
    """The outcome beside the run; ``reused`` names the earlier validation of the same content whose
    outcome this is (:mod:`evalops.pipeline.validated`)."""
    path = contracts_file(cfg, run)
    path.parent.mkdir(parents=True, exist_ok=True)
    data = json.loads(path.read_text()) if path.exists() else {}
    data[key] = {k: v for k, v in report.to_dict().items() if k != "failures"}
    if reused is not None:
        data[key]["reused_from"] = reused
    path.write_text(json.dumps(data, default=str, indent=1))


def load_contracts(work: WorkFolder, run: RunContext) -> dict[str, Any]:
    path = contracts_file(work, run)
    return json.loads(path.read_text()) if path.exists() else {}


def describe_knowledge_base(cfg: Config) -> dict[str, Any]:
    """The snapshot id, source and size of the knowledge base (what a producer attaches to its event)."""
    return load_knowledge_base(cfg).describe()


def snapshot_knowledge_base(cfg: Config, run: RunContext) -> str:
    """Content-hash the knowledge base, validate it, record the snapshot and keep its manifest.

    Returns the snapshot id. A snapshot that cannot be read or breaks its contract stops the run.
    """

    source = str(cfg.knowledge_base_path())
    with _contract(cfg, run, "knowledge_base", source):
        snapshot = known_snapshot(cfg)  # unchanged bytes: the snapshot they were, documents read when needed
        rules = cfg.knowledge_base.rules
        report, reused = remembered_validation(
            cfg, run, "knowledge base", {"snapshot_id": snapshot.snapshot_id}, rules.to_dict(),
            lambda: validate_knowledge_base(snapshot, rules, docs_dir=cfg.data_docs))
    for warning in report.warnings:
        log.warning("knowledge base %s: %s", source, warning)
    _record_contract(cfg, run, "knowledge_base", report, reused)
    keep_snapshot(cfg, snapshot)
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
        if is_local(manifest):
            snapshot.save_manifest(manifest)
        else:
            import tempfile

            with tempfile.TemporaryDirectory() as staging:
                upload(snapshot.save_manifest(Path(staging) / manifest.name), manifest)
    log.info("knowledge base %s: snapshot %s, %d documents", source, snapshot.snapshot_id, len(snapshot))
    return snapshot.snapshot_id


def validate_inputs(cfg: Config, run: RunContext, snapshot_id: str) -> dict[str, str]:
    """Validate every gold set against the snapshot (every judged doc must exist in it) under its rules;
    record each version.

    Returns ``{gold set name: version}``. Every gold set is validated before any is recorded, so one bad
    gold set stops the run with nothing written. Also refuses a knowledge base that changed since the
    snapshot step.
    """

    validated = []
    for name, spec in cfg.require_gold_sets().items():
        source = str(spec.path)
        with _contract(cfg, run, "gold_set", source):
            snapshot = current_snapshot(cfg, snapshot_id)
            gold = load_gold_set_for(cfg, name)
            report, reused = remembered_validation(
                cfg, run, "gold set", {"version": gold.version, "snapshot_id": snapshot.snapshot_id},
                spec.rules.to_dict(),
                lambda: validate_gold_set(gold, snapshot, spec.rules, docs_dir=cfg.data_docs))
        validated.append((name, spec, gold, report, reused))
    versions = {}
    for name, spec, gold, report, reused in validated:
        _record_contract(cfg, run, f"gold_set:{name}", report, reused)
        keep_gold_set(cfg, name, gold)
        record_gold_set_version(
            engine_for(cfg),
            gold.version,
            name=name if name != DEFAULT_GOLD_SET else spec.path.name,
            n_queries=len(gold),
            n_judgments=len(gold.judgments),
            source=str(spec.path),
            meta={"types": gold.type_counts(), "checked_expectations": report.checked, "rules": report.rules,
                  "not_applicable": report.not_applicable},
        )
        log.info("gold set %s (%s): version %s, %d queries", name, spec.path, gold.version, len(gold))
        versions[name] = gold.version
    return versions


def current_snapshot(cfg: Config, snapshot_id: str) -> KnowledgeBaseSnapshot:
    """The knowledge base as it is now, refused when it is no longer the snapshot this run planned on (the
    copy prepared by ``snapshot_knowledge_base`` while the source is unchanged: :mod:`evalops.pipeline.prepared`)."""

    prepared = prepared_snapshot(cfg, snapshot_id)
    if prepared is not None:
        return prepared
    snapshot = known_snapshot(cfg)
    if snapshot.snapshot_id != snapshot_id:
        raise InputError(
            f"{cfg.knowledge_base_path()}: the knowledge base changed during the run (snapshot {snapshot_id} became "
            f"{snapshot.snapshot_id}); the next run will evaluate the new one"
        )
    return snapshot


def sample_query_logs(cfg: Config, run: RunContext, snapshot_id: str) -> dict[str, Any]:
    """Validate the run's log window, scrub it and draw the day's seeded sample into the work folder.

    Returns ``{"folder": path, "queries": n, "judged": n, "version": hash}``; ``queries`` is 0 when the
    sample is switched off (``log_sample_size: 0``) or the logs folder does not exist.
    """
    logs = cfg.query_logs.path
    if cfg.log_sample_size == 0:
        return {"folder": None, "queries": 0, "judged": 0, "version": None, "reason": "log_sample_size is 0"}
    if logs is None:
        return {"folder": None, "queries": 0, "judged": 0, "version": None,
                "reason": "query_logs.path is not set"}
    if not logs.exists():
        log.warning("no query logs at %s: production queries are not scored", logs)
        return {"folder": None, "queries": 0, "judged": 0, "version": None, "reason": f"no query logs at {logs}"}

    source = str(logs)
    with _contract(cfg, run, "query_logs", source):
        rules = cfg.query_logs.rules.rules(run.window_start, run.window_end, known_log_versions(cfg))
        window = read_log_window(logs, run.window_start, run.window_end)
        sample = draw_log_sample(window, rules, logical_date=run.anchor, size=cfg.log_sample_size,
                                 docs_dir=cfg.data_docs)
    folder = log_sample_folder(cfg, run)
    if is_local(folder):
        sample.write(folder)
    else:  # remote work storage: write locally, then put the folder in place
        import tempfile

        with tempfile.TemporaryDirectory() as staging:
            sample.write(staging)
            upload(Path(staging), folder)
    judged = len(set(sample.weak_qrels.query_ids.tolist())) if len(sample.weak_qrels) else 0
    log.info("query logs %s: %d rows, %d sampled queries, %d with feedback", source, sample.rows,
             len(sample.query_ids), judged)
    return {"folder": str(folder), "queries": len(sample.query_ids), "judged": judged,
            "version": _sample_version(sample), "window": [run.window_start.isoformat(), run.window_end.isoformat()]}


def _sample_version(sample: Any) -> str:
    """A content hash of what production scoring uses: the sampled queries and their weak judgments."""
    qrels = sample.weak_qrels
    rows = sorted(zip(qrels.query_ids.tolist(), qrels.doc_ids.tolist(), qrels.grades.tolist(), strict=False))
    return content_digest({"queries": sorted(sample.query_ids), "weak_judgments": [list(r) for r in rows]})
