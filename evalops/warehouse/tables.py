"""The warehouse's tables as SQLAlchemy Core :class:`~sqlalchemy.Table` objects, typed once here for the
modules that query them (an ORM class's ``__table__`` is typed as a ``FromClause``)."""

from __future__ import annotations

from sqlalchemy import Table

from evalops.warehouse.models import (
    ABTestModel,
    AlertDeliveryModel,
    AlertModel,
    AnnotationAdjudicationModel,
    AnnotationLabelModel,
    BaselineModel,
    EvalFingerprintModel,
    EvalRunModel,
    GoldSetMergeModel,
    GoldSetVersionModel,
    JudgeRunModel,
    JudgmentModel,
    KBSnapshotModel,
    MeasureModel,
    QueryScoreModel,
    QueryTextModel,
    RunAggregateModel,
    RunRankingModel,
    RunTimingModel,
    SegmentSpreadModel,
    SourceShareModel,
)

ab_tests: Table = ABTestModel.__table__  # type: ignore[assignment]
aggregates: Table = RunAggregateModel.__table__  # type: ignore[assignment]
alert_deliveries: Table = AlertDeliveryModel.__table__  # type: ignore[assignment]
alerts: Table = AlertModel.__table__  # type: ignore[assignment]
annotation_adjudications: Table = AnnotationAdjudicationModel.__table__  # type: ignore[assignment]
annotation_labels: Table = AnnotationLabelModel.__table__  # type: ignore[assignment]
baselines: Table = BaselineModel.__table__  # type: ignore[assignment]
fingerprints: Table = EvalFingerprintModel.__table__  # type: ignore[assignment]
gold_set_merges: Table = GoldSetMergeModel.__table__  # type: ignore[assignment]
gold_sets: Table = GoldSetVersionModel.__table__  # type: ignore[assignment]
judge_runs: Table = JudgeRunModel.__table__  # type: ignore[assignment]
judgments: Table = JudgmentModel.__table__  # type: ignore[assignment]
kb_snapshots: Table = KBSnapshotModel.__table__  # type: ignore[assignment]
measures: Table = MeasureModel.__table__  # type: ignore[assignment]
query_scores: Table = QueryScoreModel.__table__  # type: ignore[assignment]
rankings: Table = RunRankingModel.__table__  # type: ignore[assignment]
runs: Table = EvalRunModel.__table__  # type: ignore[assignment]
segment_spreads: Table = SegmentSpreadModel.__table__  # type: ignore[assignment]
source_shares: Table = SourceShareModel.__table__  # type: ignore[assignment]
texts: Table = QueryTextModel.__table__  # type: ignore[assignment]
timings: Table = RunTimingModel.__table__  # type: ignore[assignment]
