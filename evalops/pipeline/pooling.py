"""Daily production looks: decide a production-sample comparison with every query since its last restart.

The production family's comparisons are new data every day. Each one is decided by the pooled daily
looks (``evalops.stats.sequence.pooled_decision``: a change detector that finds a drop from whichever day
it starts, and the betting test since the restart for equivalence) over the per-query deltas of every day
the same candidate version was compared with the same baseline version under the same conditions since the restart (read
from the warehouse, ``evalops.warehouse.looks.earlier_looks``), today's included, at the family's per-side
error (Bonferroni over the candidate run's measures). Its false-alarm bound holds however many days the
pair is watched, a sustained drop too small to show in one day's sample shows once enough days pool, and a
drop that starts late is not diluted by the quiet days before it.

The comparison keeps today's own numbers (delta, its interval at ``policy.confidence``, p-values) and says
what decided it: ``decision``, ``severity``, ``criterion`` and the decision interval are the pooled
test's (``interval_method`` ``pooled betting sequence``: the confidence sequence's bounds on the mean delta
since the restart), ``pooled`` records the looks, the first day, the restart, the queries, the tail, the
bounds, the day the deciding statement was first shown and the day the detected change started from, and
the last reason says it in words (the report and the alert show it).

Which method decides is the measure's, never the day's data (:func:`unit_range`): a measure whose per-query
values are declared within [0, 1] (every retrieval measure, the context shares, judge labels that are
shares) has deltas in [-1, 1] and is pooled every day; one that is not (tokens, answer relevance 1-5) has no
betting test and keeps the spending rule's decision (alpha spent over the looks,
``evalops.stats.spending_tail``) every day, its record's ``pooled`` null and a reason saying so. A measure
declared within [0, 1] whose deltas leave [-1, 1] is an error naming it and the day (its values are
wrong), not a switch of method. A comparison withheld as ``partial_run`` (a side answered under
``min_coverage`` of the queries today) keeps the spending rule's decision too.

The decision reads only stored days before today and today's deltas, so a re-run of a day decides the same.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from evalops.context.compute import CONTEXT_MEASURE_TYPES
from evalops.errors import InputError
from evalops.metrics.parse import parse_measure
from evalops.stats import adjust_and_decide, notifies
from evalops.stats.rule import family_tail
from evalops.stats.sequence import pooled_decision
from evalops.util import numfmt

if TYPE_CHECKING:  # pragma: no cover
    from sqlalchemy.engine import Engine

    from evalops.stats import Comparison
    from evalops.warehouse.looks import EarlierLooks

__all__ = ["POOLED_METHOD", "decide_pooled", "decide_production_run", "pool_family", "pooled_words", "unit_range"]

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
    from evalops.warehouse.looks import earlier_looks_of

    return pool_family(comparisons, lambda comps, policy: earlier_looks_of(
        engine, candidate_run_id, baseline_run_id, [c.measure for c in comps], policy))


def unit_range(measure: str) -> bool:
    """Whether the measure declares every per-query value within [0, 1] (so deltas lie in [-1, 1]): the
    measure's ``UNIT_RANGE`` (``evalops.metrics``, ``evalops.context``), a judge label's
    (``judging.items.LABEL_UNIT_RANGE``), a ``judge:`` measure computed over judge labels as its measure's.
    A name none of them knows is not: the spending rule holds for any measure."""
    from evalops.pipeline.judging.items import LABEL_UNIT_RANGE

    name = measure.removeprefix("judge:")
    label = name.partition("@")[0]
    if label in LABEL_UNIT_RANGE:
        return LABEL_UNIT_RANGE[label]
    for types in (None, CONTEXT_MEASURE_TYPES):
        try:
            return bool(parse_measure(name, types).UNIT_RANGE)
        except InputError:
            continue
    return False


def pool_family(comparisons: Sequence[Comparison],
                earlier: Callable[[Sequence[Comparison], dict[str, Any]], Mapping[str, EarlierLooks]]
                ) -> list[Comparison]:
    """The pooled decision of each member of one family (module docstring); ``earlier(comparisons, policy)``
    reads the earlier days since the restart of each comparison pooled, by measure
    (``evalops.warehouse.looks``), in one call."""
    from evalops.warehouse.looks import policy_key

    if not comparisons:
        return []
    policy = comparisons[0].policy
    tail = family_tail(policy.alpha, policy.alternative, len(comparisons), policy.correction)

    def margin_of(comp: Comparison) -> float:
        return comp.margin if comp.margin is not None else policy.margin(comp.measure)

    def readable(comp: Comparison) -> bool:
        # nothing to pool, or today's run answered too little to be read at all
        return len(comp.deltas) > 0 and 0.0 <= margin_of(comp) < 1.0 and comp.reason_code != "partial_run"

    pooled_ones = [c for c in comparisons if readable(c) and unit_range(c.measure)]
    earlier_days = earlier(pooled_ones, policy.to_dict()) if pooled_ones else {}
    out: list[Comparison] = []
    for comp in comparisons:
        if not readable(comp):
            out.append(comp)
            continue
        if not unit_range(comp.measure):
            out.append(dataclasses.replace(comp, reasons=(
                *comp.reasons, f"not pooled: {comp.measure} is not declared within [0, 1], and deltas outside "
                "[-1, 1] have no betting test; alpha spent over the looks")))
            continue
        margin = margin_of(comp)
        today = np.asarray(comp.deltas, dtype=np.float64)
        before = earlier_days[comp.measure]
        days = [look.deltas for look in before.looks] + [today]
        dates = [look_.day.isoformat() for look_ in before.looks] + [before.today.isoformat()]
        wrong = [day for day, d in zip(dates, days) if len(d) and not np.abs(d).max() <= 1.0]
        if wrong:
            raise InputError(f"{comp.measure} ({comp.candidate_name} vs {comp.baseline_name}) is declared within "
                             f"[0, 1], but its per-query deltas of {', '.join(wrong)} leave [-1, 1] (or are not "
                             "numbers): the scores stored for those days are wrong")
        sign = 1.0 if comp.higher_is_better else -1.0  # the test reads the deltas where higher is better
        look = pooled_decision([sign * d for d in days], tail, margin, policy.alternative)
        lower, upper = (look.lower, look.upper) if sign > 0 else (
            None if look.upper is None else -look.upper, None if look.lower is None else -look.lower)
        record = {"looks": look.looks, "since": dates[0], "restart": before.restart,
                  "restart_day": None if before.restart_day is None else before.restart_day.isoformat(),
                  "queries": look.queries, "tail": tail, "lower": lower, "upper": upper,
                  "decided_on": None if look.decided_at is None else dates[look.decided_at - 1],
                  "change_from": None if look.change_from is None else dates[look.change_from - 1],
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
    if pooled.get("change_from"):
        words += f" (a change from {pooled['change_from']} on)"
    lower, upper = pooled.get("lower"), pooled.get("upper")
    if lower is not None and upper is not None:
        words += (f"; the mean delta since then lies in [{numfmt.number(lower, signed=True)}, "
                  f"{numfmt.number(upper, signed=True)}] (confidence sequence, each side at "
                  f"{numfmt.level(1.0 - float(pooled['tail']))})")  # type: ignore[arg-type]
    return words
