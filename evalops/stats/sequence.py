"""Daily looks that pool the days: an anytime-valid change detector of betting e-processes over every production
sample since the restart.

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

**The change detector.** The wealth since the restart bets on every query since the first look, so a drop
that starts on day 40 of a quiet watch must first win back what the quiet days cost and is diluted by them
(the mean since the restart of 40 quiet days and 20 days at -2M is -0.7M). The detector bets from every
look on at once: with ``F_{g,i}`` gambler g's factor over look i's queries and prior weights ``w_j = 1 /
(j (j + 1))`` over the look j a change starts at (they sum to 1),

    E_k = sum_{j <= k} w_j mean_g prod_{i = j..k} F_{g,i} + sum_{j > k} w_j,

computed by the recursion ``S_k = (S_{k-1} + w_k) F_k`` per gambler (:func:`change_log_wealth`). Under the
null each term is a nonnegative supermartingale that is 1 until its start look (the bets are the same as
above), so ``E`` is one too, starting at 1, and Ville's inequality bounds the chance that it ever reaches
``1 / tail`` by ``tail``: an e-detector in the sense of Shin, Ramdas & Rinaldo (2023, "E-detectors: a
nonparametric framework for sequential change detection"), a Shiryaev-Roberts mixture over start times, with
its false-alarm bound taken over the whole watch, not only its average run length. A change from look j
costs ``log 1/w_j`` (7.4 at look 40) on top of ``log 1/tail``, however long the quiet stretch before it. The
start carrying the largest share of ``E`` when it first reached ``1 / tail`` (:func:`change_start`) says
roughly where the change began.

**The decision** (:func:`pooled_decision`, what the pipeline's production looks use). The regression rule's
table (``evalops.stats.decision``) read from the daily looks, with M the margin: "from some look on, the mean
delta lies below m" is shown at a look where the detector against "no query's expected delta is below m"
reaches ``1 / tail`` (and above m by the mirror image, the detector on ``-d``). A drop shown below -M at any
look so far: a ``regression``, ``critical`` (``material``); else a drop shown below 0 at any look: a
``regression``, ``warning`` (``significant``); else a gain above +M, then above 0: an ``improvement``
(``critical``, ``warning``); else, when the betting test since the restart shows the mean delta above -M
and below +M at the last look (two-sided; above -M alone under ``less``, below +M alone under ``greater``):
``no_change`` (``equivalence``); anything else ``inconclusive`` (``underpowered``: not enough days pooled
yet). A drop, once shown, stays shown until the restart, whatever comes after: it rejected "no query's
expected delta is below m" and a later equivalence of the mean since the restart (diluted by the days before
or after the drop) does not take it back. Each statement is a level-``tail`` test at any look, however long
the pair is watched (Ville). Its confidence bounds are those of the betting confidence sequence of the mean
delta since the restart at the last look (each side holding at every look with probability at least ``1 -
tail``); they are reported beside the decision and never cross (:func:`_bound_below`).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from evalops.errors import InputError
from evalops.stats.robust import CAP
from evalops.stats._base import check_alternative

__all__ = ["GRID", "DropSequence", "PooledLook", "change_log_wealth", "change_sequence", "change_start",
           "day_log_factors", "drop_sequence", "pooled_decision", "sequence_log_wealth", "start_weight"]

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
    walls: list[np.ndarray] = []
    alarms: list[int | None] = []
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


def start_weight(look: int) -> float:
    """The prior weight of a change starting at look ``look`` (1, 2, ...): ``1 / (look (look + 1))``, which
    sums to 1 over every look (module docstring, *the change detector*)."""
    return 1.0 / (look * (look + 1.0))


def day_log_factors(d: np.ndarray, m: float) -> np.ndarray:
    """Each gambler's log factor summed over one day: ``d`` shaped (..., queries) in [-1, 1] (a leading axis
    of days or of histories is vectorised over), the result (..., GRID); gambler g stakes
    ``CAP / (1 - m) / 2^g`` (module docstring)."""
    d = np.asarray(d, dtype=np.float64)
    if not -1.0 < m < 1.0:
        raise InputError(f"the point tested must lie inside (-1, 1); got {m}")
    if d.size and not np.abs(d).max() <= 1.0:
        raise InputError("the betting sequence needs deltas in [-1, 1] (and numbers)")
    stakes = CAP / (1.0 - m) / 2.0 ** np.arange(GRID)
    return np.stack([np.log1p(s * (m - d)).sum(axis=-1) for s in stakes], axis=-1)


def change_log_wealth(factors: np.ndarray) -> np.ndarray:
    """The change detector's log e-process at the end of each look, from each gambler's per-look log factor
    sums ``factors`` (..., looks, GRID; :func:`day_log_factors` of each look): ``log E_k`` with
    ``E_k = sum_{j <= k} w_j mean_g prod_{i=j..k} f_{g,i} + sum_{j > k} w_j`` (module docstring), by the
    recursion ``S_k = (S_{k-1} + w_k) F_k`` per gambler."""
    factors = np.asarray(factors, dtype=np.float64)
    looks = factors.shape[-2]
    out = np.empty(factors.shape[:-1])
    s = np.full(factors.shape[:-2] + factors.shape[-1:], -np.inf)
    for k in range(looks):
        s = np.logaddexp(s, math.log(start_weight(k + 1))) + factors[..., k, :]
        mixed = np.logaddexp.reduce(s, axis=-1) - math.log(factors.shape[-1])
        out[..., k] = np.logaddexp(mixed, -math.log(k + 2.0))  # the looks not yet started: weight 1 / (k + 2)
    return out


def change_start(factors: np.ndarray, look: int) -> int:
    """The start look (1-based) carrying the largest share of the change detector's e-process at ``look``
    (1-based), from one history's ``factors`` (looks, GRID): where the change the detector saw began."""
    f = np.asarray(factors, dtype=np.float64)[:look].T
    tails = np.cumsum(f[:, ::-1], axis=1)[:, ::-1]  # tails[g, j] = sum_{i=j..look-1} f[g, i]
    terms = np.logaddexp.reduce(tails, axis=0) + np.log([start_weight(j + 1) for j in range(look)])
    return int(np.argmax(terms)) + 1


def change_sequence(days: Sequence[np.ndarray], tail: float, points: Sequence[float] = (0.0,)) -> DropSequence:
    """The change detector of the looks ``days`` (each one day's per-query deltas, in order since the
    restart) against each point: ``alarm[j]`` is the first look at which "from some look on, the mean delta
    lies below ``points[j]``" is shown (module docstring). An unchanged pair with no drop past the point is
    declared one with probability at most ``tail``, however many days it is watched."""
    if not 0.0 < tail < 1.0:
        raise InputError(f"tail must lie in (0, 1); got {tail}")
    parts = [np.asarray(x, dtype=np.float64).reshape(-1) for x in days]
    threshold = math.log(1.0 / tail)
    walls, alarms = [], []
    for m in points:
        factors = np.stack([day_log_factors(p, float(m)) for p in parts]) if parts else np.zeros((0, GRID))
        lw = change_log_wealth(factors)
        walls.append(lw)
        hit = np.flatnonzero(lw >= threshold)
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
    (``None`` while ``inconclusive``); ``change_from``: for a drop or gain, the look from which the change
    detector saw it (the start carrying the largest share of its e-process when it was shown);
    ``lower``/``upper``: the confidence sequence's bounds on the mean delta since the restart at the last
    look, each holding with probability at least ``1 - tail`` at every look, and never crossed (``None``
    when not asked for)."""

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
    change_from: int | None = None


def _shown_now(days: Sequence[np.ndarray], tail: float, points: Sequence[float]) -> dict[float, int | None]:
    """For each point m: the first look of the stretch of looks up to the last one at which "the mean delta
    since the restart lies below m" is shown at every look, or ``None`` when it is not shown at the last look."""
    if not points:
        return {}
    seq = drop_sequence(days, tail, points)
    threshold = math.log(1.0 / tail)
    now: dict[float, int | None] = {}
    for j, m in enumerate(points):
        shown = [w[j] >= threshold for w in seq.log_wealth]
        k = len(shown)
        while k and shown[k - 1]:
            k -= 1
        now[m] = k + 1 if k < len(shown) else None
    return now


def _detected(parts: Sequence[np.ndarray], tail: float, m: float) -> tuple[int | None, int | None, str]:
    """The change detector against m: the first look (1-based) at which "from some look on, the mean delta
    lies below m" is shown, the look the change started from (``None``, ``None``: never shown), and the
    statistic in words."""
    factors = np.stack([day_log_factors(p, m) for p in parts])
    wealth = change_log_wealth(factors)
    hit = np.flatnonzero(wealth >= math.log(1.0 / tail))
    if not len(hit):
        return None, None, ""
    at = int(hit[0]) + 1
    start = change_start(factors, at)
    return at, start, (f" (the change detector's e-process reached {math.exp(min(wealth[at - 1], 700.0)):.3g} >= "
                       f"1/tail = {1.0 / tail:.3g} at look {at}; the change began about look {start})")


def _bound_below(stream: np.ndarray, end: int, threshold: float, iterations: int) -> float:
    """The upper confidence bound at the last look: the smallest m at which "the mean delta since the restart
    lies below m" is shown (bisection on the wealth at the last look, which grows with m). The lower bound
    is the same on the mirrored stream; the two never cross: one constant-stake gambler's log wealth is
    concave in her signed stake and 0 at stake 0, so no point is shown below and above by the same deltas."""
    if len(stream) == 0:
        return 1.0
    edge = 1.0 - 2.0**-20
    at = np.array([end])

    def shown(m: float) -> bool:
        return bool(sequence_log_wealth(stream, m, at=at)[-1] >= threshold)

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
    """The regression rule read from the pooled daily looks (module docstring) at the last look of ``days``
    (each one day's per-query deltas in [-1, 1], candidate - baseline in the direction where higher is
    better, in order since the restart; a day may be empty).

    ``tail`` is the per-side error of the whole watch (the family's share of alpha); ``margin`` M in [0, 1).
    ``bounds=False`` skips the confidence bounds (a bisection; the decision does not use them)."""
    check_alternative(alternative)
    if not 0.0 <= margin < 1.0:
        raise InputError(f"the margin must lie in [0, 1) for the pooled test; got {margin}")
    if not 0.0 < tail < 1.0:
        raise InputError(f"tail must lie in (0, 1); got {tail}")
    parts = [np.asarray(x, dtype=np.float64).reshape(-1) for x in days]
    if not parts:
        raise InputError("the pooled test needs at least one look")
    mirror = [-p for p in parts]
    down = alternative in ("two-sided", "less")
    up = alternative in ("two-sided", "greater")
    queries = int(sum(len(p) for p in parts))

    def done(decision: str, severity: str | None, criterion: str | None, reason_code: str | None, why: str,
             at: int | None, start: int | None = None) -> PooledLook:
        lower = upper = None
        if bounds:
            stream = np.concatenate(parts)
            threshold = math.log(1.0 / tail)
            upper = _bound_below(stream, len(stream) - 1, threshold, iterations)
            lower = -_bound_below(-stream, len(stream) - 1, threshold, iterations)
        return PooledLook(len(parts), queries, tail, margin, decision, severity, criterion, reason_code, why, at,
                          lower, upper, start)

    def shown(words: str) -> str:
        return f"the daily looks reject \"no query's expected delta lies {words} on any day since the restart\""

    # a drop shown at any look decides, before any gain and before equivalence: it is never taken back
    for wanted, series, decision, side, material, significant in (
        (down, parts, "regression", "below -", "a material drop (critical)",
         "a significant drop, size uncertain (warning)"),
        (up, mirror, "improvement", "above +", "a material gain", "a significant gain"),
    ):
        if not wanted:
            continue
        at, start, stat = _detected(series, tail, -margin)
        if at is not None:
            return done(decision, "critical", "material", None,
                        f"{shown(f'{side}{margin:g}')}{stat}: {material}", at, start)
        at, start, stat = _detected(series, tail, 0.0)
        if at is not None:
            return done(decision, "warning", "significant", None,
                        f"{shown(side[:-2] + ' 0')}{stat}, not shown past {side[-1]}{margin:g}: {significant}",
                        at, start)
    # equivalence: the mean since the restart inside the margin at the last look (no change was detected)
    below_now = _shown_now(parts, tail, [margin] if up else [])
    above_now = {-m: look for m, look in _shown_now(mirror, tail, [margin] if down else []).items()}
    looks = [look for look in (*below_now.values(), *above_now.values())]
    if looks and all(look is not None for look in looks):
        words = {"two-sided": f"inside +-{margin:g} (equivalence)", "less": f"above -{margin:g} (non-inferiority)",
                 "greater": f"below +{margin:g}"}[alternative]
        return done("no_change", None, "equivalence", None,
                    f"the pooled test shows the mean delta since the restart {words}, and no change was detected",
                    max(look for look in looks if look is not None))
    return done("inconclusive", None, None, "underpowered",
                "the pooled test has not shown a drop, a gain or equivalence yet: more days will decide it", None)
