"""Wilcoxon signed-rank test of paired deltas.

Rank |delta| (average ranks for ties) and sum the ranks of the positive deltas: W+ (the statistic
reported here, whatever the alternative; large W+ means the candidate scored higher). Under H0 each rank
carries either sign with probability 1/2.

**Zero deltas** (queries where both versions score the same, common in IR) are handled by a named rule:

* ``"wilcox"`` (default, as scipy): drop the zeros, then rank the rest (n counts non-zero deltas only);
* ``"pratt"``: rank all |delta| including the zeros, then leave the zeros' ranks out of W+ (Pratt 1959;
  uses the information that zeros are the smallest differences);
* ``"zsplit"``: rank all, and split each zero's rank half into W+ and half into W-.

**p-value** (``method="auto"``): chosen by the number of **non-zero** deltas (zeros carry no sign under
any zero rule, so they never make the exact distribution harder):

* exact null distribution of W+ when at most 50 deltas are non-zero, with or without ties: the signed
  scores are the doubled ranks (integers, since average ranks are multiples of 1/2), and the distribution
  of their positive sum is built by the shift algorithm (Streitberg & Roehmel 1986: one convolution per
  score). Without ties and zeros it is the classic table, identical to ``scipy.stats.wilcoxon``'s exact
  method;
* otherwise the normal approximation: z = (W+ - mu) / sigma with mu = n_r (n_r + 1) / 4 and
  sigma^2 = (n_r (n_r + 1)(2 n_r + 1) - sum(t^3 - t) / 2) / 24, where n_r counts the ranked values and
  the sums run over tie groups (Pratt subtracts the zeros' share from mu and sigma^2, Cureton 1967),
  without continuity correction unless ``correction=True``.

scipy's own ``auto`` counts zeros as a reason to approximate: with 5 non-zero deltas out of 300 it gives
p = 0.025 where the exact answer is 2 x 2^-5 = 0.0625.

Here n is the length of the delta vector including zeros, as in scipy. Degenerate cases: n < 2 and all
deltas zero give W+ = 0, p = 1. Constant non-zero deltas are one tie group; the test gives what its
definition gives (exact up to 50 of them: 2^(1-n) two-sided; the normal approximation beyond).
"""

from __future__ import annotations

import numpy as np

from evalops.errors import InputError
from evalops.stats._base import TestResult, prepare
from evalops.stats.distributions import norm_cdf

__all__ = ["ZERO_METHODS", "average_ranks", "shift_null", "signed_rank_null", "wilcoxon_test"]

ZERO_METHODS: tuple[str, ...] = ("wilcox", "pratt", "zsplit")
_EXACT_MAX_N = 50


def signed_rank_null(n: int) -> np.ndarray:
    """P(W+ = w) for w = 0 .. n(n+1)/2 with untied ranks 1..n: the exact null distribution.

    Counts subsets of {1..n} by their sum (dynamic programming), divided by 2^n.
    """
    counts = np.zeros(n * (n + 1) // 2 + 1)
    counts[0] = 1.0
    for k in range(1, n + 1):
        counts[k:] = counts[k:] + counts[:-k].copy()
    return counts / 2.0**n


def shift_null(scores: np.ndarray) -> np.ndarray:
    """P(S = s) for s = 0 .. sum(scores), S the sum of the integer ``scores`` each kept with probability 1/2.

    The shift algorithm: start from a point mass at 0 and, for each score k, average the distribution with
    itself shifted by k. Works in probabilities (halving at each step), so it never overflows.
    """
    scores = np.asarray(scores, dtype=np.int64)
    dist = np.zeros(int(scores.sum()) + 1)
    dist[0] = 1.0
    top = 0
    for k in scores.tolist():
        shifted = dist[: top + 1].copy()
        dist[: top + 1] *= 0.5
        dist[k : k + top + 1] += 0.5 * shifted
        top += k
    return dist


def _tied_exact_p(ranks: np.ndarray, positive: np.ndarray, alternative: str) -> float:
    """Exact p of W+ with tied (average) ranks of the non-zero deltas: the shift algorithm on doubled ranks."""
    scores = np.rint(2.0 * ranks).astype(np.int64)
    w2 = int(scores[positive].sum())
    cdf = np.cumsum(shift_null(scores))
    lo = float(cdf[w2])
    hi = float(1.0 - (cdf[w2 - 1] if w2 >= 1 else 0.0))
    if alternative == "less":
        return lo
    if alternative == "greater":
        return hi
    return float(min(1.0, 2.0 * min(lo, hi)))


def _exact_p(w_plus: float, n: int, alternative: str) -> float:
    pmf = signed_rank_null(n)
    cdf = np.cumsum(pmf)
    lo = cdf[int(np.ceil(w_plus))]  # P(W+ <= w)
    hi = 1.0 - (cdf[int(np.floor(w_plus)) - 1] if np.floor(w_plus) >= 1 else 0.0)  # P(W+ >= w)
    if alternative == "less":
        return float(lo)
    if alternative == "greater":
        return float(hi)
    return float(min(1.0, 2.0 * min(lo, hi)))


def average_ranks(values: np.ndarray) -> np.ndarray:
    """Ranks 1..n of ``values``, ties sharing the mean of their ranks (``scipy.stats.rankdata``'s default)."""
    order = np.argsort(values, kind="mergesort")
    ordered = values[order]
    starts = np.flatnonzero(np.r_[True, ordered[1:] != ordered[:-1]])  # the first position of each tie group
    ends = np.r_[starts[1:], len(values)]
    group_rank = (starts + 1 + ends) / 2.0  # the mean of ranks starts+1 .. ends
    ranks = np.empty(len(values), dtype=np.float64)
    ranks[order] = np.repeat(group_rank, ends - starts)
    return ranks


def wilcoxon_test(
    baseline: object,
    candidate: object,
    alternative: str = "two-sided",
    *,
    zero_method: str = "wilcox",
    correction: bool = False,
    method: str = "auto",
) -> TestResult:
    """Wilcoxon signed-rank test of ``candidate - baseline``. ``method``: auto, exact or approx."""
    if zero_method not in ZERO_METHODS:
        raise InputError(f"zero_method must be one of {', '.join(ZERO_METHODS)}; got {zero_method!r}")
    if method not in ("auto", "exact", "approx"):
        raise InputError(f"method must be auto, exact or approx; got {method!r}")
    ready = prepare("wilcoxon", baseline, candidate, alternative)
    if ready.early is not None:
        return ready.early
    b, c, shape = ready.baseline, ready.candidate, ready.going_on
    n = len(b)
    # constant deltas that differ only by rounding noise are one tie group, not n distinct ranks
    d = np.full(n, float(shape.mean)) if shape.constant else c - b
    zeros = d == 0
    if zero_method == "wilcox":
        d = d[~zeros]
        zeros = np.zeros(len(d), dtype=bool)
    ranks = average_ranks(np.abs(d))
    w_plus = float(ranks[d > 0].sum())
    if zero_method == "zsplit":
        w_plus += float(ranks[zeros].sum()) / 2.0
    n_ranked = len(d)
    n_zero = int(zeros.sum())
    # Tie groups for the variance: Pratt leaves the zeros out (Cureton 1967); zsplit keeps them as a group.
    tied = np.abs(d[~zeros]) if zero_method == "pratt" else np.abs(d)
    _, tie_counts = np.unique(tied, return_counts=True)
    label = f"zero_method={zero_method}"

    nonzero = d != 0
    n_nonzero = int(nonzero.sum())
    if method == "auto":
        method = "exact" if n_nonzero <= _EXACT_MAX_N else "approx"
    untied = n_zero == 0 and not bool((tie_counts > 1).any())

    # Null mean of W+: half the ranks that carry a sign (Pratt's zeros hold ranks 1..n_zero and carry none).
    mean_w = n_ranked * (n_ranked + 1) / 4.0
    if zero_method == "pratt":
        mean_w -= n_zero * (n_zero + 1) / 4.0
    if method == "exact" and untied:
        p = _exact_p(w_plus, n_ranked, alternative)
        how = f"exact ({label})"
    elif method == "exact":
        # zeros carry no sign: the exact distribution runs over the non-zero deltas' (tied) ranks only
        p = _tied_exact_p(ranks[nonzero], d[nonzero] > 0, alternative)
        how = f"exact with ties, shift algorithm over {n_nonzero} non-zero deltas ({label})"
    else:
        var: float = n_ranked * (n_ranked + 1) * (2 * n_ranked + 1)
        if zero_method == "pratt":
            var -= n_zero * (n_zero + 1) * (2 * n_zero + 1)
        var = (var - float((tie_counts**3 - tie_counts).sum()) / 2.0) / 24.0
        z = (w_plus - mean_w) / np.sqrt(var)
        if correction:
            sign = {"greater": 1.0, "less": -1.0}.get(alternative, np.sign(z))
            z -= sign * 0.5 / np.sqrt(var)
        if alternative == "two-sided":
            p = 2.0 * norm_cdf(-abs(z))
        elif alternative == "less":
            p = norm_cdf(z)
        else:
            p = norm_cdf(-z)
        how = f"normal approximation ({label}{', continuity correction' if correction else ''})"
    # W+ above its null mean points to a better candidate (for zsplit the mean includes the zeros' halves).
    direction = int(np.sign(w_plus - mean_w))
    note = None
    if shape.constant:
        note = f"all {n} deltas equal {float(shape.mean):.6g}: one tie group"
    return TestResult("wilcoxon", w_plus, float(min(1.0, p)), alternative, n, direction, how, note)
