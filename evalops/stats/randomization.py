"""Paired randomization (sign-flip) test.

Under H0 "the two versions are exchangeable on every query", each delta is equally likely to have either
sign. The test statistic is the mean delta T = (1/n) sum(delta_i); its null distribution is that of
(1/n) sum(s_i * delta_i) over the 2^n sign vectors s in {-1, +1}^n.

    two-sided p = P(|T*| >= |T|),   less: P(T* <= T),   greater: P(T* >= T).

* **Exact** when 2^n <= ``n_resamples`` (``method="auto"``) or on request (n <= 24): every sign vector is
  enumerated once and p = count / 2^n.
* **Monte Carlo** otherwise: ``n_resamples`` random sign vectors, p = (count + 1) / (n_resamples + 1), so
  p is never 0 (Phipson & Smyth 2010). The Monte Carlo standard error of p is about
  sqrt(p (1 - p) / n_resamples).

Statistics that are equal up to floating-point rounding (within ``1e-9 * sum|delta|``) count as ties, so
discrete score distributions do not lose their ties to summation order.

**How it stays fast and bounded.** Split the n values into groups of 8 and tabulate, for each group, the
256 possible subset sums. A sign vector is then a row of random bytes, one per group, and its sum is 1
lookup per 8 queries: sum(s_i v_i) = 2 * sum_g table[g, byte_g] - sum(v). Sign vectors are drawn in
chunks of at most ``CHUNK_BYTES`` random bytes, and the table is read in slices that stay in cache.
Each chunk has its own child generator spawned from the caller's ``rng``, and the chunk size depends only
on n, so the p-value depends on (data, rng seed, n_resamples) and nothing else.
"""

from __future__ import annotations

import numpy as np

from evalops.errors import InputError
from evalops.stats._base import TestResult, check_alternative, in_chunks, prepare

__all__ = ["CHUNK_BYTES", "EXACT_MAX_N", "paired_randomization_test", "sign_flip_count"]

CHUNK_BYTES = 32 * 2**20
EXACT_MAX_N = 24
_BLOCK_GROUPS = 64  # 64 groups x 256 sums x 8 bytes = 128 KiB of table per slice: stays in cache
_TIE_RTOL = 1e-9
_BITS = ((np.arange(256)[:, None] >> np.arange(8)) & 1).astype(np.float64)  # (256, 8), bit j of byte


def _subset_sum_table(values: np.ndarray) -> np.ndarray:
    """``table[g, b]`` = sum of ``values[8g + j]`` over the bits j set in byte b (zero-padded)."""
    m = -(-len(values) // 8)
    padded = np.zeros(m * 8)
    padded[: len(values)] = values
    return padded.reshape(m, 8) @ _BITS.T


def _positive_sums(table: np.ndarray, patterns: np.ndarray) -> np.ndarray:
    """sum_g table[g, patterns[:, g]] for a (rows, m) uint8 array of bytes, read in cache-sized slices."""
    m = table.shape[0]
    out = np.zeros(patterns.shape[0])
    for g0 in range(0, m, _BLOCK_GROUPS):
        block = table[g0 : g0 + _BLOCK_GROUPS]
        offsets = np.arange(block.shape[0], dtype=np.intp) * 256
        out += block.ravel()[patterns[:, g0 : g0 + _BLOCK_GROUPS] + offsets].sum(axis=1)
    return out


def _exceeds(null: np.ndarray, observed: float, alternative: str, tol: float) -> int:
    if alternative == "two-sided":
        return int(np.count_nonzero(np.abs(null) >= abs(observed) - tol))
    if alternative == "less":
        return int(np.count_nonzero(null <= observed + tol))
    return int(np.count_nonzero(null >= observed - tol))


def _exact_patterns(start: int, stop: int, m: int) -> np.ndarray:
    k = np.arange(start, stop, dtype=np.uint64)
    shifts = (np.arange(m, dtype=np.uint64) * np.uint64(8))
    return ((k[:, None] >> shifts) & np.uint64(255)).astype(np.uint8)


def sign_flip_count(
    values: object,
    alternative: str = "two-sided",
    *,
    n_resamples: int = 10_000,
    method: str = "auto",
    rng: int | np.random.Generator | None = None,
    workers: int = 1,
) -> tuple[int, int, bool]:
    """Count sign vectors whose signed sum is at least as extreme as the observed ``sum(values)``.

    Returns ``(count, total, exact)``: ``total`` is 2^n when exact, else ``n_resamples``. ``method`` is
    ``"auto"``, ``"exact"`` or ``"monte_carlo"``. Monte Carlo needs ``rng`` (a seed or a Generator);
    ``workers`` threads share the chunks (the result does not depend on it).
    """
    check_alternative(alternative)
    v = np.asarray(values, dtype=np.float64).reshape(-1)
    n = len(v)
    if method not in ("auto", "exact", "monte_carlo"):
        raise InputError(f"method must be auto, exact or monte_carlo; got {method!r}")
    if n_resamples < 1:
        raise InputError(f"n_resamples must be at least 1; got {n_resamples}")
    exact = method == "exact" or (method == "auto" and n <= 62 and 2**n <= n_resamples)
    if exact and n > EXACT_MAX_N:
        raise InputError(f"exact enumeration of 2^{n} sign vectors is too large; use at most {EXACT_MAX_N} values "
                         "or method='monte_carlo'")
    table = _subset_sum_table(v)
    m = table.shape[0]
    total_v = float(v.sum())
    observed = 2.0 * float(table[:, 255].sum()) - total_v
    tol = _TIE_RTOL * float(np.abs(v).sum())
    rows = max(1, CHUNK_BYTES // max(m, 1))
    count = 0
    if exact:
        total = 2**n
        for start in range(0, total, rows):
            patterns = _exact_patterns(start, min(total, start + rows), m)
            count += _exceeds(2.0 * _positive_sums(table, patterns) - total_v, observed, alternative, tol)
        return count, total, True
    if rng is None:
        raise InputError("the Monte Carlo randomization test needs randomness: pass rng (a seed or a numpy Generator)")

    def chunk(child: np.random.Generator, start: int, size: int) -> int:
        raw = child.bit_generator.random_raw(-(-size * m // 8))
        patterns = raw.view(np.uint8)[: size * m].reshape(size, m)
        return _exceeds(2.0 * _positive_sums(table, patterns) - total_v, observed, alternative, tol)

    return sum(in_chunks(n_resamples, rows, rng, chunk, workers)), n_resamples, False


def paired_randomization_test(
    baseline: object,
    candidate: object,
    alternative: str = "two-sided",
    *,
    n_resamples: int = 10_000,
    method: str = "auto",
    rng: int | np.random.Generator | None = None,
    workers: int = 1,
) -> TestResult:
    """Sign-flip test of the mean delta (see the module docstring). ``statistic`` is the mean delta."""
    ready = prepare("randomization", baseline, candidate, alternative)
    if ready.early is not None:
        return ready.early
    d = ready.candidate - ready.baseline
    n = len(d)
    count, total, exact = sign_flip_count(d, alternative, n_resamples=n_resamples, method=method, rng=rng,
                                          workers=workers)
    if exact:
        p, how, resamples = count / total, f"exact over 2^{n} sign vectors", None
    else:
        p, how, resamples = (count + 1) / (total + 1), "monte carlo", total
    mean = float(d.mean())
    return TestResult(
        "randomization", mean, min(1.0, p), alternative, n, int(np.sign(mean)), how, n_resamples=resamples
    )
