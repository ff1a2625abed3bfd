"""What a run report contains, as plain data. The pipeline fills it from the warehouse; renderers only read.

Query text in ``worst_queries`` may come from production logs: it is untrusted, and every renderer escapes
it (HTML entities in HTML; HTML entities and table pipes in markdown, which many viewers render as HTML).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # pragma: no cover
    from evalops.stats.compare import Comparison

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
    """One paired comparison, candidate against baseline, on one measure and query set: the comparison
    (:class:`evalops.stats.Comparison`) and what the report shows beside it.

    The report reads the comparison's fields from ``row.comparison`` (``row.comparison.delta``, ...): it
    declares none of them, so a field added to :class:`evalops.stats.Comparison` reaches the report with
    it. The row itself holds the context: retriever, versions and query set, the ``family`` it was corrected
    in, ``worst_queries`` as rows with ``query_id``, ``baseline``, ``candidate``, ``delta`` and ``text``, the
    comparison's ``coverage`` in words, and the per-segment means.
    """

    retriever: str
    baseline_version: str
    candidate_version: str
    query_set: str
    comparison: Comparison
    worst_queries: list[dict[str, Any]] = field(default_factory=list)
    family: str | None = None
    coverage: str | None = None
    segments: list[dict[str, Any]] = field(default_factory=list)  # per query type, language, ... (evalops.segments)


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
    sources: list[dict[str, Any]] = field(default_factory=list)  # each version's source shares (evalops.sources)
