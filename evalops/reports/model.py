"""What a run report contains, as plain data. The pipeline fills it from the warehouse; renderers only read.

Query text in ``worst_queries`` may come from production logs: it is untrusted, and every renderer escapes
it (HTML entities in HTML; HTML entities and table pipes in markdown, which many viewers render as HTML).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, fields
from typing import Any

__all__ = ["VersionScores", "ABResult", "ReportData"]


@dataclass(frozen=True)
class VersionScores:
    """The aggregates of one version on one query set (``gold`` or ``production``).

    ``aggregates`` maps a measure to ``{"mean", "ci_low", "ci_high", "n"}``. ``status`` is the scoring
    status (``complete``, ``partial``, ``failed``); ``n_failed`` queries were excluded, never scored as 0.
    """

    retriever: str
    version: str
    role: str
    query_set: str
    aggregates: dict[str, dict[str, Any]]
    status: str = "complete"
    n_queries: int | None = None
    n_failed: int = 0
    run_key: str | None = None
    n_retries: int = 0  # extra attempts the retriever adapter made for transient failures
    stored_baseline: bool = False  # the comparisons use a stored run of this version as their baseline
    segments: list[dict[str, Any]] = field(default_factory=list)  # means per query type, language, ... (evalops.segments)


@dataclass(frozen=True)
class ABResult:
    """One paired comparison, candidate against baseline, on one measure and query set.

    ``worst_queries`` rows are dicts with ``query_id``, ``baseline``, ``candidate``, ``delta`` and ``text``.
    The rule's reading: ``severity``, ``criterion``, ``reason_code``, the decision interval
    (``interval_low``/``interval_high`` at ``interval_level``), the ``margin`` and the ``family_size``
    of the ``family`` it was corrected in.
    """

    retriever: str
    baseline_version: str
    candidate_version: str
    measure: str
    query_set: str
    n: int
    baseline_mean: float
    candidate_mean: float
    delta: float
    delta_ci_low: float | None
    delta_ci_high: float | None
    p_value: float | None
    p_adjusted: float | None
    effect_size_dz: float | None
    wins: int
    ties: int
    losses: int
    decision: str
    reasons: list[str] = field(default_factory=list)
    worst_queries: list[dict[str, Any]] = field(default_factory=list)
    severity: str | None = None
    criterion: str | None = None
    reason_code: str | None = None
    interval_low: float | None = None
    interval_high: float | None = None
    interval_level: float | None = None
    margin: float | None = None
    family_size: int | None = None
    family: str | None = None
    coverage: str | None = None
    judged_coverage: dict[str, Any] | None = None  # Judged@k of both sides at the measure's cutoff
    segments: list[dict[str, Any]] = field(default_factory=list)  # per query type, language, ... (evalops.segments)
    higher_is_better: bool = True  # a context measure such as Tokens@k is lower-is-better

    @classmethod
    def from_record(cls, record: Mapping[str, Any], **context: Any) -> ABResult:
        """The report row of a comparison record (:meth:`evalops.stats.Comparison.to_record`): every field
        the two share, by name; ``context`` gives the rest (retriever, versions, query set, worst queries
        with their text, family, coverage in words) and may override a field (a descriptive decision)."""
        shared = {f.name: record[f.name] for f in fields(cls) if f.name in record and f.name not in context}
        if "reasons" in shared:
            shared["reasons"] = list(shared["reasons"])
        shared.pop("worst_queries", None)  # rows with the query text come from the context
        shared.pop("coverage", None)  # a dict in the record, words in the report
        return cls(**shared, **context)


@dataclass(frozen=True)
class ReportData:
    """Everything one run report shows.

    ``fingerprint_components`` names what the fingerprint hashes (gold-set version, knowledge-base
    snapshot, measures, cutoffs, policies); ``policies`` holds every policy in force (metric policies and
    the regression policy). ``changes`` lists, in words, what changed since the stored baseline;
    ``stale_baselines`` says which baselines were re-scored in this run and why; ``no_baseline`` which
    retrievers have no baseline yet (so nothing of theirs is compared).
    """

    run_key: str
    day: str
    generated_at: str
    fingerprint: str
    fingerprint_components: dict[str, Any]
    policies: dict[str, Any]
    versions: list[VersionScores]
    ab_results: list[ABResult]
    changes: list[str] = field(default_factory=list)
    stale_baselines: list[str] = field(default_factory=list)
    alerts: list[dict[str, Any]] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    title: str = "evalops run report"
    holes: dict[str, Any] = field(default_factory=dict)  # the unjudged documents queued (evalops.pipeline.holes)
    warnings: list[str] = field(default_factory=list)  # e.g. tuned on dev, no gain on test (evalops.segments)
    failed_steps: list[str] = field(default_factory=list)  # steps that failed (a judge): the report leads with them
    no_baseline: list[str] = field(default_factory=list)  # retrievers with no baseline yet, in words
    floors: list[dict[str, Any]] = field(default_factory=list)  # each version's floor checks (evalops.floors)
