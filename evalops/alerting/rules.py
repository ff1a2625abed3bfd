"""Alert rules: pure functions from what a run found to the alerts it must raise.

* A **regression** alert is raised for a (version, measure) exactly when the paired comparison, decided by
  :mod:`evalops.stats` under the configured regression policy, is a ``regression`` whose severity the
  policy's ``alert_on`` notifies (the record's ``alert`` flag: ``critical``; ``warning`` and up, the
  default; ``either``). The alert's severity is the comparison's, and it names the criterion that fired.
  An ``improvement``, ``no_change`` or ``inconclusive`` decision raises nothing: alerting on noise is what
  gets alerts muted.
* A **validation** alert is raised when a data contract (gold set, knowledge-base snapshot, query logs)
  stops the run.
* A **retriever** alert is raised when a version could not be scored (failed) or was scored with some
  queries excluded (partial).
* A **judge** alert (``judge_failed``) is raised when the judge step failed: its preflight could not reach
  the judge or was refused, or a query set lost more labels than ``judge.missing_budget``. One per run and
  day, for every query set that failed.

Rules never do I/O. Query text is passed in already scrubbed of personal data, or together with the
scrubber to apply; the rule applies it before the text reaches the message.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from evalops.alerting.message import regression_message, worst_query_rows
from evalops.alerting.model import Alert, AlertKind, Severity
from evalops.failing import comparison_kind

__all__ = ["AlertContext", "floor_alert", "judge_failed_alert", "regression_alerts", "validation_alert", "retriever_alert"]


@dataclass(frozen=True)
class AlertContext:
    """Where a comparison comes from: the candidate, its baseline, the fingerprint, the day and the report."""

    retriever: str
    version: str
    baseline_version: str | None
    fingerprint: str
    day: str
    report_location: str | None = None
    query_set: str = "gold"


_TITLES = {
    AlertKind.REGRESSION: "Regression",
    AlertKind.UNJUDGED: "Unconfirmed drop (unjudged documents)",
    AlertKind.PARTIAL_RUN: "Unconfirmed drop (partial run)",
    AlertKind.INCONCLUSIVE: "Inconclusive",
}
_KIND_OF = {"regression": AlertKind.REGRESSION, "unjudged": AlertKind.UNJUDGED, "partial": AlertKind.PARTIAL_RUN,
            "inconclusive": AlertKind.INCONCLUSIVE}


def _alert_numbers(record: Mapping[str, Any]) -> dict[str, Any]:
    """Every public field of a comparison's record as plain JSON (None when it lacks one), but its reasons
    and worst queries, which an alert carries apart; the unjudged bounds keep their means, not their
    per-query deltas."""
    from evalops.stats.compare import public_fields, public_view

    shown = {**dict.fromkeys(public_fields()), **public_view(record)}
    numbers = {name: _plain(value) for name, value in shown.items() if name not in ("reasons", "worst_queries")}
    if numbers.get("judged_coverage"):
        numbers["judged_coverage"] = {k: v for k, v in numbers["judged_coverage"].items()
                                      if not k.endswith("_deltas")}
    return numbers


def regression_alerts(
    comparisons: Mapping[str, Any],
    context: AlertContext,
    *,
    policy: Mapping[str, Any],
    query_text: Mapping[str, str],
    scrub: Callable[[str], str],
    max_worst_queries: int = 5,
    fail_on: Iterable[str] = ("regression",),
) -> list[Alert]:
    """One alert per measure whose comparison's kind (``evalops.failing.comparison_kind``: regression,
    unjudged, partial, inconclusive) is in ``fail_on``; an empty list otherwise. A regression alerts as
    ``regression``; a drop as judged that the unjudged documents or a partial run leave unconfirmed alerts
    as ``unjudged`` or ``partial_run`` (fail closed: what would decide it is its last reason).

    ``comparisons`` maps a canonical measure name to its comparison record (the ``evalops.stats`` compare
    result or its stored dict); every one of them is on a measure that alerts. ``policy`` is the regression
    policy the decision was taken under; it is quoted in the message and kept in ``details``.
    ``query_text`` maps query id to raw text; ``scrub`` removes personal data from it.
    """

    from evalops.stats.margins import DEFAULT_MARGINS

    if policy.get("min_delta") is None and "default_margins" not in policy:
        # no single margin: the per-measure table decided, and the alert quotes it (every policy explicit)
        policy = {**policy, "default_margins": dict(DEFAULT_MARGINS)}
    alerts: list[Alert] = []
    for measure, comparison in comparisons.items():
        # one shape: the comparison's JSON record (an evalops.stats.Comparison is turned into its record)
        record: Mapping[str, Any] = comparison.to_record() if hasattr(comparison, "to_record") else comparison
        found = comparison_kind(record)
        if found is None or found not in fail_on:
            continue
        kind = _KIND_OF[found]
        worst = worst_query_rows(record.get("worst_queries") or [], query_text, scrub, max_worst_queries)
        numbers = _alert_numbers(record)
        severity = (Severity.CRITICAL if kind == AlertKind.REGRESSION and numbers["severity"] != "warning"
                    else Severity.WARNING)
        reasons = [str(r) for r in (record.get("reasons") or [])]
        title = (
            f"{_TITLES[kind]}: {context.retriever} {context.version} on {measure} "
            f"({_num(numbers['baseline_mean'])} -> {_num(numbers['candidate_mean'])})"
        )
        message = regression_message(
            title=title,
            context=context,
            measure=measure,
            numbers=numbers,
            reasons=reasons,
            policy=policy,
            worst=worst,
        )
        alerts.append(
            Alert(
                kind=kind,
                severity=severity,
                day=context.day,
                title=title,
                message=message,
                retriever=context.retriever,
                version=context.version,
                measure=measure,
                fingerprint=context.fingerprint,
                report_location=context.report_location,
                details={
                    **numbers,
                    "baseline_version": context.baseline_version,
                    "query_set": context.query_set,
                    "reasons": reasons,
                    "policy": dict(policy),
                    "worst_queries": worst,
                },
            )
        )
    return alerts


def validation_alert(
    *,
    stage: str,
    summary: str,
    day: str,
    source: str | None = None,
    docs_path: str | None = None,
) -> Alert:
    """The alert for a data contract that stopped the run (``stage`` is gold_set, knowledge_base or query_logs).

    Its kind is ``validation_failed:<stage>`` and it concerns every retriever (``*``), so it is
    de-duplicated per (stage, day): the same broken file seen by a retry or a re-run is one alert.
    """
    title = f"Validation failed: {stage}" + (f" ({source})" if source else "")
    lines = [title, "The run stopped before scoring; no metric rows were written.", "", summary.strip()]
    if docs_path and docs_path not in summary:
        lines += ["", f"Data Docs: {docs_path}"]
    return Alert(
        kind=AlertKind.validation(stage),
        severity=Severity.CRITICAL,
        day=day,
        title=title,
        message="\n".join(lines),
        details={"stage": stage, "source": source, "docs_path": docs_path, "summary": summary},
    )


def retriever_alert(
    *,
    retriever: str,
    version: str,
    fingerprint: str | None,
    day: str,
    error: str | None = None,
    failed_query_ids: Iterable[str] = (),
    n_queries: int | None = None,
) -> Alert:
    """The alert for a version that failed to score (``error`` set) or was scored partially.

    A partial run excludes its failed queries from every mean (they are never scored as zero), so its
    numbers cover fewer queries than the gold set: the alert says how many and which.
    """
    failed = sorted(str(q) for q in failed_query_ids)
    kind = AlertKind.RETRIEVER_FAILED if error is not None else AlertKind.RETRIEVER_PARTIAL
    if error is not None:
        title = f"Retriever failed: {retriever} {version}"
        body = [title, f"error: {error}"]
    else:
        of = f" of {n_queries}" if n_queries is not None else ""
        title = f"Retriever partial: {retriever} {version} ({len(failed)}{of} queries failed)"
        body = [title, "Failed queries are excluded from the scores, not counted as zero."]
    if failed:
        shown = ", ".join(failed[:20]) + (" ..." if len(failed) > 20 else "")
        body.append(f"failed queries: {shown}")
    return Alert(
        kind=kind,
        severity=Severity.CRITICAL if error is not None else Severity.WARNING,
        day=day,
        title=title,
        message="\n".join(body),
        retriever=retriever,
        version=version,
        fingerprint=fingerprint,
        details={"error": error, "failed_query_ids": failed, "n_queries": n_queries},
    )


def floor_alert(check: Any, *, retriever: str, version: str, fingerprint: str | None, day: str,
                dataset: str) -> Alert:
    """The alert for a version whose score is under an absolute floor (``evalops.floors.FloorCheck``), with
    the floor's own severity; one per (version, measure, fingerprint, day)."""
    title = f"Floor breached: {retriever} {version} {check.measure} on {dataset}"
    return Alert(
        kind=AlertKind.FLOOR, severity=check.severity, day=day, title=title,
        message="\n".join([title, check.describe(), "An absolute floor holds with or without a baseline."]),
        retriever=retriever, version=version, measure=check.measure, fingerprint=fingerprint,
        details={**check.to_dict(), "dataset": dataset},
    )


def judge_failed_alert(*, causes: Mapping[str, str], judge: str, day: str, report_location: str | None = None) -> Alert:
    """The alert for a failed judge step: ``causes`` maps each query set whose judging failed to its cause."""
    scopes = ", ".join(sorted(causes))
    title = f"Judge step failed: {judge} on {scopes}"
    lines = [title, "No judge-label results for these query sets in this run; the gold-grade results are "
             "stored and reported as usual.", ""]
    lines += [f"{scope}: {cause}" for scope, cause in sorted(causes.items())]
    return Alert(
        kind=AlertKind.JUDGE_FAILED,
        severity=Severity.CRITICAL,
        day=day,
        title=title,
        message="\n".join(lines),
        report_location=report_location,
        details={"judge": judge, "causes": dict(causes)},
    )


def _plain(value: Any) -> Any:
    """numpy scalars become Python numbers so ``details`` stays JSON-serialisable."""
    item = getattr(value, "item", None)
    return item() if callable(item) else value


def _num(value: Any) -> str:
    return "n/a" if value is None else f"{float(value):.4f}"
