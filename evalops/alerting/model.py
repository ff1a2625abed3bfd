"""The alert record: what every rule produces, what the warehouse stores and what notifiers send.

An alert is plain data (strings, numbers, dicts), built by the pure rules in :mod:`evalops.alerting.rules`
and never mutated afterwards. Its ``dedup_key`` is the alert's identity, so recording the same alert twice
(a retried task, a re-run of the same day) yields one stored row.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

__all__ = ["ALL_RETRIEVERS", "Alert", "AlertKind", "Severity", "dedup_key"]

# The retriever of an alert that concerns the whole run (a failed data contract), not one retriever.
ALL_RETRIEVERS = "*"


class AlertKind:
    """The kinds of alert. A regression is about numbers; the others say a run could not produce them."""

    REGRESSION = "regression"
    VALIDATION_FAILED = "validation_failed"
    RETRIEVER_FAILED = "retriever_failed"
    RETRIEVER_PARTIAL = "retriever_partial"
    FLOOR = "floor"  # a score under an absolute floor (evalops.floors)
    JUDGE_FAILED = "judge_failed"
    # a drop as judged that the unjudged documents (or a partial run) leave unconfirmed: fail closed
    UNJUDGED = "unjudged"
    PARTIAL_RUN = "partial_run"
    INCONCLUSIVE = "inconclusive"  # only when fail_on names it
    MISSING = "missing"  # a comparison the run should have decided cannot be found
    SOURCE_SHARE = "source_share"  # a source's share of the top k moved beyond its bound (evalops.sources)

    @staticmethod
    def validation(stage: str) -> str:
        """``validation_failed:<stage>``: each data contract is its own kind, so a gold-set failure and a
        log failure on the same day are two alerts."""
        return f"{AlertKind.VALIDATION_FAILED}:{stage}"


class Severity:
    CRITICAL = "critical"
    WARNING = "warning"


def dedup_key(
    kind: str,
    retriever: str,
    version: str | None,
    measure: str | None,
    fingerprint: str | None,
    day: str,
) -> str:
    """The identity of an alert: ``kind|retriever|version|measure|fingerprint|day`` (``-`` for a missing part).

    The same regression seen again on one day under one fingerprint (a retry, a re-run) has the same key
    and is one alert; a new day or a new fingerprint is a new one. The warehouse stores alerts under exactly
    this key (``evalops.warehouse.alert_dedup_key`` is this function of a ``datetime.date``).
    """
    return "|".join("-" if p is None else str(p) for p in (kind, retriever, version, measure, fingerprint, day))


@dataclass(frozen=True)
class Alert:
    """One alert.

    ``title`` is a one-line headline and ``message`` the full plain-text body (both already scrubbed of
    personal data: query text goes through the scrubber before it reaches a rule). ``details`` holds the
    numbers behind the message (JSON-serialisable) so the warehouse and the report can use them without
    parsing text.
    """

    kind: str
    severity: str
    day: str
    title: str
    message: str
    retriever: str = ALL_RETRIEVERS
    version: str | None = None
    measure: str | None = None
    fingerprint: str | None = None
    report_location: str | None = None
    details: dict[str, Any] = field(default_factory=dict)

    @property
    def dedup_key(self) -> str:
        return dedup_key(self.kind, self.retriever, self.version, self.measure, self.fingerprint, self.day)

    def to_dict(self) -> dict[str, Any]:
        return {**asdict(self), "dedup_key": self.dedup_key}
