"""The CI gate's verdict on one evaluation run: one case per (version, measure), and the exit code.

Pure: it reads the run's decided comparisons (from the warehouse's ``ab_tests``, where they are stored),
its alerts and each version's status, and returns :class:`GateCase` records. What fails the gate is a
policy, ``fail_on`` (``evalops gate --fail-on``, by default the project's ``alerting.fail_on``), a set of
:data:`FAIL_ON` kinds, read exactly as the run's alerts read it (:mod:`evalops.failing`, the one place a
decided comparison gets its kind); each case has a ``kind``:

==============  ======================================================================  =========
kind            the case                                                                exit code
==============  ======================================================================  =========
regression      a regression ``alert_on`` notifies, on an alert measure (the run raised   4
                a ``regression`` alert for it)
floor           the version's score is under an absolute floor (``floors``,             4
                ``evalops.floors``), with or without a baseline
failed          the version could not be scored (status ``failed``)                     5
partial         the version was scored partially (some queries failed), or a            5
                ``partial_run`` comparison with a drop as judged on an alert measure
missing         a comparison the run should have decided cannot be found (fail closed)  7
unjudged        a drop on an alert measure that the judged documents show and the       4
                unjudged ones could undo: ``inconclusive (unjudged_documents)`` with a
                negative judged delta; the gate cannot tell, so it fails closed until
                the queued holes are judged
inconclusive    the comparison is ``inconclusive`` (any other reason code)              4
==============  ======================================================================  =========

The default, :data:`DEFAULT_FAIL_ON`, is every kind but ``inconclusive``. A case of a kind in ``fail_on``
is a ``failure`` (an ``error`` for ``failed`` and ``missing``); an inconclusive one outside it is
``skipped``, and everything else (improvement, no change, a regression on a measure that does not alert,
the baseline version itself, a version with no baseline and no floor breached) ``passed``. Every case that
is not ``passed`` names its decision and reason code in its one-line message. When several codes apply,
:func:`evalops.exitcodes.most_severe` picks the one.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, fields
from typing import TYPE_CHECKING, Any

from evalops.exitcodes import ExitCode, most_severe
from evalops.failing import DEFAULT_FAIL_ON, FAIL_ON, KIND_EXIT_CODE, comparison_kind, parse_fail_on
from evalops.floors import floor_checks, floor_rules
from evalops.pipeline.registry import alerting_measures, anchored_measures, canonical_measures
from evalops.pipeline.specs import VersionSpec
from evalops.reports.tables import decision_interval
from evalops.util import numfmt

if TYPE_CHECKING:  # pragma: no cover
    from evalops.pipeline.deciding import DecidedComparison
    from evalops.stats.compare import Comparison

__all__ = ["DEFAULT_FAIL_ON", "FAIL_ON", "GateCase", "alerting_regressions", "cases_for_run", "describe_comparison",
           "gate_cases", "gate_exit_code", "parse_fail_on"]

OUTCOMES = ("failure", "error", "skipped", "passed")
_KIND_CODE = KIND_EXIT_CODE


@dataclass(frozen=True)
class GateCase:
    retriever: str
    version: str
    measure: str
    outcome: str  # failure | error | skipped | passed
    decision: str | None  # the comparison's decision; None when the version was not compared
    message: str
    baseline_version: str | None = None
    details: str = ""  # the comparison's reasons, one per line
    kind: str | None = None  # which FAIL_ON kind the case is (None: none applies)
    # the decided comparison (None when the version was not compared): ``case.comparison.delta``,
    # ``case.comparison.interval_low`` (the decision interval at the family's level), ...
    comparison: Comparison | None = None

    @property
    def name(self) -> str:
        return f"{self.retriever}@{self.version} {self.measure}"

    def to_dict(self) -> dict[str, Any]:
        """The case, then every public field of its comparison's record (``None`` when not compared)."""
        from evalops.stats.compare import public_fields

        own = {f.name: getattr(self, f.name) for f in fields(self) if f.name != "comparison"}
        shown = {} if self.comparison is None else self.comparison.to_dict()
        record = {**dict.fromkeys(public_fields()), **shown}
        return {**own, **{k: v for k, v in record.items() if k not in own}}


def alerting_regressions(alerts: Iterable[Mapping[str, Any]]) -> set[tuple[str, str, str]]:
    """(retriever, version, measure) of every ``regression`` alert, read from its de-duplication key
    ``kind|retriever|version|measure|fingerprint|day``."""
    found = set()
    for alert in alerts:
        if alert.get("kind") != "regression":
            continue
        parts = str(alert.get("dedup_key", "")).split("|")
        if len(parts) >= 4:
            found.add((parts[1], parts[2], parts[3]))
    return found


def _num(value: float | None, spec: str) -> str:
    defined = numfmt.defined(value)
    return "n/a" if defined is None else format(defined, spec)


def describe_comparison(c: Comparison) -> str:
    """One line: the decision with its severity and reason code, the means, the delta with the decision
    interval (the one interval a comparison shows, at the family's level), the delta with every unjudged
    document relevant (when that bound was scored) and the adjusted p."""
    if c.interval_low is not None:
        interval = decision_interval(c.interval_low, c.interval_high, c.interval_level)
        ci = f" [decision interval {interval}]"
    elif c.delta_ci_low is not None:  # a comparison without the rule's reading: its confidence interval
        ci = f" [{1 - c.policy.alpha:.0%} CI {_num(c.delta_ci_low, '+.4f')}, {_num(c.delta_ci_high, '+.4f')}]"
    else:
        ci = ""
    tags = ", ".join(str(x) for x in (c.severity, c.reason_code) if x)
    bounds = numfmt.bounds(c.judged_coverage) if c.reason_code == "unjudged_documents" else None
    bound = "" if bounds is None else f", {bounds}"
    return (f"{c.decision}{f' ({tags})' if tags else ''}: {c.measure} {_num(c.baseline_mean, '.4f')} -> "
            f"{_num(c.candidate_mean, '.4f')}, delta {_num(c.delta, '+.4f')}{ci}{bound}, "
            f"adjusted p {_num(c.p_adjusted, '.2g')}{_p_source(c)}, n {c.n}")


def _p_source(c: Comparison) -> str:
    """`` (the test it came from)``: the decision interval's own test under the robust interval, else the
    reported paired test."""
    method = c.interval_method
    if method in numfmt.INTERVAL_TESTS:
        return f" ({method} test)"
    test = {"t": "paired t-test", "wilcoxon": "Wilcoxon signed-rank", "randomization": "randomization test"}
    return f" ({test.get(str(c.test), c.test)})" if c.test else ""


# The gate's sentences: a case's message is its codes' sentences, in order, filled with its values.
_SENTENCES = {
    "run_failed": "failed: {retriever} {version} could not be scored (run {run_id} failed; see the retriever_failed "
                  "alert and the report)",
    "baseline_failed": "failed: not compared, the baseline {baseline} could not be scored in this run "
                       "(run {baseline_run_id})",
    "missing": "missing: the {measure} comparison of {retriever} {version} against {baseline} (baseline run "
               "{baseline_run_id}) cannot be found in the warehouse (ab_tests); the gate cannot tell",
    "baseline_version": "the baseline version",
    "no_baseline": "not compared: no baseline yet (promote one)",
    "not_compared": "not compared",
    "compared": "{comparison} (against {baseline})",
    "unjudged_closed": "; the gate cannot tell until the queued unjudged documents are judged (the annotation "
                       "queue, .evalops/annotation/queue.jsonl), so it fails closed",
    "partial_closed": "; a side answered too few of the judged queries to compare, so it fails closed",
    "does_not_alert": "; this measure does not alert",
    "not_notified": "; alert_on does not notify it",
    "floor_first": "floor ({severity}): {floor}; ",
    "floor_after": "; floor breached: {floor}",
    "partial_first": "partial: ",
    "partial_after": "; the version was scored partially (failed queries left out)",
}


@dataclass
class _Verdict:
    """A case's rule reading: its kind and outcome, and the codes of its message (prefixes, the head, the
    notes after it, each a key of ``_SENTENCES``)."""

    kind: str | None
    outcome: str
    head: str
    first: list[str] = field(default_factory=list)
    after: list[str] = field(default_factory=list)

    def message(self, **values: Any) -> str:
        codes = [*self.first, self.head, *self.after]
        return "".join(_SENTENCES[code] for code in codes).format(**values)


def _held(kind: str | None, fail_on: frozenset[str], default: str = "passed") -> str:
    """The outcome of a case of ``kind``: ``failure`` (``error`` for failed and missing) when it is in
    ``fail_on``, else ``default``."""
    if kind not in fail_on:
        return default
    return "error" if kind in ("failed", "missing") else "failure"


def _uncompared(spec: Mapping[str, Any], statuses: Mapping[int, str], floor: Any, fail_on: frozenset[str],
                status: str | None) -> _Verdict:
    """The verdict on a version with no decided comparison: the baseline itself, no baseline yet, a
    baseline that failed, or a comparison that should exist and cannot be found."""
    version, baseline = spec["version"], spec.get("baseline_version")
    expected = baseline is not None and version != baseline and spec.get("baseline_run_id") is not None
    kind: str | None
    if expected and statuses.get(spec["baseline_run_id"]) == "failed":
        head, kind = "baseline_failed", "failed"
    elif expected:
        head, kind = "missing", "missing"
    else:
        head = ("baseline_version" if version == baseline else "no_baseline" if baseline is None
                else "not_compared")
        kind = None
    v = _Verdict(kind, _held(kind, fail_on) if kind else "passed", head)
    if floor is not None:
        if v.outcome == "passed":
            v.kind, v.outcome = "floor", _held("floor", fail_on)
            v.first.append("floor_first")
        else:
            v.after.append("floor_after")
    if status == "partial" and v.outcome == "passed":
        v.kind, v.outcome = "partial", _held("partial", fail_on)
    if v.kind == "partial":
        v.first.insert(0, "partial_first")
    if status == "partial":
        v.after.append("partial_after")
    return v


def _compared(c: Comparison, decision: str, alerts_on: bool, floor: Any, fail_on: frozenset[str],
              status: str | None) -> _Verdict:
    """The verdict on a decided comparison: its kind as the run's alerts read it (evalops.failing), from
    the record (a regression whose alert was not stored still fails), then a floor and a partial run."""
    v = _Verdict(comparison_kind(c, alerting=alerts_on), "passed", "compared")
    if v.kind == "regression":
        v.outcome = _held("regression", fail_on)
    elif v.kind in ("unjudged", "partial"):
        # a drop on the judged documents that the gate cannot confirm: it fails closed
        v.outcome = _held(v.kind, fail_on, _held("inconclusive", fail_on, "skipped"))
        if v.outcome != "skipped":
            v.after.append("unjudged_closed" if v.kind == "unjudged" else "partial_closed")
    elif v.kind == "inconclusive":
        v.outcome = _held("inconclusive", fail_on, "skipped")
    elif decision == "regression":
        v.after.append("does_not_alert" if not alerts_on else "not_notified")
    if floor is not None and v.outcome in ("passed", "skipped") and _held("floor", fail_on) != "passed":
        v.kind, v.outcome = "floor", _held("floor", fail_on)
        v.first.append("floor_first")
    elif floor is not None:
        v.after.append("floor_after")
    if status == "partial":
        if v.outcome in ("passed", "skipped") and "partial" in fail_on:
            v.kind, v.outcome = "partial", _held("partial", fail_on)
            v.first.insert(0, "partial_first")
        v.after.append("partial_after")
    return v


def gate_cases(
    versions: Sequence[Mapping[str, Any]],
    decisions: Sequence[DecidedComparison],
    alerts: Iterable[Mapping[str, Any]],
    statuses: Mapping[int, str],
    measures: Sequence[str],
    fail_on: Iterable[str] = DEFAULT_FAIL_ON,
    floors: Sequence[Any] = (),
    alert_measures: Sequence[str] | None = None,
) -> list[GateCase]:
    """The gate's cases for the gold-set versions of one run.

    ``versions`` are the run's version specs (``retriever``, ``version``, ``dataset``, ``run_id``,
    ``baseline_version``, ``baseline_run_id``), ``decisions`` the decided comparisons
    (:class:`evalops.pipeline.deciding.DecidedComparison`, as ``load_decisions`` reads them from the warehouse),
    ``alerts`` the
    run's alerts, ``statuses`` each warehouse run id's status, ``measures`` the canonical measures scored,
    ``fail_on`` the kinds that fail (module docstring), ``floors`` the run's floor checks
    (:class:`evalops.floors.FloorCheck` with ``run_id``), ``alert_measures`` the measures whose drops alert
    (``None``: every measure, and a regression where the run raised its ``regression`` alert), the ones a
    ``regression``, ``unjudged`` or ``partial`` case can fail.
    """
    fail_on = frozenset(fail_on)
    alerting = alerting_regressions(alerts)
    compared = {(d.retriever, d.version, d.comparison.measure): d for d in decisions if d.dataset == "gold"}
    breaches = {(f.run_id, f.measure): f for f in floors if f.breached}
    cases = []
    for spec in versions:
        if spec.get("dataset", "gold") != "gold":
            continue
        retriever, version, baseline = spec["retriever"], spec["version"], spec.get("baseline_version")
        status = statuses.get(spec["run_id"])
        for measure in measures:
            key = (retriever, version, measure)
            record = compared.get(key)
            common = {"retriever": retriever, "version": version, "measure": measure, "baseline_version": baseline}
            floor = breaches.get((spec["run_id"], measure))
            values = {**common, "baseline": baseline, "run_id": spec["run_id"],
                      "baseline_run_id": spec.get("baseline_run_id"),
                      "severity": None if floor is None else floor.severity,
                      "floor": "" if floor is None else floor.describe()}
            if status == "failed":
                v = _Verdict("failed", _held("failed", fail_on), "run_failed")
                cases.append(GateCase(**common, outcome=v.outcome, decision=None, kind=v.kind,
                                      message=v.message(**values)))
            elif record is None:
                v = _uncompared(spec, statuses, floor, fail_on, status)
                cases.append(GateCase(**common, outcome=v.outcome, decision=None, kind=v.kind,
                                      message=v.message(**values)))
            else:
                c = record.comparison
                decision = c.decision
                # without ``alert_measures`` a regression alerts where the run raised its alert
                alerts_on = (measure in alert_measures if alert_measures is not None
                             else decision != "regression" or key in alerting)
                v = _compared(c, decision, alerts_on, floor, fail_on, status)
                cases.append(GateCase(
                    **common, outcome=v.outcome, decision=decision, kind=v.kind, comparison=c,
                    message=v.message(**values, comparison=describe_comparison(c)),
                    details="\n".join(c.reasons),
                ))
    return cases


def gate_exit_code(cases: Iterable[GateCase]) -> ExitCode:
    codes = []
    for case in cases:
        if case.outcome in ("failure", "error"):
            codes.append(_KIND_CODE.get(case.kind or "", ExitCode.REGRESSION if case.outcome == "failure"
                                        else ExitCode.VERSION_FAILED))
    return most_severe(*codes)


def cases_for_run(cfg: Any, run: Any, result: Mapping[str, Any], fail_on: Iterable[str] = DEFAULT_FAIL_ON
                  ) -> list[GateCase]:
    """The gate's cases of a pipeline run: ``result`` is what ``run_local`` returned (or the ``.result`` of
    its ``IncompleteRunError``). Reads each version's status, its decided comparisons (``ab_tests``) and its
    aggregates (for the floors) from the warehouse, so a comparison that was never stored is ``missing``."""
    from evalops.pipeline.store import engine_for
    from evalops.pipeline.deciding import load_decisions
    from evalops.warehouse import get_run, load_aggregates

    engine = engine_for(cfg)
    statuses = {s["run_id"]: get_run(engine, s["run_id"]).status for s in result["versions"]}
    gold, floors, rules = [], [], floor_rules(cfg.gold_sets)
    for spec in result["versions"]:
        if spec.get("dataset", "gold") != "gold" or statuses.get(spec["run_id"]) == "failed":
            continue
        floors += floor_checks(rules, spec["dataset"], spec["run_id"],
                               load_aggregates(engine, spec["run_id"]))
        gold.append(spec)
    decisions = load_decisions(engine, [VersionSpec.from_xcom(s) for s in gold])  # the warehouse's, never the work folder's
    return gate_cases(result["versions"], decisions, result["alerts"], statuses,
                      canonical_measures(cfg) + anchored_measures(cfg),
                      fail_on=fail_on, floors=floors, alert_measures=alerting_measures(cfg))
