"""Raise the run's alerts: a regression on the gold set, a drop as judged that the unjudged documents or a
partial run leave unconfirmed (``unjudged``, ``partial_run``: fail closed), a comparison that cannot be
found (``missing``), a version that failed or was scored partially, and a gold-set version under an absolute
floor (``evalops.floors``, with or without a baseline). What alerts is the project's ``alerting.fail_on``,
the same policy ``evalops gate`` fails on (``evalops.failing``). A source whose share of the top k moved
beyond ``knowledge_base.sources.max_share_shift`` raises a ``source_share`` warning: its bound is its
policy (``evalops.pipeline.sources``).

Only the alert measures (``alert_measures``, by default the first configured measure) raise
regression alerts; a regression on another measure is in the report. Production-sample comparisons (weak
labels) are reported but never alerted on: implicit feedback is a hint, not a judgment. Every alert is
stored before it is sent (see ``evalops.alerting``).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from evalops.alerting import Alert, AlertContext, floor_alert, regression_alerts, retriever_alert
from evalops.alerting.model import AlertKind, Severity
from evalops.failing import comparison_kind
from evalops.config import PRODUCTION
from evalops.floors import floor_checks
from evalops.pipeline.context import RunContext
from evalops.pipeline.deciding import DecidedComparison, load_decisions
from evalops.pipeline.notify import deliver, retry_undelivered
from evalops.pipeline.sources import source_alerts_for
from evalops.pipeline.workdir import report_file
from evalops.warehouse import get_run, load_aggregates

if TYPE_CHECKING:  # pragma: no cover
    from evalops.pipeline.env import RunEnv
    from evalops.pipeline.specs import VersionSpec

__all__ = ["raise_alerts"]


def regression_alerts_for(env: RunEnv, run: RunContext, decisions: list[DecidedComparison]) -> list[Alert]:
    from evalops.querylog import scrub_text  # pandas and pyarrow: not at parse time

    wanted = set(env.measures.alerting)
    by_candidate: dict[tuple[str, str], list[DecidedComparison]] = {}
    for record in decisions:
        if record.dataset != PRODUCTION and record.comparison.measure in wanted:
            by_candidate.setdefault((record.retriever, record.version), []).append(record)
    fail_on = set(env.alerting.fail_on)
    if not any(comparison_kind(r.comparison) in fail_on for rs in by_candidate.values() for r in rs):
        return []
    texts: dict[str, str] = {}
    for dataset in sorted({r.dataset for rs in by_candidate.values() for r in rs}):
        texts.update(env.inputs.query_set(dataset, None).texts)  # gold sets only: production never alerts
    policy = dict(env.alert_policy)
    alerts: list[Alert] = []
    for (retriever, version), records in sorted(by_candidate.items()):
        first = records[0]
        context = AlertContext(retriever=retriever, version=version, baseline_version=first.baseline_version,
                               fingerprint=first.fingerprint, day=run.day,
                               report_location=report_file(env.report_dir, run))
        comparisons = {r.comparison.measure: r.comparison for r in records}
        ids = {r.comparison.measure: (r.candidate_run_id, r.ab_test_id) for r in records}
        for alert in regression_alerts(comparisons, context, policy=policy, query_text=texts, scrub=scrub_text,
                                       fail_on=fail_on):
            run_id, ab_id = ids[alert.measure]
            alerts.append(dataclasses.replace(alert, details={**alert.details, "run_id": run_id, "ab_test_id": ab_id}))
    return alerts


def missing_alerts_for(env: RunEnv, run: RunContext, versions: Sequence[VersionSpec],
                       decisions: list[DecidedComparison]) -> list[Alert]:
    """A ``missing`` alert for every alert measure of a gold-set version with a baseline run whose decided
    comparison cannot be found in the warehouse (``missing`` in ``alerting.fail_on``): the run cannot tell,
    so it says so instead of passing quietly. A version that failed, or whose baseline failed, has its own
    alert."""
    if "missing" not in env.alerting.fail_on:
        return []
    engine = env.engine()
    found = {(d.candidate_run_id, d.comparison.measure) for d in decisions}
    alerts = []
    for spec in versions:
        if (spec.dataset == PRODUCTION or spec.baseline_run_id is None or spec.version == spec.baseline_version
                or get_run(engine, spec.run_id).status == "failed"
                or get_run(engine, spec.baseline_run_id).status == "failed"):
            continue
        for measure in env.measures.alerting:
            if (spec.run_id, measure) in found:
                continue
            title = f"Missing comparison: {spec.retriever} {spec.version} on {measure}"
            alerts.append(Alert(
                kind=AlertKind.MISSING, severity=Severity.CRITICAL, day=run.day, title=title,
                message="\n".join([title, f"The {measure} comparison of {spec.retriever} {spec.version} against "
                                          f"{spec.baseline_version} (baseline run {spec.baseline_run_id}) cannot be "
                                          "found in the warehouse (ab_tests): evalops cannot tell whether it "
                                          "regressed. Re-run the day."]),
                retriever=spec.retriever, version=spec.version, measure=measure, fingerprint=spec.fingerprint,
                report_location=report_file(env.report_dir, run),
                details={"run_id": spec.run_id, "baseline_run_id": spec.baseline_run_id, "dataset": spec.dataset}))
    return alerts


def retriever_alerts_for(env: RunEnv, run: RunContext, versions: Sequence[VersionSpec]) -> list[Alert]:
    engine = env.engine()
    alerts = []
    for spec in versions:
        stored = get_run(engine, spec.run_id)
        if stored.status not in ("failed", "partial"):
            continue
        alert = retriever_alert(
            retriever=spec.retriever, version=spec.version, fingerprint=spec.fingerprint, day=run.day,
            error=stored.error if stored.status == "failed" else None,
            failed_query_ids=stored.failed_query_ids, n_queries=stored.n_queries,
        )
        alerts.append(dataclasses.replace(alert, details={**alert.details, "run_id": spec.run_id,
                                                          "dataset": spec.dataset}))
    return alerts


def floor_alerts_for(env: RunEnv, run: RunContext, versions: Sequence[VersionSpec]) -> list[Alert]:
    """A ``floor`` alert for every gold-set version scored under one of its gold set's floors (``evalops.floors``;
    baseline or not)."""
    engine = env.engine()
    alerts = []
    for spec in versions:
        if spec.dataset == PRODUCTION or get_run(engine, spec.run_id).status == "failed":
            continue  # a failed version has its own alert
        for check in floor_checks(env.floors, spec.dataset, spec.run_id, load_aggregates(engine, spec.run_id)):
            if check.breached:
                alert = floor_alert(check, retriever=spec.retriever, version=spec.version,
                                    fingerprint=spec.fingerprint, day=run.day, dataset=spec.dataset)
                alerts.append(dataclasses.replace(alert, details={**alert.details, "run_id": spec.run_id}))
    return alerts


def raise_alerts(env: RunEnv, run: RunContext, versions: Sequence[VersionSpec]) -> list[dict[str, Any]]:
    """Retry earlier undelivered alerts, then build, store and send the run's alerts.

    Returns ``[{"kind", "title", "delivered", "delivery_status", "new", "dedup_key"}]`` for this run's
    alerts, plus the retried ones that are still not delivered (``"retried": True``). A regression already
    sent and unchanged (``alerting.remind_every_days``) is in the list with ``delivery_status``
    ``suppressed`` and ``"suppressed"`` (why it was not sent again); ``delivered`` is then True: no notifier
    is owed it. The gate reads the list's regressions whatever their delivery.
    """
    engine = env.engine()
    retried = retry_undelivered(env.alerting, engine)
    decisions = load_decisions(engine, versions)  # the warehouse's decisions
    alerts = regression_alerts_for(env, run, decisions)
    alerts += missing_alerts_for(env, run, versions, decisions)
    alerts += retriever_alerts_for(env, run, versions)
    alerts += floor_alerts_for(env, run, versions)
    # a source's share of the top k moved beyond knowledge_base.sources.max_share_shift (evalops.sources)
    alerts += source_alerts_for(env, run, versions)
    # Judge-label regressions past the agreement gate (evalops.pipeline.judging); none when the judge is off.
    alerts += env.judging.alerts(run, versions)
    out = [
        {"kind": o.alert.kind, "title": o.alert.title, "delivered": o.delivered or o.suppressed is not None,
         "delivery_status": o.status, "new": o.created, "dedup_key": o.alert.dedup_key,
         **({"suppressed": o.suppressed} if o.suppressed is not None else {})}
        for o in deliver(env.alerting, engine, alerts)
    ]
    keys = {a["dedup_key"] for a in out}
    out += [
        {"kind": o.alert.kind, "title": o.alert.title, "delivered": False, "delivery_status": o.status,
         "new": False, "dedup_key": o.alert.dedup_key, "retried": True}
        for o in retried if not o.delivered and o.alert.dedup_key not in keys
    ]
    return out
