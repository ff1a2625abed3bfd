"""The alert record: what every rule produces, what the warehouse stores and what notifiers send.

An alert is plain data (strings, numbers, dicts), built by the pure rules in :mod:`evalops.alerting.rules`
and never mutated afterwards. Its ``dedup_key`` is a hash of the alert's identity, so recording the same
alert twice (a retried task, a re-run of the same day) yields one stored row.
"""

from __future__ import annotations

import hashlib
from dataclasses import asdict, dataclass, field
from typing import Any

__all__ = ["Alert", "AlertKind", "Severity", "dedup_key"]


class AlertKind:
    """The kinds of alert. A regression is about numbers; the others say a run could not produce them."""

    REGRESSION = "regression"
    VALIDATION_FAILED = "validation_failed"
    RETRIEVER_FAILED = "retriever_failed"
    RETRIEVER_PARTIAL = "retriever_partial"

    ALL = (REGRESSION, VALIDATION_FAILED, RETRIEVER_FAILED, RETRIEVER_PARTIAL)


class Severity:
    CRITICAL = "critical"
    WARNING = "warning"


def dedup_key(kind: str, *parts: str | None) -> str:
    """A stable identity for an alert: sha256 over the kind and its identifying parts, hex, 40 characters.

    For a regression the parts are (retriever, version, measure, fingerprint, day), so the same regression
    seen twice on one day under one fingerprint is one alert, while a new day or a new fingerprint is a new
    one. ``None`` parts are spelled as an empty string so the key never depends on ``repr``.
    """
    text = "\x1f".join([kind, *("" if p is None else str(p) for p in parts)])
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:40]


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
    dedup_key: str
    day: str
    title: str
    message: str
    retriever: str | None = None
    version: str | None = None
    measure: str | None = None
    fingerprint: str | None = None
    report_location: str | None = None
    details: dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)
