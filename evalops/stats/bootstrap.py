"""Paired bootstrap confidence interval of the mean delta.

Resample the n query deltas with replacement ``n_resamples`` times and take each resample's mean
(the bootstrap distribution theta*_1..B; the queries stay paired because whole deltas are resampled).

* ``"percentile"``: the alpha/2 and 1 - alpha/2 quantiles of theta* (linear interpolation).
* ``"bca"`` (bias-corrected and accelerated, Efron & Tibshirani 1993, eq. 14.10 / 15.36):
  z0 = Phi^-1(prop), prop = (#{theta* < theta} + #{theta* <= theta}) / (2B);
  a = sum(u^3) / (6 (sum(u^2))^1.5) with the jackknife deviations u_i of the mean, which for the mean
  are proportional to delta_i - mean (so a = skewness-based, computed in closed form);
  the interval is the quantiles Phi(z0 + (z0 + z)/(1 - a (z0 + z))) for z = Phi^-1(alpha/2),
  Phi^-1(1 - alpha/2). This is exactly ``scipy.stats.bootstrap(method="BCa")`` given the same theta*.

Degenerate cases: n = 0 gives no interval (``None``); n = 1 or constant deltas (within the rounding
tolerance of ``evalops.stats._base``) give the point interval [mean, mean], since every resample has the
same mean. When every theta* lies on one side of the estimate (z0 infinite), ``prop`` is clipped to
[1/(2B), 1 - 1/(2B)] so the interval stays defined.

Resamples are drawn in chunks of at most ``CHUNK_BYTES`` of indices, each chunk from its own child of the
caller's generator, so memory stays bounded and the result depends only on (data, seed, n_resamples).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from evalops.errors import InputError
from evalops.stats._base import DeltaShape, in_chunks
from evalops.stats.distributions import norm_cdf, norm_ppf

__all__ = ["CI_METHODS", "CHUNK_BYTES", "Interval", "bootstrap_interval", "bootstrap_means", "paired_bootstrap_ci"]

CI_METHODS: tuple[str, ...] = ("bca", "percentile")
CHUNK_BYTES = 32 * 2**20
_CACHE_BYTES = 2**20


@dataclass(frozen=True)
class Interval:
    """A confidence interval ``[low, high]`` at ``confidence`` by ``method``."""

    low: float
    high: float
    confidence: float
    method: str
    n_resamples: int | None = None


def bootstrap_means(
    deltas: object, n_resamples: int, rng: int | Sequence[int] | np.random.Generator | None, workers: int = 1
) -> np.ndarray:
    """The bootstrap distribution of the mean: ``n_resamples`` means of n deltas drawn with replacement.

    ``workers`` threads share the chunks; the result does not depend on it.
    """
    d = np.asarray(deltas, dtype=np.float64).reshape(-1)
    n = len(d)
    if n == 0:
        raise InputError("cannot bootstrap an empty vector of deltas")
    if n_resamples < 1:
        raise InputError(f"n_resamples must be at least 1; got {n_resamples}")
    if rng is None:
        raise InputError("the bootstrap needs randomness: pass rng (a seed or a numpy Generator)")
    index_type = np.uint32 if n < 2**32 else np.uint64
    # indices + gathered values: (4 or 8) + 8 bytes per cell
    rows = max(1, CHUNK_BYTES // (n * (np.dtype(index_type).itemsize + 8)))
    out = np.empty(n_resamples)

    # Within a chunk, rows go through in cache-sized blocks: drawing, gathering and averaging ~1 MiB at a
    # time keeps the work out of main memory, which is what bounds it otherwise.
    block = max(1, _CACHE_BYTES // (n * (np.dtype(index_type).itemsize + 8)))

    def chunk(child: np.random.Generator, start: int, size: int) -> None:
        for first in range(start, start + size, block):
            rows = min(block, start + size - first)
            idx = child.integers(0, n, size=(rows, n), dtype=index_type)
            out[first : first + rows] = d[idx].mean(axis=1)

    in_chunks(n_resamples, rows, rng, chunk, workers)
    return out


def _acceleration(d: np.ndarray) -> float:
    dev = d - d.mean()
    ss = float(np.sum(dev**2))
    if ss == 0.0:
        return 0.0
    # Jackknife values of the mean are (n*mean - d_i)/(n-1); their deviations are proportional to -dev,
    # and the jackknife acceleration sum(U^3)/(6 sum(U^2)^1.5) with U = mean_jack - theta_(i) is scale free.
    scale: float = ss**1.5
    return float(np.sum(dev**3)) / (6.0 * scale)


def bootstrap_interval(
    deltas: object, means: np.ndarray, confidence: float = 0.95, method: str = "bca"
) -> Interval:
    """The interval of ``method`` from a bootstrap distribution ``means`` of ``mean(deltas)``."""
    if method not in CI_METHODS:
        raise InputError(f"CI method must be one of {', '.join(CI_METHODS)}; got {method!r}")
    if not 0.0 < confidence < 1.0:
        raise InputError(f"confidence must be between 0 and 1; got {confidence}")
    d = np.asarray(deltas, dtype=np.float64).reshape(-1)
    means = np.asarray(means, dtype=np.float64)
    theta = float(d.mean())
    lo_q, hi_q = (1.0 - confidence) / 2.0, 1.0 - (1.0 - confidence) / 2.0
    if method == "bca":
        b = len(means)
        prop: float = (np.count_nonzero(means < theta) + np.count_nonzero(means <= theta)) / (2.0 * b)
        prop = min(max(prop, 1.0 / (2 * b)), 1.0 - 1.0 / (2 * b))
        z0 = norm_ppf(prop)
        a = _acceleration(d)
        qs = []
        for z in (norm_ppf(lo_q), norm_ppf(hi_q)):
            num = z0 + z
            qs.append(norm_cdf(z0 + num / (1.0 - a * num)))
        lo_q, hi_q = qs
    low, high = np.quantile(means, [lo_q, hi_q])
    return Interval(float(low), float(high), confidence, method, len(means))


def paired_bootstrap_ci(
    baseline: object,
    candidate: object,
    *,
    confidence: float = 0.95,
    method: str = "bca",
    n_resamples: int = 10_000,
    rng: int | Sequence[int] | np.random.Generator | None = None,
    workers: int = 1,
) -> Interval | None:
    """Bootstrap CI of mean(candidate - baseline). ``None`` for n = 0; a point interval when deltas are constant."""
    b = np.asarray(baseline, dtype=np.float64).reshape(-1)
    c = np.asarray(candidate, dtype=np.float64).reshape(-1)
    if b.shape != c.shape:
        raise InputError(f"baseline and candidate must be aligned vectors; got lengths {len(b)} and {len(c)}")
    if method not in CI_METHODS:
        raise InputError(f"CI method must be one of {', '.join(CI_METHODS)}; got {method!r}")
    d = c - b
    if len(d) == 0:
        return None
    shape = DeltaShape.of(b, c)
    if shape.constant:  # within rounding noise: every resample has the same mean
        mean = float(shape.mean)
        return Interval(mean, mean, confidence, method, None)
    means = bootstrap_means(d, n_resamples, rng, workers)
    return bootstrap_interval(d, means, confidence, method)
