"""The CI gate's verdict on one evaluation run: one case per (version, measure), and the exit code.

Pure: it reads the run's decided comparisons, its alerts and each version's status (as ``run_local`` and
the warehouse give them) and returns :class:`GateCase` records. The outcome of a case:

==========  =====================================================================================
failure     an alerting regression: the run raised a ``regression`` alert for this version and measure
error       the version could not be scored (status ``failed``)
skipped     the comparison is ``inconclusive``
passed      everything else: improvement, no change, a regression on a measure that does not alert,
            the baseline version itself, a version with no baseline to compare with
==========  =====================================================================================

The exit code is :data:`~evalops.exitcodes.ExitCode.REGRESSION` when a case failed and
:data:`~evalops.exitcodes.ExitCode.VERSION_FAILED` when a case is an error (the latter wins, see
:mod:`evalops.exitcodes`).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass
from typing import Any

from evalops.exitcodes import ExitCode, most_severe

__all__ = ["GateCase", "alerting_regressions", "cases_for_run", "describe_comparison", "gate_cases", "gate_exit_code"]

OUTCOMES = ("failure", "error", "skipped", "passed")


@dataclass(frozen=True)
class GateCase:
    retriever: str
    version: str
    measure: str
    outcome: str  # failure | error | skipped | passed
    decision: str | None  # the comparison's decision; None when the version was not compared
    message: str
    baseline_version: str | None = None
    delta: float | None = None
    delta_ci_low: float | None = None
    delta_ci_high: float | None = None
    p_adjusted: float | None = None
    details: str = ""  # the comparison's reasons, one per line

    @property
    def name(self) -> str:
        return f"{self.retriever}@{self.version} {self.measure}"

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


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
    return "n/a" if value is None else format(value, spec)


def describe_comparison(c: Mapping[str, Any]) -> str:
    """One line: the decision, the means, the delta with its confidence interval and the adjusted p."""
    level = c.get("policy", {}).get("alpha")
    ci_name = f"{1 - level:.0%} CI" if isinstance(level, (int, float)) else "CI"
    ci = (f" [{ci_name} {_num(c.get('delta_ci_low'), '+.4f')}, {_num(c.get('delta_ci_high'), '+.4f')}]"
          if c.get("delta_ci_low") is not None else "")
    p = c.get("p_adjusted")
    return (f"{c['decision']}: {c['measure']} {_num(c.get('baseline_mean'), '.4f')} -> "
            f"{_num(c.get('candidate_mean'), '.4f')}, delta {_num(c.get('delta'), '+.4f')}{ci}, "
            f"adjusted p {_num(p, '.2g')}, n {c.get('n')}")


def gate_cases(
    versions: Sequence[Mapping[str, Any]],
    decisions: Sequence[Mapping[str, Any]],
    alerts: Iterable[Mapping[str, Any]],
    statuses: Mapping[int, str],
    measures: Sequence[str],
) -> list[GateCase]:
    """The gate's cases for the gold-set versions of one run.

    ``versions`` are the run's version specs (``retriever``, ``version``, ``dataset``, ``run_id``,
    ``baseline_version``), ``decisions`` the decided comparison records (``load_decisions``), ``alerts`` the
    run's alerts, ``statuses`` each warehouse run id's status, ``measures`` the canonical measures scored.
    """
    alerting = alerting_regressions(alerts)
    compared = {(d["retriever"], d["version"], d["comparison"]["measure"]): d
                for d in decisions if d.get("dataset", "gold") == "gold"}
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
            if status == "failed":
                cases.append(GateCase(**common, outcome="error", decision=None,
                                      message=f"{retriever} {version} could not be scored (run {spec['run_id']} "
                                              "failed; see the retriever_failed alert and the report)"))
                continue
            if record is None:
                why = ("the baseline version" if version == baseline
                       else "not compared: no baseline yet (promote one)" if baseline is None
                       else "not compared")
                cases.append(GateCase(**common, outcome="passed", decision=None, message=why))
                continue
            c = record["comparison"]
            decision = c["decision"]
            message = describe_comparison(c) + f" (against {baseline})"
            if decision == "regression" and key in alerting:
                outcome = "failure"
            elif decision == "inconclusive":
                outcome = "skipped"
            else:
                outcome = "passed"
                if decision == "regression":
                    message += "; this measure does not alert"
            if status == "partial":
                message += "; the version was scored partially (failed queries left out)"
            cases.append(GateCase(
                **common, outcome=outcome, decision=decision, message=message, delta=c.get("delta"),
                delta_ci_low=c.get("delta_ci_low"), delta_ci_high=c.get("delta_ci_high"),
                p_adjusted=c.get("p_adjusted"), details="\n".join(c.get("reasons") or ()),
            ))
    return cases


def gate_exit_code(cases: Iterable[GateCase]) -> ExitCode:
    codes = []
    for case in cases:
        if case.outcome == "failure":
            codes.append(ExitCode.REGRESSION)
        elif case.outcome == "error":
            codes.append(ExitCode.VERSION_FAILED)
    return most_severe(*codes)


def cases_for_run(cfg: Any, run: Any, result: Mapping[str, Any]) -> list[GateCase]:
    """The gate's cases of a pipeline run: ``result`` is what ``run_local`` returned (or the ``.result`` of
    its ``IncompleteRunError``). Reads the run's decisions and each version's status from the warehouse."""
    from evalops.pipeline.deciding import load_decisions
    from evalops.pipeline.registry import canonical_measures
    from evalops.pipeline.store import engine_for
    from evalops.warehouse import get_run

    engine = engine_for(cfg)
    statuses = {s["run_id"]: get_run(engine, s["run_id"]).status for s in result["versions"]}
    return gate_cases(result["versions"], load_decisions(cfg, run), result["alerts"], statuses,
                      canonical_measures(cfg))
