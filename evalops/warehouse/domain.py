"""What the warehouse hands back: frozen dataclasses, never ORM objects.

Datetimes are timezone-aware UTC. Float fields may be NaN (stored as NaN on both backends).
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

from evalops.alerting.model import Alert
from evalops.fingerprint import EvalFingerprint

if TYPE_CHECKING:  # pragma: no cover
    import numpy as np

    from evalops.stats.compare import Comparison  # numpy: the A/B tests' module imports it, not every reader

__all__ = [
    "ABTestResult",
    "Baseline",
    "BaselineLookup",
    "EvalRun",
    "GoldSetVersion",
    "KBSnapshot",
    "PairedScores",
    "RunKey",
    "ScoreVectors",
]


@dataclass(frozen=True)
class RunKey:
    """The natural key of an evaluation run.

    ``dag_id`` + ``dag_run_id`` identify the orchestrator run (for a CLI run, any stable pair such as
    ``("cli", "2024-05-01-nightly")``); one DAG run scores several retriever versions on one or more
    datasets (``"gold"`` for the labelled gold set, ``"production"`` for a sampled query log), and each is
    its own evaluation run.
    """

    dag_id: str
    dag_run_id: str
    retriever: str
    version: str
    dataset: str = "gold"


@dataclass(frozen=True)
class GoldSetVersion:
    version: str
    name: str
    n_queries: int
    n_judgments: int
    source: str | None
    meta: Mapping[str, Any]
    created_at: dt.datetime


@dataclass(frozen=True)
class KBSnapshot:
    snapshot_id: str
    n_documents: int
    content_hash: str
    source: str | None
    meta: Mapping[str, Any]
    created_at: dt.datetime


@dataclass(frozen=True)
class EvalRun:
    id: int
    key: RunKey
    logical_date: dt.datetime
    status: str
    started_at: dt.datetime
    finished_at: dt.datetime | None
    fingerprint: EvalFingerprint
    n_queries: int
    n_failed: int
    failed_query_ids: tuple[str, ...]
    error: str | None
    created_at: dt.datetime
    updated_at: dt.datetime
    contracts: Mapping[str, Any] | None = None
    n_retries: int = 0
    lease_expires_at: dt.datetime | None = None
    abandoned_at: dt.datetime | None = None
    # a re-run of this finished run in flight (``runs.record_run``): when it started, its contracts
    attempt_started_at: dt.datetime | None = None
    attempt_contracts: Mapping[str, Any] | None = None

    @property
    def retriever(self) -> str:
        return self.key.retriever

    @property
    def version(self) -> str:
        return self.key.version


@dataclass(frozen=True)
class Baseline:
    id: int
    retriever: str
    version: str
    run_id: int
    fingerprint_hash: str
    action: str
    is_current: bool
    promoted_by: str
    promoted_at: dt.datetime
    reason: str
    replaced_at: dt.datetime | None
    previous_id: int | None


@dataclass(frozen=True)
class BaselineLookup:
    """The answer to "the current baseline for retriever R under fingerprint F".

    ``status`` is ``"current"`` (``baseline`` is comparable), ``"stale"`` (no baseline under F; ``baseline``
    is the most recently promoted one under another fingerprint, ``changed`` names the components that
    differ and ``explanation`` says how), or ``"missing"`` (the retriever has no baseline at all).
    """

    status: Literal["current", "stale", "missing"]
    retriever: str
    fingerprint_hash: str
    baseline: Baseline | None = None
    changed: tuple[str, ...] = ()
    explanation: tuple[str, ...] = ()

    @property
    def is_current(self) -> bool:
        return self.status == "current"

    @property
    def is_stale(self) -> bool:
        return self.status == "stale"


@dataclass(frozen=True)
class ABTestResult:
    """One stored A/B test: the decided comparison (:class:`evalops.stats.Comparison`) of a candidate run
    with a baseline run on one measure, as ``ab_tests`` keeps it, and where it belongs.

    ``comparison`` holds every number and word of the comparison (stored without its per-query ``deltas``);
    this row declares none of them: the table's columns are written from it and it is read back from the
    table's ``record`` (``evalops.warehouse.abtests``, the one mapper). ``family`` is the family it was
    corrected in (``gold``: can alert; ``gold-descriptive``, ``production``); ``segments`` the comparison
    within each query type, language, split and log segment (``evalops.segments``, descriptive, each row
    naming its family). ``judge_run_id`` names the judge step whose LLM-judge labels the comparison is on
    (``judge_runs``; its measure is a ``judge:`` one), ``None`` for a comparison on the fingerprint's own
    labels (gold grades, click labels): the two are stored in one table and never read together. ``id`` and
    ``created_at`` are set once stored.
    """

    comparison: Comparison
    baseline_run_id: int
    candidate_run_id: int
    family: str | None = None
    segments: Sequence[Mapping[str, Any]] = ()
    id: int | None = None
    created_at: dt.datetime | None = None
    judge_run_id: int | None = None


@dataclass(frozen=True)
class AlertRow:
    """A stored alert: the row of an :class:`evalops.alerting.Alert` (the one alert class) with its
    storage and delivery state. :meth:`to_alert` gives back the alert it was recorded from."""

    id: int
    dedup_key: str
    kind: str
    retriever: str
    version: str | None
    measure: str | None
    fingerprint_hash: str | None
    day: dt.date
    severity: str
    message: str
    payload: Mapping[str, Any]
    run_id: int | None
    ab_test_id: int | None
    created_at: dt.datetime
    delivery_status: str
    delivery_attempts: int
    delivered_at: dt.datetime | None
    delivery_error: str | None

    def to_alert(self) -> Any:
        """The :class:`evalops.alerting.Alert` this row was recorded from (the payload keeps the title, the
        report location and the details)."""
        payload = dict(self.payload or {})
        title = payload.pop("title", self.kind)
        location = payload.pop("report_location", None)
        return Alert(kind=self.kind, severity=self.severity, day=self.day.isoformat(), title=title,
                     message=self.message, retriever=self.retriever, version=self.version, measure=self.measure,
                     fingerprint=self.fingerprint_hash, report_location=location, details=payload)


@dataclass(frozen=True, eq=False)
class ScoreVectors:
    """The per-query scores of one run: ``values[measure][i]`` is the score of ``query_ids[i]``.

    Query ids are sorted (as strings) so two runs over the same queries line up element by element.
    """

    run_id: int
    query_ids: np.ndarray
    values: Mapping[str, np.ndarray]


@dataclass(frozen=True, eq=False)
class PairedScores:
    """Aligned per-query vectors of a baseline and a candidate run on one measure, for paired tests."""

    measure: str
    baseline_run_id: int
    candidate_run_id: int
    query_ids: np.ndarray
    baseline: np.ndarray
    candidate: np.ndarray
