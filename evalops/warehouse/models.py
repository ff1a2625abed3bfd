"""SQLAlchemy 2.0 ORM classes of the metrics warehouse, mapped onto the Core tables of
:mod:`evalops.warehouse.tables` (where the columns, constraints and their reasons are).

Nothing outside ``evalops.warehouse`` sees these classes: the repository functions query the Core tables
and return frozen dataclasses (``evalops.warehouse.domain``) and DataFrames. The migrations read
``Base.metadata``, which is :data:`evalops.warehouse.tables.metadata`. Importing this module imports
SQLAlchemy's ORM, which a run does not need.
"""

from __future__ import annotations

from sqlalchemy.orm import DeclarativeBase

from evalops.warehouse import tables
from evalops.warehouse.statuses import FINISHED_STATUSES, RUN_STATUSES, UNFINISHED_STATUSES
from evalops.warehouse.tables import (
    ALERT_STATUSES,
    BASELINE_ACTIONS,
    DELIVERY_STATUSES,
    LABEL_SOURCES,
    NAMING_CONVENTION,
)

__all__ = [
    "ABTestModel",
    "AlertModel",
    "BaselineModel",
    "Base",
    "EvalFingerprintModel",
    "EvalRunModel",
    "GoldSetVersionModel",
    "JudgeRunModel",
    "JudgmentModel",
    "KBSnapshotModel",
    "MeasureModel",
    "NAMING_CONVENTION",
    "QueryScoreModel",
    "QueryTextModel",
    "RunRankingModel",
    "RunTimingModel",
    "RUN_STATUSES",
    "RunAggregateModel",
    "ALERT_STATUSES",
    "DELIVERY_STATUSES",
    "BASELINE_ACTIONS",
    "AlertDeliveryModel",
    "AnnotationAdjudicationModel",
    "AnnotationLabelModel",
    "GoldSetMergeModel",
    "LABEL_SOURCES",
    "SegmentSpreadModel",
    "SourceShareModel",
    "FINISHED_STATUSES",
    "UNFINISHED_STATUSES",
]


class Base(DeclarativeBase):
    metadata = tables.metadata


class GoldSetVersionModel(Base):
    __table__ = tables.gold_sets


class KBSnapshotModel(Base):
    __table__ = tables.kb_snapshots


class EvalFingerprintModel(Base):
    __table__ = tables.fingerprints


class MeasureModel(Base):
    __table__ = tables.measures


class EvalRunModel(Base):
    __table__ = tables.runs


class QueryScoreModel(Base):
    __table__ = tables.query_scores


class RunAggregateModel(Base):
    __table__ = tables.aggregates


class BaselineModel(Base):
    """One row per promotion or rollback; ``is_current`` marks the one baseline in force.

    ``previous_id`` is the baseline a rollback of this row restores, so repeated rollbacks walk back
    through the history.
    """

    __table__ = tables.baselines


class ABTestModel(Base):
    __table__ = tables.ab_tests


class AlertModel(Base):
    """Stored before delivery; the notifier outcome is written afterwards (delivered or undelivered)."""

    __table__ = tables.alerts


class AlertDeliveryModel(Base):
    """The delivery state of one alert at one notifier, so a retry sends only where it did not arrive."""

    __table__ = tables.alert_deliveries


class QueryTextModel(Base):
    """The text of each scored query, once per query set version (gold-set version or production sample).

    Production text is stored as the log sample wrote it (PII-scrubbed); it is untrusted and every reader
    escapes it for its medium.
    """

    __table__ = tables.texts


class RunTimingModel(Base):
    """Retrieval latency (milliseconds, over the answered queries) and failure count of one run."""

    __table__ = tables.timings


class RunRankingModel(Base):
    """What a run retrieved, as far as the bounds of a comparison need it (``evalops.judged.bounds``): every judged
    document of each query's ranking and the unjudged ones down to ``depth`` (the deepest cutoff compared),
    with their 0-based ranks. ``data`` is a Parquet file of ``query_id, doc_id, rank`` (``evalops.judged.unjudged``);
    a later comparison against this run, as its baseline, reads it to give each unjudged (query, document)
    one grade in both runs. Written with the run's scores, in their transaction."""

    __table__ = tables.rankings


class JudgmentModel(Base):
    """The judgment cache: one judge label, keyed by everything that could change it.

    The key is (query text hash, document content hash, judge model, prompt ``name@version``, decoding
    settings as canonical JSON, sample index); a re-run with the same key costs no request. Only labels
    are stored: a missing label (a refusal, a timeout) is retried on the next run, never cached.
    """

    __table__ = tables.judgments


class JudgeRunModel(Base):
    """One judge step of one DAG run (``scope`` names the task and the queries judged, e.g. ``production``):
    the judge, the requests, cache hits, missing labels, tokens and cost, the agreement with the gold set,
    the gate's decision and what the step measured (``results``: each version's judge-label means and
    per-query values, the queries excluded, the families corrected). Its comparisons are ``ab_tests`` rows
    naming it (``ab_tests.judge_run_id``), stored like every other comparison."""

    __table__ = tables.judge_runs


class AnnotationLabelModel(Base):
    """One annotator's answer to one annotation-queue item: a grade, or a skip (``grade`` null), with an
    optional comment. The item's query and document ids are copied from the queue, so a label means the
    same thing after the queue file is gone. A second answer by the same annotator replaces the first."""

    __table__ = tables.annotation_labels


class AnnotationAdjudicationModel(Base):
    """The grade an adjudicator settled on for an item whose labels disagree (one per item; a second
    adjudication replaces the first)."""

    __table__ = tables.annotation_adjudications


class GoldSetMergeModel(Base):
    """A gold-set version made by ``evalops gold merge``: its number within the gold set's history, its
    content hash and its parent's, and the provenance of every judgment it added (item, labels,
    annotators, adjudicator)."""

    __table__ = tables.gold_set_merges


class SourceShareModel(Base):
    """One source's share of a run's top-k slots and its precision (``evalops.sources``), with the
    baseline's share and the shift when the run was compared, and the policy they were counted under (the
    corpus field, k, the bound). A re-run replaces the run's rows."""

    __table__ = tables.source_shares


class SegmentSpreadModel(Base):
    """A run's mean and spread of one measure within one segment (``evalops.segments``, ``evalops.spread``).
    A re-run replaces the run's rows."""

    __table__ = tables.segment_spreads
