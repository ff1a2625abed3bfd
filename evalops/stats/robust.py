"""The skew-robust decision interval (``interval="robust"``, the default): t where it can be trusted,
betting where it cannot, ``inconclusive`` where nothing can.

**Why.** Per-query deltas of IR measures on the gold sets RAG teams have are small (tens to a few hundred
queries), sparse (P@10, RR, Success: most deltas are exactly 0) and skewed (a candidate changes a few queries
a lot and many a little). The t-interval's one-sided error is off by a term of order ``skew / sqrt(n)``
(Edgeworth; Hall 1992), and a sample that missed the rare large deltas looks like a clean drop: measured
on real deltas re-centred to a true mean of 0 it alarms in up to 2-8 % of A/A comparisons at n = 20-30 (the
worst cell of each measure, at the default margins) where it promises 2.5 % (``benchmarks/stats_rule.py``). Bootstrap (percentile, BCa) and sign-flip intervals fail the
same way, because they too read the shape of the population from the sample. On symmetric data and large n
the t-interval is the most powerful interval there is, so it is kept where it is safe.

**The rule, per comparison** (deltas ``d`` of n queries, per-side error ``tail``):

1. Fewer than ``MIN_NONZERO`` (6) non-zero deltas: no interval can be trusted (``too_few_nonzero``).
   With k non-zero deltas the best any sign-based test can do is p = 2^-k per side; 6 is the least k for
   which 2^-k is below the 2.5 % of a two-sided 5 % policy.
2. Every delta the same (sd = 0): the interval is the point, as for every interval here.
3. ``k >= 28 + 50 g1^2`` moved deltas (g1 the sample skewness, k the deltas that differ from the sample's
   common value, ``moved_count``: 0 where most queries did not change; Cochran's rule for the mean of a
   skewed population in the refined form of Sugden, Smith & Jones 2000, whose constant is 25; at twice it,
   ``COCHRAN``): the skew-corrected
   t-interval (``skew_ends``: each end the farther of the plain end and the end moved by the Edgeworth term
   at ``SKEW_FACTOR`` times its size), with claims past the margin read at half the per-side error
   (``material_t``).
   Or, from ``BALANCED_NONZERO`` (200) non-zero deltas on, when the 25 deltas furthest from the mean fall
   on both sides of it about equally (``tails_balanced``): the plain t-interval. On symmetric heavy-tailed
   deltas (most queries unchanged, a few moved a lot either way: NFCorpus AP between two BM25 settings has
   a kurtosis near 100) the sample skewness is mostly noise, and Cochran's rule alone sent 35-65 % of such
   samples at n = 300 to the betting interval, costing up to 50 points of power; the sign count of the
   tails is not inflated by heavy tails, and a real skew puts the extreme deltas on one side.
4. Otherwise, and when every delta lies in [-1, 1] (every retrieval measure in [0, 1]): the **betting
   interval** (below). From ``STRICT_NONZERO`` (20) non-zero deltas on, the **strict t-interval** (the
   skew-corrected t-interval at ``STRICT_SHARE``, a tenth, of the per-side error) is read beside it for one
   claim only, that the mean lies below 0 (or above), and only when the betting wealth against it has at
   least doubled (``STRICT_WEALTH``): betting alone cannot see a drop of 2 x margin at n = 50 on a skewed
   pool (it must allow for a rare query that moved the other way by up to 1: 50 deltas of -0.04 bring a
   wealth of at most (1 + 0.75 x 0.04)^50 = 4.4 against the 40 a 2.5 % side needs), where the paired t-test
   finds it in up to 100 %. A sample that missed a pool's rare large gain looks like a tight drop to any
   t-interval, but its mean is small, so its wealth stays near 1: the doubling is what keeps such samples
   out. Claims past the margin (``critical``) and equivalence stay with the betting interval alone.
   (``benchmarks/stats_rule.py``, figures 1, 2, 7 and 8.) Cochran's rule counts *moved* deltas, not
   non-zero ones (``moved_count``): the shape of a sparse sample is told by the queries that moved away from
   its bulk, and a bulk shifted off 0 (26 queries at -0.01 and 4 others) says no more than 26 zeros do;
   counted as 30 changed queries it reached the t-interval at the full error, which read a sample that
   missed the pool's one large gain as a tight drop (held-out P@10 A/A cells at 5-7 %, figure 8). The strict
   t-interval keeps the non-zero count: its own guards, a tenth of the error and a doubled wealth (evidence
   measured against the range, which a sample that missed a large gain does not have), kept those cells at
   0.8-1.3 %, where counting moved deltas there too cost 60 points of the uniform-shift detection at n = 50
   (figure 7). With the **betting
   interval** for a bounded mean (Waudby-Smith & Ramdas 2023, "Estimating means of bounded random variables
   by betting", JRSS B), which holds its level for *every* distribution on [-1, 1], however skewed or
   sparse, at every n. Deltas outside [-1, 1] (token counts) have no such interval: ``skewed_small_sample``.

**The betting interval.** For a candidate mean m, a gambler who bets a fraction ``lambda_i`` of her wealth
that each delta falls below m has wealth ``prod_i (1 + lambda_i (m - d_i))``; if the true mean is m or more
and each bet is chosen before its delta is seen (predictable), that wealth is a nonnegative supermartingale
with expectation at most 1, so by Markov's (Ville's) inequality it reaches ``1 / tail`` with probability at
most ``tail``. The bets are WSR's predictable plug-in (``log_wealth``), capped at ``CAP / (1 - m)``, which
keeps the wealth nonnegative and monotone in m, so the interval is ``[sup{m: above-wealth >= 1/tail},
inf{m: below-wealth >= 1/tail}]`` and the decision can be read at the three points -margin, 0, +margin
without computing it. The wealth is averaged over ``ORDERS`` fixed orders of the sorted deltas (an average
of e-values is an e-value), so it does not depend on the order of the queries.

The price of holding the level for any distribution is width: where the t-interval is trusted (step 3)
it is used, so symmetric data at n = 300 loses little power (``benchmarks/stats_rule.py`` prints the cost).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import cast

import numpy as np

from evalops.stats.student_t import t_quantile, t_upper_tail

__all__ = ["BALANCED_NONZERO", "BRANCHES", "CAP", "TAIL_K", "ORDERS", "MIN_NONZERO", "RobustInterval", "RobustReading", "betting_interval", "branch",
           "STRICT_NONZERO", "STRICT_SHARE", "STRICT_WEALTH", "strict_t",
           "MATERIAL_SHARE", "SKEW_FACTOR", "cochran_n", "log_wealth", "moved_count", "read_robust", "robust_interval", "skew_ends", "skew_shift",
           "tails_balanced"]

MIN_NONZERO = 6
COCHRAN = 50.0
SKEW_FACTOR = 2.0  # the Edgeworth term at twice its first-order size (skew_shift)
MATERIAL_SHARE = 0.5  # the t-interval reads the material claims (past -+margin) at this share of the per-side error
BALANCED_NONZERO = 200  # from this many non-zero deltas, balanced tails also let the t-interval decide
TAIL_K = 25
STRICT_SHARE = 0.1  # the strict t-interval beside the betting interval reads at this share of the per-side error
STRICT_NONZERO = 20  # from this many non-zero deltas
STRICT_WEALTH = 2.0  # ... and when the betting wealth against the same claim has at least doubled
CAP = 0.75  # the largest bet, a fraction of 1 / (1 -+ m) (WSR 2023 recommend 1/2 or 3/4)
ORDERS = 4
_BISECTION_STEPS = 60
_EDGE = 1e-9
# the branches of the rule, by number (``branch``)
BRANCHES: tuple[str, ...] = ("too_few_nonzero", "constant", "t", "betting", "unbounded")


def cochran_n(skewness: np.ndarray | float) -> np.ndarray | float:
    """The n from which the t-interval is trusted: ``28 + COCHRAN g1^2`` (Sugden, Smith & Jones 2000, whose
    constant is 25)."""
    return 28.0 + COCHRAN * np.square(skewness)


def sample_skewness(d: np.ndarray) -> np.ndarray:
    """g1 = m3 / m2^1.5 along the last axis (0 where the deltas are constant)."""
    centred = d - d.mean(axis=-1, keepdims=True)
    m2 = np.mean(centred**2, axis=-1)
    m3 = np.mean(centred**3, axis=-1)
    with np.errstate(divide="ignore", invalid="ignore"):
        g1 = np.where(m2 > 0, m3 / np.where(m2 > 0, m2, 1.0) ** 1.5, 0.0)
    return g1


def skew_shift(g1: np.ndarray | float, se: np.ndarray | float, n: int, t_crit: float) -> np.ndarray | float:
    """The skew correction of the t-interval's ends: ``SKEW_FACTOR se g1 (2 t^2 + 1) / (6 sqrt(n))``.

    The first Edgeworth term of the studentized mean (Hall 1992, Johnson 1978) at ``SKEW_FACTOR`` (2) times
    its first-order size: with a right-skewed delta (g1 > 0) the t statistic is left-skewed, so the plain
    interval reaches too low. The rule applies it only where it widens the interval (``skew_ends``)."""
    return SKEW_FACTOR * se * g1 * (2.0 * t_crit**2 + 1.0) / (6.0 * math.sqrt(max(n, 1)))


def skew_ends(mean: np.ndarray | float, se: np.ndarray | float, g1: np.ndarray | float, n: int,
              t_crit: float) -> tuple[np.ndarray | float, np.ndarray | float]:
    """The ends of the skew-corrected t-interval, each the farther of the plain and the corrected end.

    The correction moves both ends the same way; moving one end inwards is what the sample skewness earns
    only when it is right, and on heavy-tailed deltas it is mostly noise that goes with the mean (a sample
    that drew a large drop has a low mean *and* a negative g1, and the symmetric shift would lower its upper
    end further). So each side takes the larger of the two one-sided corrections, 0 and the Edgeworth term:
    a right skew raises the upper end (a drop needs more evidence), a left skew lowers the lower end, and
    neither end ever moves inwards."""
    shift = skew_shift(g1, se, n, t_crit)
    return mean - t_crit * se + np.minimum(shift, 0.0), mean + t_crit * se + np.maximum(shift, 0.0)


def log_wealth(d: np.ndarray, m: float, side: str, tail: float) -> np.ndarray:
    """log of the wealth against ``mean >= m`` (``side="below"``) or ``mean <= m`` (``"above"``).

    ``d``: deltas in [-1, 1] along the last axis (any leading shape); ``m`` in (-1, 1); ``tail`` the level the
    bets are tuned for. The predictable plug-in bet of WSR 2023 (their PrPl-EB, in delta units):
    ``lambda_i = min(sqrt(2 log(1/tail) / (n s2_{i-1})), CAP / (1 -+ m))`` with ``s2_{i-1}`` the running
    variance of the deltas before the i-th (prior 1, the largest a delta in [-1, 1] can have), averaged over
    ``ORDERS`` fixed orders of the sorted deltas (an average of e-values is an e-value; sorting first makes
    the wealth depend on the deltas, not on the order of the queries). The cap keeps the wealth monotone in m
    (module docstring)."""
    return _wealth(_bets(d, tail), m, side)


def _bets(d: np.ndarray, tail: float) -> list[tuple[np.ndarray, np.ndarray]]:
    """Per fixed order: the ordered deltas and their uncapped plug-in bets (they do not depend on m)."""
    d = np.sort(np.asarray(d, dtype=np.float64), axis=-1)
    n = d.shape[-1]
    steps = np.arange(1, n + 1, dtype=np.float64)
    out = []
    for order in _orders(n):
        x = d[..., order]
        mean = np.cumsum(x, axis=-1) / (steps + 1.0)  # prior mean 0 counts as one observation
        spread = (1.0 + np.cumsum((x - mean) ** 2, axis=-1)) / (steps + 1.0)
        before = np.concatenate([np.ones(x.shape[:-1] + (1,)), spread[..., :-1]], axis=-1)
        out.append((x, np.sqrt(2.0 * math.log(1.0 / tail) / (n * before))))
    return out


def _wealth(bets: list[tuple[np.ndarray, np.ndarray]], m: float, side: str) -> np.ndarray:
    cap = CAP / (1.0 - m) if side == "below" else CAP / (1.0 + m)
    logs = [np.log1p(np.minimum(bet, cap) * ((m - x) if side == "below" else (x - m))).sum(axis=-1)
            for x, bet in bets]
    stacked = np.stack(logs, axis=0)
    top = stacked.max(axis=0)
    wealth: np.ndarray = top + np.log(np.exp(stacked - top).mean(axis=0))
    return wealth


def _orders(n: int) -> list[np.ndarray]:
    rng = np.random.default_rng(20230101 + n)  # fixed: the same deltas always give the same wealth
    return [rng.permutation(n) for _ in range(ORDERS)]


def betting_interval(d: np.ndarray, tail: float) -> tuple[float, float]:
    """The betting interval of the mean of deltas in [-1, 1], each side erring with probability <= ``tail``."""
    d = np.asarray(d, dtype=np.float64)
    threshold = math.log(1.0 / tail)
    bets = _bets(d, tail)

    def boundary(side: str) -> float:
        # below: wealth grows with m; the upper bound is the least m it rejects. above: the mirror image.
        # (m stays inside (-1, 1), where the bets' cap CAP / (1 -+ m) is defined)
        lo, hi = -1.0 + _EDGE, 1.0 - _EDGE
        for _ in range(_BISECTION_STEPS):
            mid = 0.5 * (lo + hi)
            rejected = float(_wealth(bets, mid, side)) >= threshold
            if side == "below":
                lo, hi = (lo, mid) if rejected else (mid, hi)
            else:
                lo, hi = (mid, hi) if rejected else (lo, mid)
        return hi if side == "below" else lo

    return (boundary("above"), boundary("below"))


def moved_count(d: np.ndarray, tol: np.ndarray | float = 0.0) -> np.ndarray:
    """The deltas that differ from the sample's common value, along the last axis: n less the largest group of
    equal deltas (within ``tol`` of their neighbours once sorted), where a group of at least two is common,
    and never more than the non-zero deltas (0 is always a common value).

    A sparse sample's information about the shape of the deltas is in the queries that moved away from the
    bulk, wherever the bulk lies: 26 queries at -0.01 and 4 others say no more about the skew than 26 zeros
    and the same 4 moved by 0.01. Counting non-zero deltas alone let a shift of the bulk off 0 (a re-centred
    null, a sample of a sparse measure whose common value is not 0) pass for 30 changed queries and reach the
    t-interval, which then read a sample that missed the pool's rare large gain as a tight drop (the held-out
    P@10 cells of ``benchmarks/stats_rule.py``, figure 8: 5-7 % of A/A samples alarmed at n = 30-50)."""
    d = np.asarray(d, dtype=np.float64)
    n = d.shape[-1]
    tol = np.asarray(tol, dtype=np.float64)
    nonzero: np.ndarray = (np.abs(d) > (tol[..., None] if tol.ndim else tol)).sum(axis=-1)
    if n < 2:
        return nonzero
    x = np.sort(d, axis=-1)
    gap = np.diff(x, axis=-1) > (tol[..., None] if tol.ndim else tol)
    idx = np.broadcast_to(np.arange(n), x.shape)
    starts = np.concatenate([np.ones(x.shape[:-1] + (1,), bool), gap], axis=-1)
    first = np.maximum.accumulate(np.where(starts, idx, 0), axis=-1)
    largest = (idx - first + 1).max(axis=-1)
    moved: np.ndarray = np.minimum(nonzero, np.where(largest >= 2, n - largest, n))
    return moved


def branch(d: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """The branch of the rule for delta vectors ``d`` (last axis): its number in ``BRANCHES``, the count of
    non-zero deltas, the count of moved deltas (``moved_count``), the skewness the t-interval corrects for (the
    sample's; 0 where balanced tails let it decide) and the Cochran n (all over the leading shape).

    The t-interval is trusted when the *moved* deltas (those that differ from the sample's common value, 0
    in a sample whose most queries did not change; ``moved_count``) number at least ``28 + COCHRAN g1^2``: a
    sparse sample's information is in the queries that changed, and a shift of the bulk adds none.
    ``COCHRAN`` is 50, twice Cochran's 25, because the rule reads one-sided errors of alpha/2 and less,
    further out in the tail than the 95 % coverage the classical rule was derived for (and because g1 of a small
    sparse sample underestimates the skew). From ``BALANCED_NONZERO`` non-zero deltas on, a sample whose extreme
    deltas fall on both sides about equally (``tails_balanced``) is read as symmetric: the plain t-interval decides
    it (no skew correction). That route counts non-zero deltas, not moved ones: it does not read the sample skewness,
    and the t-interval's error on a symmetric distribution does not grow with the mass at its centre."""
    d = np.asarray(d, dtype=np.float64)
    n = d.shape[-1]
    scale = np.abs(d).max(axis=-1, initial=0.0)
    tol = 64.0 * np.finfo(np.float64).eps * np.maximum(scale, 1.0)
    nonzero = (np.abs(d) > tol[..., None]).sum(axis=-1)
    moved = moved_count(d, tol)
    spread = d.max(axis=-1) - d.min(axis=-1) if n else np.zeros(d.shape[:-1])
    constant = spread <= tol
    g1 = sample_skewness(d) if n else np.zeros(d.shape[:-1])
    needed = cochran_n(g1)
    bounded = scale <= 1.0
    balanced = (nonzero >= BALANCED_NONZERO) & tails_balanced(d) & (moved < needed)
    trusted = (moved >= needed) | balanced
    method = np.where(nonzero < MIN_NONZERO, 0, np.where(constant, np.where(bounded, 1, 4),
                                                          np.where(trusted, 2, np.where(bounded, 3, 4))))
    return method, cast(np.ndarray, nonzero), moved, np.where(balanced, 0.0, g1), cast(np.ndarray, needed)


def tails_balanced(d: np.ndarray) -> np.ndarray:
    """Whether the ``TAIL_K`` deltas furthest from the mean lie on both sides of it about equally (between
    ``TAIL_K / 2 -+ sqrt(TAIL_K) / 2`` of them above): the sign test of the tails, along the last axis.

    The sample skewness of a symmetric but heavy-tailed delta (most queries unchanged, a few moved a lot
    either way) is noisy (its variance grows with the sixth moment), so Cochran's rule sends such samples to
    the betting interval and pays its width; which side the extreme deltas fall on is a count, whose noise does
    not depend on how heavy the tails are. A real skew puts the extreme deltas on one side."""
    d = np.asarray(d, dtype=np.float64)
    n = d.shape[-1]
    if n < TAIL_K:
        return np.zeros(d.shape[:-1], bool)
    e = d - d.mean(axis=-1, keepdims=True)
    top = np.argpartition(-np.abs(e), TAIL_K - 1, axis=-1)[..., :TAIL_K]
    above = (np.take_along_axis(e, top, axis=-1) > 0).sum(axis=-1)
    balanced: np.ndarray = np.abs(above - TAIL_K / 2.0) <= math.sqrt(TAIL_K) / 2.0
    return balanced


@dataclass(frozen=True)
class RobustInterval:
    """The robust rule on one delta vector: its branch (``BRANCHES``), the decision interval (``None`` when
    the branch has none), the p-value of the test the interval inverts on each side (``below``: evidence of
    a drop, ``above``: of a gain), the non-zero count and the number of queries that would let the t-interval
    decide at the same share of moved deltas (of non-zero ones for ``too_few_nonzero``) (``None`` when it
    already does). ``material``: the interval a claim past the margin (``critical``) is read from; on the t
    branch the t-interval at ``MATERIAL_SHARE`` of the per-side error (``material_t``), elsewhere the interval
    itself."""

    branch: str
    interval: tuple[float, float] | None
    p_below: float
    p_above: float
    nonzero: int
    queries_needed: int | None
    material: tuple[float, float] | None = None  # the interval the material claims are read from (None: interval)
    strict: bool = False  # the strict t-interval was read beside the betting interval (STRICT_SHARE)
    strict_side: str | None = None  # the claim it made: "below" (the mean lies below 0), "above", or None


def robust_interval(d: np.ndarray, tail: float, t_crit: float) -> RobustInterval:
    """The decision interval of the robust rule for one comparison (module docstring)."""
    d = np.asarray(d, dtype=np.float64).reshape(-1)
    n = len(d)
    code, nonzero, moved, g1, needed = (np.asarray(x).item() for x in branch(d))
    name = BRANCHES[int(code)]
    share = nonzero / n if n else 0.0
    moved_share = moved / n if n else 0.0
    need = None
    if name == "too_few_nonzero":
        need = math.ceil(MIN_NONZERO / share) if share > 0 else None
    elif name in ("betting", "unbounded", "constant"):
        need = math.ceil(needed / moved_share) if moved_share > 0 else None
    if name in ("too_few_nonzero", "unbounded"):
        return RobustInterval(name, None, 1.0, 1.0, int(nonzero), need)
    if name == "t":
        mean, se = float(d.mean()), float(d.std(ddof=1)) / math.sqrt(n)
        lo, hi = (float(x) for x in skew_ends(mean, se, g1, n, t_crit))
        mlo, mhi = (float(x) for x in skew_ends(mean, se, g1, n, material_t(n, tail)))
        return RobustInterval(name, (lo, hi), _t_p(mean, se, g1, n, "below"),
                              _t_p(mean, se, g1, n, "above"), int(nonzero), None, (mlo, mhi))
    wealth_below, wealth_above = float(log_wealth(d, 0.0, "below", tail)), float(log_wealth(d, 0.0, "above", tail))
    below, above = min(1.0, math.exp(-wealth_below)), min(1.0, math.exp(-wealth_above))
    interval = betting_interval(d, tail)
    strict, side = False, None
    if name == "betting" and nonzero >= STRICT_NONZERO:
        strict = True
        mean, se = float(d.mean()), float(d.std(ddof=1)) / math.sqrt(n)
        doubled = math.log(STRICT_WEALTH)
        # the p of "either test": the betting one, or the strict t at STRICT_SHARE of the error (where the
        # wealth has doubled), so that p < tail exactly when the claim stands
        if wealth_below >= doubled:
            below = min(below, _t_p(mean, se, g1, n, "below") / STRICT_SHARE)
        if wealth_above >= doubled:
            above = min(above, _t_p(mean, se, g1, n, "above") / STRICT_SHARE)
        side = "below" if below < tail and interval[1] >= 0 else "above" if above < tail and interval[0] <= 0 else None
    return RobustInterval(name, interval, min(1.0, below), min(1.0, above), int(nonzero), need, strict=strict,
                          strict_side=side)


def strict_t(n: int, tail: float) -> float:
    """The t quantile of the strict t-interval beside the betting interval: ``t_{1 - s tail, n-1}`` with
    s = ``STRICT_SHARE``."""
    return float(t_quantile(n - 1, 1.0 - STRICT_SHARE * tail))


def material_t(n: int, tail: float) -> float:
    """The t quantile the t branch reads a material claim (past -+margin, ``critical``) at: ``t_{1 - s tail, n-1}``
    with s = ``MATERIAL_SHARE``.

    A claim that a drop exceeds the margin is tested at the boundary -margin of a null that holds every shape
    of delta. There the t branch meets samples that missed the few queries carrying the mean: measured on the
    NFCorpus AP deltas of two BM25 settings (one query of +0.25 in a pool with sd 0.019, absent from 40 % of
    samples of 300, which are then 0.7 standard errors lower and look symmetric), the t branch called a true
    drop of exactly the margin critical in 4 % of samples against the 2.5 % promised. No reading of the sample
    can see a query it does not contain, so the material claim gets a fixed safety factor: half the per-side
    error (``benchmarks/stats_rule.py``, figure 2). The p-value route (interval below 0) keeps the full error."""
    return float(t_quantile(n - 1, 1.0 - MATERIAL_SHARE * tail))


def _t_p(mean: float, se: float, g1: float, n: int, side: str) -> float:
    """The p-value of the skew-corrected t test on one side: the least per-side error at which the interval's
    end (upper for ``below``, lower for ``above``) passes 0, so ``p < tail`` exactly when the interval decides.

    The end is ``mean + se (+-t + c(t))`` with the correction ``c(t) = SKEW_FACTOR g1 (2 t^2 + 1) / (6 sqrt(n))``
    where it widens that side (``skew_ends``: g1 > 0 for the upper end, g1 < 0 for the lower) and 0 where it
    would narrow it. It is monotone in t for |t| < 1.5 sqrt(n) / (SKEW_FACTOR |g1|) (which Cochran's rule
    keeps beyond 5); its root is found by bisection."""
    sign = 1.0 if side == "below" else -1.0
    k = SKEW_FACTOR * g1 if sign * g1 > 0 else 0.0  # only the widening correction (skew_ends)

    def end(t: float) -> float:  # increasing in t for below, decreasing for above
        return mean + se * (sign * t + k * (2.0 * t * t + 1.0) / (6.0 * math.sqrt(n)))

    # the end is monotone in t from -1.5 sqrt(n) / |k| on (its derivative 1 + 4 |k| t / (6 sqrt(n)) in the
    # deciding direction), so the search runs from just inside that point to 40; a symmetric bracket capped
    # the root, and so the p-value, where the correction is large (the strict t-interval reads
    # t_{1 - tail/10} on skewed samples)
    reach = min(40.0, 1.4 * math.sqrt(n) / abs(k)) if k else 40.0
    lo, hi = -reach, 40.0
    for _ in range(_BISECTION_STEPS):
        mid = 0.5 * (lo + hi)
        if sign * end(mid) < 0:  # the end has not passed 0 yet at this t: the root lies further out
            lo = mid
        else:
            hi = mid
    root = 0.5 * (lo + hi)  # the interval at t_{1-tail} decides when t_{1-tail} < root
    upper = t_upper_tail(root, n - 1) if root >= 0 else 1.0 - t_upper_tail(-root, n - 1)
    return float(min(1.0, max(0.0, upper)))


@dataclass(frozen=True)
class RobustReading:
    """Where the robust rule puts each of many delta vectors (arrays over the leading shape).

    ``method``: 0 = too few non-zero deltas, 1 = constant (the point), 2 = t-interval, 3 = betting,
    4 = no trustworthy interval (skewed, deltas outside [-1, 1]). ``below[k]`` / ``above[k]``: the upper
    bound lies below / the lower bound above the k-th of ``points`` (at the point 0, or the strict t-interval's
    claim, ``robust_interval``). ``material_below`` / ``material_above``
    (with ``material``, a margin M): the material interval (``RobustInterval.material``) lies below -M / above +M.
    """

    method: np.ndarray
    points: tuple[float, ...]
    below: tuple[np.ndarray, ...]
    above: tuple[np.ndarray, ...]
    cochran: np.ndarray
    material_below: np.ndarray | None = None
    material_above: np.ndarray | None = None


def read_robust(d: np.ndarray, tail: float, points: tuple[float, ...], *, t_crit: float,
                material: float | None = None) -> RobustReading:
    """The robust rule on delta vectors ``d`` (last axis), read at ``points`` (vectorised; module docstring),
    and, with ``material`` (a margin M), its material claims at -M and +M.

    ``t_crit`` is the t quantile ``t_{1-tail, n-1}`` (computed once by the caller)."""
    d = np.asarray(d, dtype=np.float64)
    n = d.shape[-1]
    method, nonzero, _moved, g1, needed = branch(d)
    mean = d.mean(axis=-1)
    sd = d.std(axis=-1, ddof=1) if n >= 2 else np.zeros(d.shape[:-1])
    se = sd / math.sqrt(max(n, 1))
    strict = (method == 3) & (nonzero >= STRICT_NONZERO) if n >= 2 else np.zeros(method.shape, bool)
    slo, shi = skew_ends(mean, se, np.where(strict, g1, 0.0), n, strict_t(n, tail)) if n >= 2 else (mean, mean)
    strict_below = strict_above = np.zeros(method.shape, bool)
    g1 = np.where(method == 2, g1, 0.0)
    lo, hi = skew_ends(mean, se, g1, n, t_crit)
    below, above = [], []
    bet = (method == 3) | (method == 1)
    bets = _bets(d[bet], tail) if bet.any() else None
    threshold = math.log(1.0 / tail)

    if bets is not None and strict.any():
        # the strict t-interval's one claim (robust_interval): the mean lies below 0 (above), where the betting
        # wealth against the same claim has at least doubled
        doubled = math.log(STRICT_WEALTH)
        strict_below, strict_above = np.zeros(method.shape, bool), np.zeros(method.shape, bool)
        strict_below[bet] = _wealth(bets, 0.0, "below") >= doubled
        strict_above[bet] = _wealth(bets, 0.0, "above") >= doubled
        strict_below &= strict & (shi < 0.0)
        strict_above &= strict & (slo > 0.0)

    def betting(b: np.ndarray, a: np.ndarray, p_below: float, p_above: float) -> None:
        if bets is not None:
            b[bet] = _wealth(bets, p_below, "below") >= threshold
            a[bet] = _wealth(bets, p_above, "above") >= threshold

    for p in points:
        b = np.where(method == 2, hi < p, False)
        a = np.where(method == 2, lo > p, False)
        betting(b, a, p, p)
        if p == 0.0:
            b |= strict_below
            a |= strict_above
        below.append(np.asarray(b, bool))
        above.append(np.asarray(a, bool))
    material_below = material_above = None
    if material is not None:
        mlo, mhi = skew_ends(mean, se, g1, n, material_t(n, tail)) if n >= 2 else (lo, hi)
        material_below = np.where(method == 2, mhi < -material, False)
        material_above = np.where(method == 2, mlo > material, False)
        betting(material_below, material_above, -material, material)
    return RobustReading(method, tuple(points), tuple(below), tuple(above), needed, material_below, material_above)
