"""Wilcoxon signed-rank test of paired deltas.

Rank |delta| (average ranks for ties) and sum the ranks of the positive deltas: W+ (the statistic
reported here, whatever the alternative; large W+ means the candidate scored higher). Under H0 each rank
carries either sign with probability 1/2.

**Zero deltas** (queries where both versions score the same, common in IR) are handled by a named rule:

* ``"wilcox"`` (default, as scipy): drop the zeros, then rank the rest (n counts non-zero deltas only);
* ``"pratt"``: rank all |delta| including the zeros, then leave the zeros' ranks out of W+ (Pratt 1959;
  uses the information that zeros are the smallest differences);
* ``"zsplit"``: rank all, and split each zero's rank half into W+ and half into W-.

**p-value** (``method="auto"``, the same choices as ``scipy.stats.wilcoxon`` 1.17):

* exact null distribution of W+ when n <= 50 and there are neither ties nor zeros;
* exact sign-flip enumeration of the signed ranks when there are ties or zeros and n <= 13;
* otherwise the normal approximation: z = (W+ - mu) / sigma with mu = n_r (n_r + 1) / 4 and
  sigma^2 = (n_r (n_r + 1)(2 n_r + 1) - sum(t^3 - t) / 2) / 24, where n_r counts the ranked values and
  the sums run over tie groups (Pratt subtracts the zeros' share from mu and sigma^2, Cureton 1967),
  without continuity correction unless ``correction=True``.

Here n is the length of the delta vector including zeros, as in scipy. Degenerate cases: n < 2 and all
deltas zero give W+ = 0, p = 1. Constant non-zero deltas are one tie group; the test gives what its
definition gives (exact enumeration up to n = 13: 2^(1-n) two-sided; the normal approximation beyond).
"""

from __future__ import annotations

import numpy as np
from scipy import special, stats

from evalops.errors import InputError
from evalops.stats._base import TestResult, prepare
from evalops.stats.randomization import sign_flip_count

__all__ = ["ZERO_METHODS", "signed_rank_null", "wilcoxon_test"]

ZERO_METHODS: tuple[str, ...] = ("wilcox", "pratt", "zsplit")
_EXACT_MAX_N = 50
_ENUMERATE_MAX_N = 13


def signed_rank_null(n: int) -> np.ndarray:
    """P(W+ = w) for w = 0 .. n(n+1)/2 with untied ranks 1..n: the exact null distribution.

    Counts subsets of {1..n} by their sum (dynamic programming), divided by 2^n.
    """
    counts = np.zeros(n * (n + 1) // 2 + 1)
    counts[0] = 1.0
    for k in range(1, n + 1):
        counts[k:] = counts[k:] + counts[:-k].copy()
    return counts / 2.0**n


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
    b, c, shape = ready.baseline, ready.candidate, ready.shape
    n = len(b)
    # constant deltas that differ only by rounding noise are one tie group, not n distinct ranks
    d = np.full(n, float(shape.mean)) if shape.constant else c - b
    zeros = d == 0
    any_zero = bool(zeros.any())  # scipy's auto rule looks at zeros even when "wilcox" drops them
    if zero_method == "wilcox":
        d = d[~zeros]
        zeros = np.zeros(len(d), dtype=bool)
    ranks = stats.rankdata(np.abs(d))
    w_plus = float(ranks[d > 0].sum())
    if zero_method == "zsplit":
        w_plus += float(ranks[zeros].sum()) / 2.0
    n_ranked = len(d)
    n_zero = int(zeros.sum())
    # Tie groups for the variance: Pratt leaves the zeros out (Cureton 1967); zsplit keeps them as a group.
    tied = np.abs(d[~zeros]) if zero_method == "pratt" else np.abs(d)
    _, tie_counts = np.unique(tied, return_counts=True)
    has_ties = bool((tie_counts > 1).any()) or n_zero > 0
    label = f"zero_method={zero_method}"

    if method == "auto":
        if n <= _EXACT_MAX_N and not has_ties and not any_zero:
            method = "exact"
        elif n <= _ENUMERATE_MAX_N:
            method = "enumerate"
        else:
            method = "approx"
    elif method == "exact" and has_ties:
        method = "enumerate"

    # Null mean of W+: half the ranks that carry a sign (Pratt's zeros hold ranks 1..n_zero and carry none).
    mean_w = n_ranked * (n_ranked + 1) / 4.0
    if zero_method == "pratt":
        mean_w -= n_zero * (n_zero + 1) / 4.0
    if method == "exact":
        p = _exact_p(w_plus, n_ranked, alternative)
        how = f"exact ({label})"
    elif method == "enumerate":
        # Exact with ties or zeros: enumerate the sign vectors of the signed ranks (zeros carry no sign).
        signed = np.where(d > 0, ranks, np.where(d < 0, -ranks, 0.0))
        count, total, _ = sign_flip_count(signed, alternative, method="exact")
        p = count / total
        how = f"exact sign-flip enumeration with ties ({label})"
    else:
        var = n_ranked * (n_ranked + 1) * (2 * n_ranked + 1)
        if zero_method == "pratt":
            var -= n_zero * (n_zero + 1) * (2 * n_zero + 1)
        var = (var - float((tie_counts**3 - tie_counts).sum()) / 2.0) / 24.0
        z = (w_plus - mean_w) / np.sqrt(var)
        if correction:
            sign = {"greater": 1.0, "less": -1.0}.get(alternative, np.sign(z))
            z -= sign * 0.5 / np.sqrt(var)
        if alternative == "two-sided":
            p = 2.0 * special.ndtr(-abs(z))
        elif alternative == "less":
            p = special.ndtr(z)
        else:
            p = special.ndtr(-z)
        how = f"normal approximation ({label}{', continuity correction' if correction else ''})"
    # W+ above its null mean points to a better candidate (for zsplit the mean includes the zeros' halves).
    direction = int(np.sign(w_plus - mean_w))
    note = None
    if shape.constant:
        note = f"all {n} deltas equal {float(shape.mean):.6g}: one tie group"
    return TestResult("wilcoxon", w_plus, float(min(1.0, p)), alternative, n, direction, how, note)
