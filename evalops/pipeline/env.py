"""What the run's steps after planning read of the settings, made once from the :class:`~evalops.config.Config`.

The score, compare, decide, alert and report steps do not take the whole ``Config`` (it reaches every reader of the
project: the registry, the data contracts, the notifiers, the judge): they take a :class:`RunEnv`, which names
what they read: where the warehouse, the work folder and the reports are, the regression policy, the measures,
the few numbers of the failure policy and the rankings, the alerting and MLflow settings, the gold sets'
floors, the project folder and the scores' retention, one handle on the run's inputs (the query sets, the
knowledge base and the retriever registry, :class:`RunInputs`) and one on the judge step's records
(:class:`RunJudging`). :func:`run_env` is the one place that makes it from the settings:
planning calls it (a bad regression policy or measure stops the run there), and so do the DAG's tasks
(``evalops.airflow.tasks``) and ``evalops run`` (``evalops.pipeline.local``), each process once.

A function that needs one or two of these fields takes the fields, not the ``RunEnv``.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from types import MappingProxyType
from typing import TYPE_CHECKING, Any

from evalops.floors import FloorRule, floor_rules
from evalops.judged.holes import judged_measures
from evalops.pipeline.registry import (
    alerting_measures,
    anchored_measures,
    canonical_measures,
    context_measures,
    load_registry_for,
)
from evalops.warehouse.config import url_for

if TYPE_CHECKING:  # pragma: no cover
    from sqlalchemy.engine import Engine

    from evalops.chunking import AnchoredJudgments
    from evalops.config import AlertingSettings, Config, JudgeSettings, MlflowSettings
    from evalops.conversations.model import Conversations
    from evalops.knowledge import KnowledgeBaseSnapshot
    from evalops.pipeline.context import RunContext
    from evalops.pipeline.queries import QuerySet
    from evalops.pipeline.specs import VersionSpec
    from evalops.retrievers import Registry, RetrieverEntry
    from evalops.sources import SourcePolicy
    from evalops.stats import Policy

__all__ = ["Measures", "RunEnv", "RunInputs", "RunJudging", "run_env"]


@dataclass(frozen=True)
class Measures:
    """The run's measures as canonical strings, in config order (``evalops.pipeline.registry`` reads them from
    the settings): the configured ``canonical`` ones, the ``context`` ones (``evalops.context``), the span and
    chunk ones of a text-anchored gold set (``anchored``), Judged@k at each configured cutoff (``judged``), and
    those whose regression raises an alert (``alerting``)."""

    canonical: tuple[str, ...]
    context: tuple[str, ...] = ()
    anchored: tuple[str, ...] = ()
    judged: tuple[str, ...] = ()
    alerting: tuple[str, ...] = ()

    @property
    def text(self) -> list[str]:
        """The measures that read texts or spans, not the document judgments: context, then span and chunk."""
        return [*self.context, *self.anchored]

    @property
    def compared(self) -> list[str]:
        """What each candidate is compared on: the configured measures, then the text measures."""
        return [*self.canonical, *self.text]

    @property
    def scored(self) -> list[str]:
        """What every version is scored on: the configured measures, Judged@k, then the text measures."""
        return [*self.canonical, *self.judged, *self.text]


class RunInputs:
    """The run's query sets, knowledge base and retriever registry as the steps after planning read them (the
    copies ``validate_inputs`` and ``snapshot_knowledge_base`` prepared while the sources are unchanged). A
    handle in a :class:`RunEnv` that still reads the settings: the gold sets' files and rules and the registry
    files are the settings' (``evalops.pipeline.inputs``, ``evalops.pipeline.registry``)."""

    def __init__(self, cfg: Config):
        self._cfg = cfg

    def query_set(self, dataset: str, sample_folder: str | None) -> QuerySet:
        """The judged queries of a warehouse ``dataset`` (``evalops.pipeline.queries.query_set_for``)."""
        from evalops.pipeline.queries import query_set_for

        return query_set_for(self._cfg, dataset, sample_folder)

    def attributes(self, dataset: str, sample_folder: str | None) -> dict[str, dict[str, str]]:
        """Per query id its segments (``evalops.pipeline.queries.query_attributes``)."""
        from evalops.pipeline.queries import query_attributes

        return query_attributes(self._cfg, dataset, sample_folder)

    def conversations(self, dataset: str) -> Conversations | None:
        """The turns of a conversational gold set (``evalops.conversations.pipeline``), else None."""
        from evalops.conversations.pipeline import conversations_for

        return conversations_for(self._cfg, dataset)

    def snapshot(self, snapshot_id: str) -> KnowledgeBaseSnapshot:
        """The knowledge base, refused when it is no longer the planned snapshot (``inputs.current_snapshot``)."""
        from evalops.pipeline.inputs import current_snapshot

        return current_snapshot(self._cfg, snapshot_id)

    def registry(self, run: RunContext | None = None) -> Registry:
        """The retriever registry; for a ``run`` with an ad-hoc candidate, with it (``registry.load_registry_for``)."""
        return load_registry_for(self._cfg, run)

    def candidate(self, run: RunContext) -> RetrieverEntry | None:
        """The run's ad-hoc candidate, or None for a regular run (``evalops.pipeline.adhoc``)."""
        from evalops.pipeline.adhoc import recorded_candidate

        return recorded_candidate(self._cfg, run)

    def document_texts(self, snapshot_id: str) -> dict[str, str]:
        """Each document's text as the context measures and the judge read it (``judging.items.document_texts``)."""
        from evalops.pipeline.judging.items import document_texts

        return document_texts(self.snapshot(snapshot_id))

    def anchored_judgments(self, dataset: str, snapshot: KnowledgeBaseSnapshot) -> AnchoredJudgments | None:
        """The text-anchored judgments of a warehouse ``dataset`` (``spans.anchored_judgments_for``), checked
        against ``snapshot``'s text; None for the production sample or a gold set not in the span format."""
        from evalops.config import PRODUCTION
        from evalops.pipeline.spans import anchored_judgments_for

        return None if dataset == PRODUCTION else anchored_judgments_for(self._cfg, dataset, snapshot)

    def document_sources(self, field: str) -> dict[str, str]:
        """Each document's source label in ``field`` (``evalops.knowledge.labels``), cached per file state."""
        from evalops.pipeline.sources import source_labels

        return source_labels(self._cfg.knowledge_base_path(), field)


class RunJudging:
    """The judge step's records as the alert and report steps read them (``evalops.pipeline.judging``). The
    other handle in a :class:`RunEnv` that still holds the settings: the judging module reads them itself."""

    def __init__(self, cfg: Config):
        self._cfg = cfg

    def alerts(self, run: RunContext, versions: Sequence[VersionSpec]) -> list[Any]:
        """The judge's alerts: a failed judge step, and judge-label regressions past the agreement gate."""
        from evalops.pipeline.judging import judge_alerts_for

        return judge_alerts_for(self._cfg, run, versions)

    def failed_steps(self, run: RunContext) -> list[tuple[str, str]]:
        """Each query set whose judge step failed, with the cause (``judging.failed_judge_steps``)."""
        from evalops.pipeline.judging import failed_judge_steps

        return failed_judge_steps(self._cfg, run)

    def failures(self, run: RunContext) -> list[str]:
        """The report's rows of the failed judge steps (``judging.judge_failures``)."""
        from evalops.pipeline.judging import judge_failures

        return judge_failures(self._cfg, run)

    def report(self, run: RunContext) -> tuple[list[Any], dict[str, Any], list[str]]:
        """The report's judge section: rows, policies and notes (``judging.judge_report``)."""
        from evalops.pipeline.judging import judge_report

        return judge_report(self._cfg, run)


@dataclass(frozen=True)
class RunEnv:
    """What the steps after planning read of the settings (module docstring). Made by :func:`run_env`."""

    warehouse_url: str = dataclasses.field(repr=False)  # may hold a password: never in a repr or a log
    work_dir: str | Path
    regression: Policy  # the regression policy, seed 0: :meth:`policy` seeds it
    measures: Measures
    k: int
    failure_budget: float
    sources: SourcePolicy | None  # None: no source field declared
    long_document_percentile: float | None
    judge: JudgeSettings  # the judge of the holes (``evalops.pipeline.holes``): ``kind`` off, or which one
    annotation_queue: Path  # where the holes are queued (``evalops.judges.generate.queue_path``)
    gold_paths: tuple[Path, ...]  # every gold set's path (the queue refuses a row that is in one already)
    report_dir: Path  # one report folder per run (``evalops.pipeline.workdir.report_location``)
    # the notifiers, what fails, the reminders: the names of the secrets' variables, never a secret
    alerting: AlertingSettings
    alert_policy: Mapping[str, Any]  # the regression policy as an alert quotes it (``evalops.alerting.rules``)
    floors: Mapping[str, FloorRule]  # each gold set's floors, by name (``evalops.floors``)
    home: Path  # the project folder (the report shows paths inside it relative to it)
    shard_size: int  # queries per score shard, 0: one per version (the report states it)
    query_score_retention_days: int  # 0: per-query scores kept forever (``publishing.prune_old_scores``)
    memory_budget_bytes: int  # what a version's index may hold in memory (``memory_budget``)
    lease_seconds: float  # the lease of a run in flight, renewed while a shard scores (``store.run_lease``)
    mlflow: MlflowSettings = dataclasses.field(repr=False)  # its tracking URI may hold a password
    inputs: RunInputs = dataclasses.field(compare=False, repr=False)
    judging: RunJudging = dataclasses.field(compare=False, repr=False)

    def engine(self) -> Engine:
        """The warehouse engine (one per URL in a process: ``evalops.pipeline.store``)."""
        from evalops.pipeline.store import engine_at

        return engine_at(self.warehouse_url)

    def policy(self, seed: int) -> Policy:
        """The regression policy with this seed (``Config.stats_policy``)."""
        return dataclasses.replace(self.regression, seed=seed)


def run_env(cfg: Config) -> RunEnv:
    """The :class:`RunEnv` of these settings; a bad regression policy or measure is a ``ConfigError`` here."""
    from evalops.judges.generate import queue_path
    from evalops.pipeline.sources import source_policy

    canonical = canonical_measures(cfg)
    return RunEnv(
        warehouse_url=url_for(cfg), work_dir=cfg.work_dir, regression=cfg.stats_policy(0),
        measures=Measures(tuple(canonical), tuple(context_measures(cfg)), tuple(anchored_measures(cfg)),
                          tuple(judged_measures(canonical, cfg.k)), tuple(alerting_measures(cfg))),
        k=cfg.k, failure_budget=cfg.failure_budget, sources=source_policy(cfg),
        long_document_percentile=cfg.knowledge_base.long_document_percentile, judge=cfg.judge,
        annotation_queue=queue_path(cfg),
        gold_paths=tuple(path for name in cfg.gold_sets if (path := cfg.gold_set_named(name).path) is not None),
        report_dir=cfg.report_dir, alerting=cfg.alerting,
        alert_policy=MappingProxyType(cfg.regression.model_dump(exclude={"min_effect"})),
        floors=MappingProxyType(floor_rules(cfg.gold_sets)), home=cfg.home, shard_size=cfg.shard_size,
        query_score_retention_days=cfg.query_score_retention_days, memory_budget_bytes=cfg.memory_budget_bytes,
        lease_seconds=cfg.lease_seconds, mlflow=cfg.mlflow,
        inputs=RunInputs(cfg), judging=RunJudging(cfg),
    )
