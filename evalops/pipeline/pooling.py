"""Daily production looks: decide a production-sample comparison with every query since its last restart.

The production family's comparisons are new data every day. Each one is decided by the pooled betting
test (``evalops.stats.sequence.pooled_decision``) over the per-query deltas of every day the same candidate
version was compared with the same baseline version under the same conditions since the restart (read
from the warehouse, ``evalops.warehouse.looks.earlier_looks``), today's included, at the family's per-side
error (Bonferroni over the candidate run's measures). Its false-alarm bound holds however many days the
pair is watched, and a sustained drop too small to show in one day's sample shows once enough days pool.

The comparison keeps today's own numbers (delta, its interval at ``policy.confidence``, p-values) and says
what decided it: ``decision``, ``severity``, ``criterion`` and the decision interval are the pooled
test's (``interval_method`` ``pooled betting sequence``: the confidence sequence's bounds on the mean delta
since the restart), ``pooled`` records the looks, the first day, the restart, the queries, the tail and the
bounds, and the last reason says it in words (the report and the alert show it). A comparison whose deltas
leave [-1, 1] (an unbounded measure) has no such test and keeps the spending rule's decision (alpha spent
over the looks, ``evalops.stats.spending_tail``); so does a comparison withheld as ``partial_run`` (a side
answered under ``min_coverage`` of the queries today).

The decision reads only stored days before today and today's deltas, so a re-run of a day decides the same.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from evalops import numfmt
from evalops.stats.sequence import pooled_decision
from evalops.stats.rule import family_tail
from evalops.stats import adjust_and_decide, notifies

if TYPE_CHECKING:  # pragma: no cover
    from sqlalchemy.engine import Engine

    from evalops.stats import Comparison
    from evalops.warehouse.looks import EarlierLooks

__all__ = ["POOLED_METHOD", "decide_pooled", "decide_production_run", "pool_family", "pooled_words"]

POOLED_METHOD = "pooled betting sequence"


def decide_production_run(engine: Engine, comparisons: Sequence[Comparison], *, candidate_run_id: int,
                          baseline_run_id: int) -> list[Comparison]:
    """The production family of one candidate run, decided: corrected over its members, each decided by the
    pooled test since the restart (the spending rule over the looks where it cannot be read)."""
    from evalops.warehouse import comparison_look

    look = comparison_look(engine, candidate_run_id, baseline_run_id)  # restarts with a new baseline
    spent = adjust_and_decide(list(comparisons), look=look)
    return decide_pooled(engine, spent, candidate_run_id=candidate_run_id, baseline_run_id=baseline_run_id)


def decide_pooled(engine: Engine, comparisons: Sequence[Comparison], *, candidate_run_id: int,
                  baseline_run_id: int) -> list[Comparison]:
    """Decide again, with the pooled test, the production comparisons of one candidate run (one family,
    already decided by the spending rule: the fallback of a comparison the pooled test cannot read), the
    earlier days read from ``ab_tests`` and ``query_scores``."""
    from evalops.warehouse.looks import earlier_looks

    return pool_family(comparisons, lambda comp, policy: earlier_looks(
        engine, candidate_run_id, baseline_run_id, comp.measure, policy))


def pool_family(comparisons: Sequence[Comparison], earlier: Callable[[Comparison, dict[str, Any]], EarlierLooks]
                ) -> list[Comparison]:
    """The pooled decision of each member of one family (module docstring); ``earlier(comparison, policy)``
    reads the comparison's earlier days since the restart (``evalops.warehouse.looks``)."""
    from evalops.warehouse.looks import policy_key

    if not comparisons:
        return []
    policy = comparisons[0].policy
    tail = family_tail(policy.alpha, policy.alternative, len(comparisons), policy.correction)
    out: list[Comparison] = []
    for comp in comparisons:
        margin = comp.margin if comp.margin is not None else policy.margin(comp.measure)
        today = np.asarray(comp.deltas, dtype=np.float64)
        if len(today) == 0 or not 0.0 <= margin < 1.0 or comp.reason_code == "partial_run":
            out.append(comp)  # nothing to pool, or today's run answered too little to be read at all
            continue
        before = earlier(comp, policy.to_dict())
        days = [look.deltas for look in before.looks] + [today]
        if any(len(d) and np.abs(d).max() > 1.0 for d in days):
            out.append(dataclasses.replace(comp, reasons=(*comp.reasons, "not pooled: deltas outside [-1, 1] have "
                                                          "no betting test; alpha spent over the looks")))
            continue
        sign = 1.0 if comp.higher_is_better else -1.0  # the test reads the deltas where higher is better
        look = pooled_decision([sign * d for d in days], tail, margin, policy.alternative)
        dates = [look_.day.isoformat() for look_ in before.looks] + [before.today.isoformat()]
        lower, upper = (look.lower, look.upper) if sign > 0 else (
            None if look.upper is None else -look.upper, None if look.lower is None else -look.lower)
        record = {"looks": look.looks, "since": dates[0], "restart": before.restart,
                  "restart_day": None if before.restart_day is None else before.restart_day.isoformat(),
                  "queries": look.queries, "tail": tail, "lower": lower, "upper": upper,
                  "decided_on": None if look.decided_at is None else dates[look.decided_at - 1],
                  "today_alone": comp.decision, "policy": policy_key(policy.to_dict())}
        out.append(dataclasses.replace(
            comp, decision=look.decision, severity=look.severity, criterion=look.criterion,
            reason_code=look.reason_code, interval_low=lower, interval_high=upper, interval_level=1.0 - 2.0 * tail,
            interval_method=POOLED_METHOD, queries_needed=None, pooled=record,
            alert=notifies(look.decision, look.severity, look.criterion, policy.alert_on),
            reasons=(f"today's sample alone: {comp.decision}", look.reason, pooled_words(record)),
        ))
    return out


def pooled_words(pooled: dict[str, object]) -> str:
    """One line on what a pooled decision used: ``pooled over 14 days since 2026-11-18 (baseline changed
    (v1 before)), 2,800 queries; ...``."""
    looks = int(pooled["looks"])  # type: ignore[call-overload]
    words = (f"pooled over {looks} day{'s' if looks != 1 else ''} since {pooled['since']} ({pooled['restart']}), "
             f"{int(pooled['queries']):,} queries")  # type: ignore[call-overload]
    if pooled.get("decided_on"):
        words += f"; shown on {pooled['decided_on']}"
    lower, upper = pooled.get("lower"), pooled.get("upper")
    if lower is not None and upper is not None:
        words += (f"; the mean delta since then lies in [{numfmt.number(lower, signed=True)}, "
                  f"{numfmt.number(upper, signed=True)}] (confidence sequence, each side at "
                  f"{numfmt.level(1.0 - float(pooled['tail']))})")  # type: ignore[arg-type]
    return words
