"""Daily looks that pool the days: an anytime-valid betting test over every production sample since the restart.

**Why.** A comparison repeated on a fresh production sample every day may look every day. Spending alpha over
the looks (``evalops.stats.rule.spending_tail``: look k at ``alpha 6 / (pi^2 k^2)``) keeps the false-alarm
rate of the whole history at alpha, but each look reads one day's sample at a shrinking level, so a
sustained small drop is found late or never: a drop of 0.02 from day 20 (200 queries a day, sd 0.29) is
caught by day 60 in under a fifth of the histories (``benchmarks/stats_rule.py``, figure 5).

**The test.** Every query compared since the pair of versions was first looked at (the look counter
restarts when the baseline or the candidate changes) is one bet, in the order of the days. Against the
null "every query's expected delta is at least ``m``" (no drop past ``m``; ``m = 0`` for the p-value route,
``-margin`` for the effect-size route), a gambler stakes a predictable fraction ``lambda_i`` of her wealth on
each delta falling below ``m``: ``W_t = prod_{i <= t} (1 + lambda_i (m - d_i))``. Under the null, conditionally
on everything before query i, ``E[1 + lambda_i (m - d_i)] <= 1``, so ``W`` is a nonnegative supermartingale
with ``W_0 = 1`` and, by Ville's inequality, ``P(sup_t W_t >= 1 / tail) <= tail``: looking after every day,
forever, with skewed, sparse or drifting (but never dropping) deltas, alarms with probability at most
``tail``. The null holds query by query, so it covers a candidate whose deltas change from day to day as
long as none is a drop; a drop from some day on makes the wealth grow from that day.

This is the betting confidence sequence of Waudby-Smith & Ramdas (2023, JRSS B, "Estimating means of bounded
random variables by betting"), read as a one-sided sequential test, with their mixture of bets: the wealth
is the average over ``GRID`` gamblers, gambler g staking the constant fraction ``CAP / (1 - m) / 2^g``
(g = 0 .. GRID - 1). An average of nonnegative supermartingales that start at 1 is one, so Ville's bound
holds for the average; the average is within ``log GRID`` of the best gambler in hindsight, whichever size
of drop (a large drop rewards large stakes, a small sustained one small stakes, which lose little while
there is no drop). The cap keeps every factor positive for deltas in [-1, 1] (``1 + lambda (m - d) >=
1 - CAP``). Deltas outside [-1, 1] have no such test (the caller keeps the spending rule for them).

**The decision** (:func:`pooled_decision`, what the pipeline's production looks use). The regression rule's
table (``evalops.stats.decision``) read from the sequence instead of one day's interval: with M the margin,
"the mean delta since the restart lies below m" is shown at a look whose wealth against "no drop past m"
reaches ``1 / tail`` (and above m by the mirror image, the test on ``-d``). A drop shown below -M at any
look so far: a ``regression``, ``critical`` (``material``); a gain above +M: an ``improvement``,
``critical``; shown above -M and below +M at the last look (two-sided; above -M alone under ``less``, below
+M alone under ``greater``): ``no_change`` (``equivalence``); a drop shown below 0 at any look so far: a
``regression``, ``warning`` (``significant``); a gain above 0 the mirror image; anything else
``inconclusive`` (``underpowered``: not enough days pooled yet). A drop, once shown, stays shown until the
restart: it rejects "no query's expected delta is below m", whatever came after. Equivalence is read at the
last look only: the mean since the restart moves when a drop starts, so an equivalence shown before the
drop must not hide it. Each statement is a level-``tail`` test at any look, however long the pair is
watched (Ville). Its confidence bounds (the running intersection of the confidence sequence: the values m
not yet ruled out at any look) are reported beside it.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from evalops.errors import InputError
from evalops.stats.robust import CAP
from evalops.stats._base import check_alternative

__all__ = ["GRID", "DropSequence", "PooledLook", "drop_sequence", "pooled_decision", "sequence_log_wealth"]

GRID = 10


def sequence_log_wealth(d: np.ndarray, m: float, at: np.ndarray | None = None) -> np.ndarray:
    """The log wealth after each delta of the stream ``d`` (last axis, in [-1, 1]) against "no drop past
    ``m``" (module docstring); any leading shape (vectorised over streams). ``at``: only after the deltas
    at these positions of the last axis (the same numbers, without mixing the gamblers at every delta)."""
    d = np.asarray(d, dtype=np.float64)
    if not -1.0 < m < 1.0:
        raise InputError(f"the point tested must lie inside (-1, 1); got {m}")
    if d.size and not np.abs(d).max() <= 1.0:
        raise InputError("the betting sequence needs deltas in [-1, 1] (and numbers)")
    out = None
    for g in range(GRID):
        stake = CAP / (1.0 - m) / 2.0**g
        wealth = np.cumsum(np.log1p(stake * (m - d)), axis=-1)
        if at is not None:
            wealth = wealth[..., at]
        out = wealth if out is None else np.logaddexp(out, wealth)
    if out is None:  # pragma: no cover - GRID >= 1
        return np.zeros_like(d)
    return out - math.log(GRID)


@dataclass(frozen=True)
class DropSequence:
    """The sequential test after each look (day): ``log_wealth[k]`` at the end of look k (0-based) against
    each point of ``points``; ``alarm[j]``: the first look at which the wealth against ``points[j]`` reached
    ``1 / tail`` (``None``: never)."""

    points: tuple[float, ...]
    tail: float
    log_wealth: tuple[tuple[float, ...], ...]
    alarm: tuple[int | None, ...]


def drop_sequence(days: Sequence[np.ndarray], tail: float, points: Sequence[float] = (0.0,)) -> DropSequence:
    """The pooled daily test of the looks ``days`` (each one day's per-query deltas, in order since the
    restart): the wealth at the end of each day against each point (module docstring).

    Reading: a drop past ``points[j]`` is declared at the first look whose wealth reaches ``1 / tail``; the
    chance that an unchanged pair of versions is ever declared a drop, however many days it is watched, is
    at most ``tail``."""
    if not 0.0 < tail < 1.0:
        raise InputError(f"tail must lie in (0, 1); got {tail}")
    parts = [np.asarray(x, dtype=np.float64).reshape(-1) for x in days]
    if not parts:
        return DropSequence(tuple(points), tail, (), tuple(None for _ in points))
    stream = np.concatenate(parts)
    ends = np.cumsum([len(p) for p in parts]) - 1
    threshold = math.log(1.0 / tail)
    walls, alarms = [], []
    for m in points:
        if len(stream) == 0:
            walls.append(np.zeros(len(parts)))
            alarms.append(None)
            continue
        lw = sequence_log_wealth(stream, float(m), at=np.maximum(ends, 0))
        at_end = np.where(ends >= 0, lw, 0.0)
        # a look with no queries keeps the wealth of the look before it
        empty = np.array([len(p) == 0 for p in parts])
        for k in range(len(parts)):
            if empty[k]:
                at_end[k] = at_end[k - 1] if k else 0.0
        walls.append(at_end)
        hit = np.flatnonzero(np.maximum.accumulate(at_end) >= threshold)
        alarms.append(int(hit[0]) if len(hit) else None)
    log_wealth = tuple(tuple(float(w[k]) for w in walls) for k in range(len(parts)))
    return DropSequence(tuple(float(p) for p in points), tail, log_wealth, tuple(alarms))


@dataclass(frozen=True)
class PooledLook:
    """The decision of the pooled daily test at the last look (:func:`pooled_decision`).

    ``looks``: the looks (days) pooled, the last one included; ``queries``: the deltas pooled; ``tail``: the
    per-side false-alarm bound of the whole watch; ``decision``/``severity``/``criterion``/``reason_code``:
    the regression rule's words (``evalops.stats.decision``); ``decided_at``: the look (1-based) at which
    the drop or gain that decided was first shown, or since which equivalence has been shown at every look
    (``None`` while ``inconclusive``); ``lower``/``upper``: the
    confidence sequence's bounds on the mean delta since the restart, each holding with probability at
    least ``1 - tail`` at every look (``None`` when not asked for)."""

    looks: int
    queries: int
    tail: float
    margin: float
    decision: str
    severity: str | None
    criterion: str | None
    reason_code: str | None
    reason: str
    decided_at: int | None
    lower: float | None = None
    upper: float | None = None


def _shown_below(days: Sequence[np.ndarray], tail: float, points: Sequence[float]
                 ) -> tuple[dict[float, int | None], dict[float, int | None]]:
    """For each point m: the first look (1-based) at which "the mean lies below m" was shown, or ``None``
    (``ever``); and the first look of the stretch of looks up to the last one at which it is shown at
    every look, or ``None`` when it is not shown at the last look (``now``)."""
    if not points:
        return {}, {}
    seq = drop_sequence(days, tail, points)
    threshold = math.log(1.0 / tail)
    ever = {m: None if a is None else a + 1 for m, a in zip(points, seq.alarm)}
    now: dict[float, int | None] = {}
    for j, m in enumerate(points):
        shown = [w[j] >= threshold for w in seq.log_wealth]
        k = len(shown)
        while k and shown[k - 1]:
            k -= 1
        now[m] = k + 1 if k < len(shown) else None
    return ever, now


def _bound_below(stream: np.ndarray, ends: np.ndarray, threshold: float, iterations: int) -> float:
    """The upper confidence bound: the smallest m not yet ruled out (bisection on the wealth's running
    maximum over the looks, which grows with m)."""
    if len(stream) == 0:
        return 1.0
    edge = 1.0 - 2.0**-20

    def shown(m: float) -> bool:
        return bool(sequence_log_wealth(stream, m, at=ends).max() >= threshold)

    lo, hi = -edge, edge
    if shown(lo):
        return lo
    if not shown(hi):
        return 1.0
    for _ in range(iterations):
        mid = 0.5 * (lo + hi)
        lo, hi = (lo, mid) if shown(mid) else (mid, hi)
    return hi


def pooled_decision(days: Sequence[np.ndarray], tail: float, margin: float, alternative: str = "two-sided", *,
                    bounds: bool = True, iterations: int = 30) -> PooledLook:
    """The regression rule read from the pooled daily test (module docstring) at the last look of ``days``
    (each one day's per-query deltas in [-1, 1], candidate - baseline in the direction where higher is
    better, in order since the restart; a day may be empty).

    ``tail`` is the per-side error of the whole watch (the family's share of alpha); ``margin`` M in [0, 1).
    ``bounds=False`` skips the confidence bounds (a bisection; the decision does not use them)."""
    check_alternative(alternative)
    if not 0.0 <= margin < 1.0:
        raise InputError(f"the margin must lie in [0, 1) for the pooled test; got {margin}")
    parts = [np.asarray(x, dtype=np.float64).reshape(-1) for x in days]
    if not parts:
        raise InputError("the pooled test needs at least one look")
    mirror = [-p for p in parts]
    down = alternative in ("two-sided", "less")
    up = alternative in ("two-sided", "greater")
    # below[m]: "the mean lies below m" shown; above[m]: "the mean lies above m" shown (the test on -d at -m)
    below_points = ({-margin, 0.0} if down else set()) | ({margin} if up else set())
    above_points = ({margin, 0.0} if up else set()) | ({-margin} if down else set())
    below, below_now = _shown_below(parts, tail, sorted(below_points))
    above_ever, above_then = _shown_below(mirror, tail, sorted(-x for x in above_points))
    above = {-m: look for m, look in above_ever.items()}
    above_now = {-m: look for m, look in above_then.items()}
    queries = int(sum(len(p) for p in parts))

    def done(decision: str, severity: str | None, criterion: str | None, reason_code: str | None, why: str,
             at: int | None) -> PooledLook:
        lower = upper = None
        if bounds:
            stream = np.concatenate(parts)
            ends = np.cumsum([len(p) for p in parts]) - 1
            ends = ends[ends >= 0]
            threshold = math.log(1.0 / tail)
            upper = _bound_below(stream, ends, threshold, iterations)
            lower = -_bound_below(-stream, ends, threshold, iterations)
        return PooledLook(len(parts), queries, tail, margin, decision, severity, criterion, reason_code, why, at,
                          lower, upper)

    def first(*looks: int | None) -> int | None:
        """The look at which every statement was shown (the last of them), or None."""
        return None if any(x is None for x in looks) else max(x for x in looks if x is not None)

    if down and below.get(-margin) is not None:
        return done("regression", "critical", "material", None,
                    f"the pooled test shows the mean delta below -{margin:g}: a material drop (critical)",
                    below[-margin])
    if up and above.get(margin) is not None and below.get(0.0) is None:  # a drop shown wins over a gain
        return done("improvement", "critical", "material", None,
                    f"the pooled test shows the mean delta above +{margin:g}: a material gain", above[margin])
    at = (first(above_now.get(-margin), below_now.get(margin)) if alternative == "two-sided"
          else first(above_now.get(-margin)) if alternative == "less" else first(below_now.get(margin)))
    if at is not None:
        words = {"two-sided": f"inside +-{margin:g} (equivalence)", "less": f"above -{margin:g} (non-inferiority)",
                 "greater": f"below +{margin:g}"}[alternative]
        return done("no_change", None, "equivalence", None, f"the pooled test shows the mean delta {words}", at)
    if down and below.get(0.0) is not None:
        return done("regression", "warning", "significant", None,
                    f"the pooled test shows the mean delta below 0, not yet past -{margin:g}: a significant drop, "
                    "size uncertain (warning)", below[0.0])
    if up and above.get(0.0) is not None:
        return done("improvement", "warning", "significant", None,
                    f"the pooled test shows the mean delta above 0, not yet past +{margin:g}: a significant gain",
                    above[0.0])
    return done("inconclusive", None, None, "underpowered",
                "the pooled test has not shown a drop, a gain or equivalence yet: more days will decide it", None)
