"""Alerts of the judge steps: a failed step, and regressions on judge labels past the agreement gate."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from evalops.alerting import AlertContext, judge_failed_alert, regression_alerts
from evalops.pipeline.context import RunContext
from evalops.pipeline.judging.summaries import _failed_steps, judge_steps

if TYPE_CHECKING:  # pragma: no cover
    from evalops.pipeline.specs import VersionSpec
    from evalops.config import Config


def judge_alerts_for(cfg: Config, run: RunContext, versions: Sequence[VersionSpec]) -> list[Any]:
    """The ``judge_failed`` alert of a failed judge step (one for the run, naming every query set that
    failed), and regression alerts from judge-label comparisons, only for query sets whose gate said
    ``alerting``.

    Production comparisons on judge labels may alert too (unlike click labels) once the judge has passed
    the gate on the gold set. Each alert names the judge and the query set in its version field's details.
    """
    if cfg.judge.kind == "off":
        return []
    import dataclasses

    from evalops.pipeline.workdir import report_location
    from evalops.querylog import scrub_text as _scrub

    failed = _failed_steps(cfg, run)
    alerts: list[Any] = []
    if failed:
        alerts.append(judge_failed_alert(causes={scope: cause for scope, cause, _ in failed},
                                         judge=f"{failed[0][2]['model']} [{failed[0][2]['kind']}]", day=run.day,
                                         report_location=report_location(cfg, run)))
    fingerprints = {(s.dataset, s.retriever): s.fingerprint for s in versions}
    for rec, stored in judge_steps(cfg, run):  # the judge runs and their comparisons (ab_tests)
        if rec["gate"].get("status") != "alerting":
            continue
        by_candidate: dict[tuple[str, str, str], dict[str, Any]] = defaultdict(dict)
        for c in (s.comparison for s in stored):
            retriever, _, base = c.baseline_name.rpartition("@")
            by_candidate[(retriever, base, c.candidate_name.rpartition("@")[2])][c.measure] = c
        for (retriever, base, version), comparisons in sorted(by_candidate.items()):
            context = AlertContext(retriever=retriever, version=version, baseline_version=base,
                                   fingerprint=fingerprints.get((rec["scope"], retriever)), day=run.day,
                                   report_location=report_location(cfg, run))
            for alert in regression_alerts(comparisons, context, policy=cfg.regression.model_dump(), query_text={},
                                           scrub=_scrub):
                alerts.append(dataclasses.replace(alert, details={
                    **alert.details, "judge_run_id": int(rec["id"]), "query_set": rec["scope"],
                    "judge": rec["judge"], "gate": rec["gate"]}))
    return alerts
