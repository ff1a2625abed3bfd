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
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from evalops.errors import InputError
from evalops.stats.robust import CAP

__all__ = ["GRID", "DropSequence", "drop_sequence", "sequence_log_wealth"]

GRID = 10


def sequence_log_wealth(d: np.ndarray, m: float) -> np.ndarray:
    """The log wealth after each delta of the stream ``d`` (last axis, in [-1, 1]) against "no drop past
    ``m``" (module docstring); any leading shape (vectorised over streams)."""
    d = np.asarray(d, dtype=np.float64)
    if not -1.0 < m < 1.0:
        raise InputError(f"the point tested must lie inside (-1, 1); got {m}")
    if d.size and np.abs(d).max() > 1.0:
        raise InputError("the betting sequence needs deltas in [-1, 1]")
    out = None
    for g in range(GRID):
        stake = CAP / (1.0 - m) / 2.0**g
        wealth = np.cumsum(np.log1p(stake * (m - d)), axis=-1)
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
        lw = sequence_log_wealth(stream, float(m))
        at_end = np.where(ends >= 0, lw[np.maximum(ends, 0)], 0.0)
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
