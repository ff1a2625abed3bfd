"""Paired Student t-test.

    t = mean(delta) / (sd(delta) / sqrt(n)),  sd with ddof=1,  df = n - 1,
    p from Student's t distribution (two-sided: 2 * P(T >= |t|); less: P(T <= t); greater: P(T >= t)).

Degenerate cases (see ``evalops.stats._base``):

* n < 2: t = 0, p = 1 (no test is possible).
* all deltas zero: t = 0, p = 1.
* constant non-zero deltas (sd = 0): t would be infinite and the t-test's limiting p-value is 0, which
  would call two identical drops "certain". evalops reports ``t = d_z * sqrt(n)`` with the capped d_z
  (``DZ_CAP``) and, as p, the exact sign-flip p-value of the same deltas (2^(1-n) two-sided, 2^-n
  one-sided in the direction of the shift, 1 against it): the smallest p any distribution-free paired
  test can give with n queries.

``paired_t`` is the vectorised kernel: it works on ``(..., n)`` arrays and tests every row at once
(simulations, the power benchmark). ``paired_t_test`` is the one-comparison front end.
"""

from __future__ import annotations

import numpy as np

from evalops.stats._base import DeltaShape, TestResult, as_pair, check_alternative, prepare, sign_flip_floor
from evalops.stats.distributions import t_cdf

__all__ = ["paired_t", "paired_t_test", "t_p_value"]


_FEW = 64  # up to this many values: the pure-Python t tail; more (simulations): scipy's vectorised one


def t_p_value(t: np.ndarray, df: np.ndarray | float, alternative: str) -> np.ndarray:
    """p-value of a t statistic with ``df`` degrees of freedom.

    A few values (one comparison's) come from :mod:`evalops.stats.distributions`, so that a comparison
    does not import scipy; arrays of simulations from ``scipy.special.stdtr``. The two agree to 1e-12.
    """
    t_arr, df_arr = np.broadcast_arrays(np.asarray(t, dtype=np.float64), np.asarray(df, dtype=np.float64))
    if t_arr.size <= _FEW:

        def cdf(x: np.ndarray) -> np.ndarray:
            return np.array([t_cdf(v, d) for v, d in zip(x.ravel().tolist(), df_arr.ravel().tolist())],
                            dtype=np.float64).reshape(x.shape)

        if alternative == "two-sided":
            return np.minimum(1.0, 2.0 * cdf(-np.abs(t_arr)))
        return cdf(t_arr) if alternative == "less" else cdf(-t_arr)
    from scipy import special

    p: np.ndarray
    if alternative == "two-sided":
        p = np.minimum(1.0, 2.0 * special.stdtr(df, -np.abs(t)))
    elif alternative == "less":
        p = special.stdtr(df, t)
    else:
        p = special.stdtr(df, -t)
    return p


def paired_t(baseline: object, candidate: object, alternative: str = "two-sided") -> tuple[np.ndarray, np.ndarray]:
    """Vectorised paired t-test along the last axis. Returns ``(t, p)`` arrays (numbers for 1-D input).

    Degenerate rows follow the module's conventions; rows with n < 2 give ``(0, 1)``.
    """
    check_alternative(alternative)
    b, c = as_pair(baseline, candidate)
    shape = DeltaShape.of(b, c)
    n = shape.n
    if n < 2:
        zeros = np.zeros(b.shape[:-1])
        return zeros + 0.0, zeros + 1.0
    dz = shape.dz()
    t = dz * np.sqrt(n)
    p = t_p_value(t, n - 1, alternative)
    p = np.where(shape.constant, sign_flip_floor(n, np.sign(shape.mean), alternative), p)
    t = np.where(shape.all_zero, 0.0, t)
    p = np.where(shape.all_zero, 1.0, p)
    return t[()], p[()]


def paired_t_test(baseline: object, candidate: object, alternative: str = "two-sided") -> TestResult:
    """Paired t-test of ``candidate - baseline`` (1-D aligned vectors)."""
    ready = prepare("t", baseline, candidate, alternative)  # rows at once: paired_t
    if ready.early is not None:
        return ready.early
    b, c, shape, n = ready.baseline, ready.candidate, ready.going_on, len(ready.baseline)
    t, p = paired_t(b, c, alternative)
    note = None
    if shape.constant:
        note = (
            f"all {n} deltas equal {float(shape.mean):.6g} (sd = 0): t uses the capped d_z and p is the exact "
            "sign-flip p-value"
        )
    return TestResult("t", float(t), float(p), alternative, n, int(np.sign(shape.mean)), f"student t, df={n - 1}", note)
