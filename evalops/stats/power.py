"""Power and sample size of the paired t-test, exact through the noncentral t.

With n pairs and a true standardized effect d_z (mean delta / sd delta), the t statistic follows a
noncentral t with df = n - 1 and noncentrality lambda = d_z sqrt(n). At level alpha:

    two-sided: power = P(T > t_{1-alpha/2}) + P(T < -t_{1-alpha/2})
    one-sided: power = P(T > t_{1-alpha})              (the alternative points the way of the effect)

``effect`` is a magnitude |d_z|: for ``alternative="less"`` it is a drop of that size, for ``"greater"``
a gain of that size. ``paired_sample_size`` is the smallest n >= 2 whose exact power reaches the target;
``minimum_detectable_effect`` the smallest |d_z| that n pairs detect with the target power.

``two_sample_normal_sample_size`` is the textbook formula n = 2 ((z_{alpha/2} + z_beta) / d)^2 *per
group* for two independent groups with a known variance. It is here only to show what it gets wrong for
a paired design (it ignores the pairing and the t distribution); never use it to size a paired study.
"""

from __future__ import annotations

import math

import numpy as np

from evalops.errors import InputError
from evalops.stats._base import check_alternative, nct_cdf
from evalops.stats.distributions import find_root, norm_ppf

__all__ = ["minimum_detectable_effect", "paired_power", "paired_sample_size", "two_sample_normal_sample_size"]

_MAX_N = 10**9


def _check(alpha: float, alternative: str) -> None:
    check_alternative(alternative)
    if not 0.0 < alpha < 1.0:
        raise InputError(f"alpha must be between 0 and 1; got {alpha}")


def paired_power(effect: float | np.ndarray, n: int | np.ndarray, alpha: float = 0.05,
                 alternative: str = "two-sided") -> float | np.ndarray:
    """Exact power of the paired t-test for a true |d_z| = ``effect`` with ``n`` pairs (vectorised)."""
    _check(alpha, alternative)
    d = np.abs(np.asarray(effect, dtype=np.float64))
    n_arr = np.asarray(n, dtype=np.float64)
    if np.any(n_arr < 2):
        raise InputError("power needs at least 2 pairs")
    from scipy import stats  # vectorised over effects and sizes; `evalops power` alone comes here

    df = n_arr - 1.0
    nc = d * np.sqrt(n_arr)
    if alternative == "two-sided":
        crit = stats.t.ppf(1.0 - alpha / 2.0, df)
        power = (1.0 - nct_cdf(crit, df, nc)) + nct_cdf(-crit, df, nc)
    else:
        crit = stats.t.ppf(1.0 - alpha, df)
        power = 1.0 - nct_cdf(crit, df, nc)
    power = np.clip(power, 0.0, 1.0)
    return float(power) if power.ndim == 0 else power


def paired_sample_size(effect: float, power: float = 0.8, alpha: float = 0.05,
                       alternative: str = "two-sided") -> int:
    """Smallest number of pairs whose exact power for |d_z| = ``effect`` is at least ``power``."""
    _check(alpha, alternative)
    if not 0.0 < power < 1.0:
        raise InputError(f"power must be between 0 and 1; got {power}")
    if effect == 0 or not math.isfinite(effect):
        raise InputError(f"effect must be a finite non-zero d_z; got {effect}")
    lo, hi = 2, 2
    while paired_power(effect, hi, alpha, alternative) < power:
        lo, hi = hi, hi * 2
        if hi > _MAX_N:
            raise InputError(f"|d_z| = {abs(effect)} needs more than {_MAX_N} pairs for power {power}")
    if hi == 2:
        return 2
    while hi - lo > 1:  # invariant: power(lo) < target <= power(hi)
        mid = (lo + hi) // 2
        if paired_power(effect, mid, alpha, alternative) >= power:
            hi = mid
        else:
            lo = mid
    return hi


def minimum_detectable_effect(n: int, power: float = 0.8, alpha: float = 0.05,
                              alternative: str = "two-sided") -> float:
    """Smallest |d_z| that ``n`` pairs detect with the given exact power."""
    _check(alpha, alternative)
    if n < 2:
        raise InputError(f"need at least 2 pairs; got {n}")
    if not alpha < power < 1.0:
        raise InputError(f"power must be between alpha and 1; got {power}")
    hi = 1.0
    while paired_power(hi, n, alpha, alternative) < power:
        hi *= 2.0
    return find_root(lambda d: float(paired_power(d, n, alpha, alternative)) - power, 0.0, hi, xtol=1e-10, rtol=4 * 2.220446049250313e-16)


def two_sample_normal_sample_size(effect: float, power: float = 0.8, alpha: float = 0.05) -> int:
    """n per group = ceil(2 ((z_{1-alpha/2} + z_power) / d)^2): the two-sample normal formula (wrong for paired)."""
    if effect == 0 or not 0.0 < power < 1.0 or not 0.0 < alpha < 1.0:
        raise InputError("effect must be non-zero and power, alpha between 0 and 1")
    z = norm_ppf(1.0 - alpha / 2.0) + norm_ppf(power)
    return int(math.ceil(2.0 * (z / abs(effect)) ** 2))
