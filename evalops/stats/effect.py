"""Effect sizes of a paired comparison.

* **Cohen's d_z** = mean(delta) / sd(delta), sd with ddof=1: the mean change in units of its own
  per-query spread. It is what the paired t-test and its power depend on (t = d_z * sqrt(n)).
  All deltas zero: 0. Constant non-zero deltas (sd = 0): ``sign(mean) * DZ_CAP``; every d_z is clipped
  to ``[-DZ_CAP, DZ_CAP]`` (see ``evalops.stats._base``). n < 2: undefined, ``None``.
* **Confidence interval of d_z**, exact under normal deltas: t = d_z sqrt(n) follows a noncentral t with
  df = n - 1 and noncentrality delta sqrt(n). The bounds are the noncentralities lambda_lo, lambda_hi
  with P(T <= t | lambda_lo) = 1 - alpha/2 and P(T <= t | lambda_hi) = alpha/2, divided by sqrt(n)
  (Steiger & Fouladi 1997, "pivoting the noncentral t"). Degenerate d_z give a point interval.
* **Hedges' correction**: g_z = J(df) d_z with J(df) = Gamma(df/2) / (sqrt(df/2) Gamma((df-1)/2)),
  df = n - 1, the exact small-sample bias factor (J(1) = 0, J -> 1 as n grows; ~1 - 3/(4 df - 1)).
* **Relative change** in percent: 100 * (candidate_mean - baseline_mean) / |baseline_mean|. It never
  divides by zero: when the baseline mean is 0 it is 0 if the candidate mean is also 0, and ``None``
  (undefined; read the absolute delta instead) otherwise.
* **Wins / ties / losses**: queries where the candidate scored higher / the same / lower (exact equality).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from evalops.errors import InputError
from evalops.stats._base import DZ_CAP, DeltaShape, as_pair
from evalops.stats.distributions import find_root, nct_cdf

__all__ = [
    "WinTieLoss",
    "cohens_dz",
    "dz_confidence_interval",
    "hedges_correction",
    "relative_change",
    "win_tie_loss",
]


def cohens_dz(baseline: object, candidate: object) -> np.ndarray | float | None:
    """d_z of ``candidate - baseline`` along the last axis; ``None`` for n < 2 (see the module docstring)."""
    b, c = as_pair(baseline, candidate)
    if b.shape[-1] < 2:
        return None
    dz = DeltaShape.of(b, c).dz()
    return float(dz) if dz.ndim == 0 else dz


def hedges_correction(n: int) -> float:
    """J(n - 1), the factor that turns d_z into the unbiased g_z. Defined for n >= 2."""
    if n < 2:
        raise InputError(f"Hedges' correction needs n >= 2; got {n}")
    df = n - 1.0
    if df == 1.0:  # Gamma(0) is infinite: J(1) = 0, as scipy's gammaln gives
        return 0.0
    return math.exp(math.lgamma(df / 2.0) - math.lgamma((df - 1.0) / 2.0)) / math.sqrt(df / 2.0)


def _noncentrality(t: float, df: float, target: float) -> float:
    """The noncentrality lambda with P(T <= t | df, lambda) = target (the cdf falls as lambda grows)."""

    def f(lam: float) -> float:
        return nct_cdf(t, df, lam) - target

    step = max(1.0, abs(t))
    lo, hi = t - step, t + step
    while f(lo) < 0.0:
        lo -= step
        step *= 2.0
    step = max(1.0, abs(t))
    while f(hi) > 0.0:
        hi += step
        step *= 2.0
    return find_root(f, lo, hi, xtol=1e-12, rtol=1e-12)


def dz_confidence_interval(dz: float, n: int, confidence: float = 0.95) -> tuple[float, float] | None:
    """Noncentral-t confidence interval of d_z from n pairs; ``None`` for n < 2.

    A capped d_z (constant deltas) or 0 from all-zero deltas gives the point interval (dz, dz).
    """
    if not 0.0 < confidence < 1.0:
        raise InputError(f"confidence must be between 0 and 1; got {confidence}")
    if n < 2:
        return None
    if abs(dz) >= DZ_CAP:
        return (float(dz), float(dz))
    df = n - 1.0
    root_n = np.sqrt(n)
    t = dz * root_n
    tail = (1.0 - confidence) / 2.0
    low = _noncentrality(t, df, 1.0 - tail) / root_n
    high = _noncentrality(t, df, tail) / root_n
    return (float(max(low, -DZ_CAP)), float(min(high, DZ_CAP)))


def relative_change(baseline_mean: float, candidate_mean: float) -> float | None:
    """100 * (candidate - baseline) / |baseline|; 0 when both are 0; ``None`` when only the baseline is 0."""
    if baseline_mean == 0.0:
        return 0.0 if candidate_mean == 0.0 else None
    return 100.0 * (candidate_mean - baseline_mean) / abs(baseline_mean)


@dataclass(frozen=True)
class WinTieLoss:
    wins: int
    ties: int
    losses: int


def win_tie_loss(baseline: object, candidate: object) -> WinTieLoss:
    """Counts of queries where the candidate is higher, equal, lower."""
    b, c = as_pair(baseline, candidate)
    return WinTieLoss(int(np.count_nonzero(c > b)), int(np.count_nonzero(c == b)), int(np.count_nonzero(c < b)))
