"""Validate the gold set, the knowledge-base snapshot and a query-log window against their contracts.

Each ``validate_*`` function runs its suite (``evalops.contracts.checks``) through Great Expectations,
writes Data Docs HTML to ``docs_dir`` (``None`` writes none) and returns a ``ValidationReport``.
With ``raise_on_failure=True`` (the default, what a pipeline wants) a failed contract raises
``evalops.errors.ValidationError(summary, failures, docs_path)`` instead; nothing is written anywhere
else. Pass ``raise_on_failure=False`` to inspect the report (the CLI does, to print it and set the exit code).
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

from evalops.contracts._gx import run_tables
from evalops.contracts.checks import (
    empty_document_ids,
    gold_set_tables,
    is_untyped,
    knowledge_base_tables,
    observed_grades,
    query_log_tables,
)
from evalops.contracts.logrows import row_problems
from evalops.goldset.model import GoldSet
from evalops.contracts.report import ValidationReport
from evalops.contracts.rules import GoldSetRules, KnowledgeBaseRules, QueryLogRules
from evalops.errors import InputError

if TYPE_CHECKING:  # pragma: no cover
    import pandas as pd

    from evalops.knowledge.snapshot import KnowledgeBaseSnapshot

__all__ = ["validate_gold_set", "validate_knowledge_base", "validate_query_logs", "DEFAULT_DOCS_DIR"]

DEFAULT_DOCS_DIR = os.path.join(".evalops", "data_docs")

Docs = str | os.PathLike[str] | None


def _finish(report: ValidationReport, raise_on_failure: bool) -> ValidationReport:
    return report.raise_if_failed() if raise_on_failure else report


def validate_gold_set(
    gold: GoldSet,
    snapshot: KnowledgeBaseSnapshot | None,
    rules: GoldSetRules | None = None,
    *,
    docs_dir: Docs = DEFAULT_DOCS_DIR,
    raise_on_failure: bool = True,
) -> ValidationReport:
    """The gold-set contract; every judged doc must exist in ``snapshot``.

    ``snapshot=None`` skips only that check and says so in the report's notes (use it when the knowledge
    base is not at hand, never in the pipeline).
    """
    rules = rules or GoldSetRules()
    ids = snapshot.doc_ids if snapshot is not None else None
    snap_id = snapshot.snapshot_id if snapshot is not None else None
    tables = gold_set_tables(gold, ids, snap_id, rules)
    checked, failures, docs = run_tables("gold_set", tables, docs_dir)
    notes = [] if snapshot is not None else ["no knowledge-base snapshot given: judged doc ids were not checked"]
    subject = f"gold set {gold.source or '(in memory)'} (version {gold.version}, {len(gold)} queries)"
    if snap_id:
        subject += f" against knowledge base {snap_id}"
    seen = observed_grades(gold)
    rule_dict = rules.to_dict() | {"snapshot_id": snap_id, "observed_grades": list(seen) if seen else None,
                                   "query_types": "none" if is_untyped(gold) else gold.type_counts()}
    not_applicable = [{"rule": rule, "reason": why} for t in tables for rule, why in t.not_applicable]
    report = ValidationReport("gold set", subject, checked, failures, rule_dict, docs, notes, not_applicable)
    return _finish(report, raise_on_failure)


def validate_knowledge_base(
    snapshot: KnowledgeBaseSnapshot,
    rules: KnowledgeBaseRules | None = None,
    *,
    docs_dir: Docs = DEFAULT_DOCS_DIR,
    raise_on_failure: bool = True,
) -> ValidationReport:
    """The knowledge-base contract: unique ids, non-empty text, not empty."""
    if not snapshot.has_text:
        raise InputError(f"{snapshot.source}: a manifest has no document text to validate; load the corpus itself")
    rules = rules or KnowledgeBaseRules()
    checked, failures, docs = run_tables("knowledge_base", knowledge_base_tables(snapshot.docs, rules), docs_dir)
    subject = f"knowledge base {snapshot.source or '(in memory)'} (snapshot {snapshot.snapshot_id}, {len(snapshot)} documents)"
    warnings = []
    empty = empty_document_ids(snapshot.docs)
    if empty and not failures:
        shown = ", ".join(repr(d) for d in empty[:10]) + (f" and {len(empty) - 10} more" if len(empty) > 10 else "")
        warnings.append(f"{len(empty)} of {len(snapshot)} documents have no text ({len(empty) / len(snapshot):.2%}, "
                        f"within max_empty_share {rules.max_empty_share:.2%}): {shown}")
    report = ValidationReport("knowledge base", subject, checked, failures, rules.to_dict(), docs, warnings=warnings)
    return _finish(report, raise_on_failure)


def validate_query_logs(
    frame: pd.DataFrame,
    rules: QueryLogRules,
    *,
    problems: pd.Series | None = None,
    source: str | None = None,
    docs_dir: Docs = DEFAULT_DOCS_DIR,
    raise_on_failure: bool = True,
) -> ValidationReport:
    """The query-log contract on one window (see ``QueryLogRules``). ``problems`` is the per-row reason
    from ``evalops.contracts.logrows.row_problems`` (computed here when not given)."""
    if problems is None:
        problems = row_problems(frame, rules)
    checked, failures, docs = run_tables("query_logs", query_log_tables(frame, problems, rules), docs_dir)
    bad = int(problems.notna().sum())
    subject = (
        f"query logs {source or '(in memory)'} for [{rules.start.isoformat()}, {rules.end.isoformat()}) "
        f"({len(frame)} rows, {bad} malformed)"
    )
    report = ValidationReport("query log", subject, checked, failures, rules.to_dict(), docs)
    return _finish(report, raise_on_failure)
