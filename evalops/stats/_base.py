"""Conventions every paired test and effect size in ``evalops.stats`` shares.

* **Direction.** ``delta = candidate - baseline`` per query; a positive delta means the candidate scored
  higher. Every measure evalops computes is higher-is-better, so a negative mean delta is a drop.
* **Alternatives.** ``"two-sided"``; ``"less"`` (H1: the candidate is worse, mean delta < 0);
  ``"greater"`` (H1: the candidate is better).
* **Degenerate deltas** are detected with a tolerance, because deltas computed as ``c - b`` carry
  rounding noise: ``tol = 64 * eps * max(|b|, |c|)``. Deltas whose spread (max - min) is within ``tol`` are
  *constant*; constant deltas whose mean is within ``tol`` of 0 are *all zero*. Each test and effect size
  states what it returns in those cases; none returns NaN.
* **Effect-size cap.** With constant non-zero deltas, sd(delta) = 0 and d_z = mean/sd is infinite. evalops
  reports ``d_z = sign(mean) * DZ_CAP`` (1,000 standard deviations) instead, and clips every d_z to
  ``[-DZ_CAP, DZ_CAP]`` so that it is always a finite number that JSON and databases can store.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Literal, TypeVar

import numpy as np

from evalops.errors import InputError

__all__ = [
    "ALTERNATIVES",
    "Alternative",
    "DZ_CAP",
    "DeltaShape",
    "Prepared",
    "TestResult",
    "as_pair",
    "check_alternative",
    "in_chunks",
    "nct_cdf",
    "prepare",
    "sign_flip_floor",
]

Alternative = Literal["two-sided", "less", "greater"]
ALTERNATIVES: tuple[str, ...] = ("two-sided", "less", "greater")

DZ_CAP = 1000.0

T = TypeVar("T")

# Rounding noise of c - b is at most ~eps * max(|b|, |c|) per query; 64x leaves room for upstream arithmetic.
_TOLERANCE_ULPS = 64.0


def check_alternative(alternative: str) -> str:
    if alternative not in ALTERNATIVES:
        raise InputError(f"alternative must be one of {', '.join(ALTERNATIVES)}; got {alternative!r}")
    return alternative


def as_pair(baseline: object, candidate: object) -> tuple[np.ndarray, np.ndarray]:
    """Two equally shaped float64 arrays of finite scores (pairs along the last axis)."""
    try:
        b = np.asarray(baseline, dtype=np.float64)
        c = np.asarray(candidate, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise InputError(f"per-query scores must be numbers ({exc})") from None
    if b.shape != c.shape:
        raise InputError(
            f"baseline and candidate must be aligned vectors of the same shape; got {b.shape} and {c.shape} "
            "(align them by query id with evalops.stats.align)"
        )
    if b.ndim == 0:
        raise InputError("baseline and candidate must be vectors of per-query scores, not single numbers")
    bad = ~(np.isfinite(b) & np.isfinite(c))
    if bad.any():
        where = np.argwhere(bad)[0]
        raise InputError(
            f"per-query scores must be finite numbers; position {tuple(int(i) for i in where)} holds "
            f"baseline={b[tuple(where)]!r}, candidate={c[tuple(where)]!r}"
        )
    return b, c


@dataclass(frozen=True)
class DeltaShape:
    """Summary of ``delta = candidate - baseline`` along the last axis (arrays, or numbers for 1-D input).

    ``sd`` uses ddof=1 and is 0 for constant deltas and for n < 2; ``tol`` is the degeneracy tolerance.
    """

    n: int
    mean: np.ndarray
    sd: np.ndarray
    constant: np.ndarray
    all_zero: np.ndarray
    tol: np.ndarray

    @classmethod
    def of(cls, baseline: np.ndarray, candidate: np.ndarray) -> DeltaShape:
        b, c = baseline, candidate
        d = c - b
        n = d.shape[-1]
        scale = np.maximum(np.abs(b).max(axis=-1, initial=0.0), np.abs(c).max(axis=-1, initial=0.0))
        tol = _TOLERANCE_ULPS * np.finfo(np.float64).eps * scale
        if n == 0:
            zeros = np.zeros(d.shape[:-1])
            true = np.ones(d.shape[:-1], dtype=bool)
            return cls(0, zeros, zeros, true, true, tol)
        mean = d.mean(axis=-1)
        spread = d.max(axis=-1) - d.min(axis=-1)
        constant = spread <= tol
        all_zero = constant & (np.abs(mean) <= tol)
        if n >= 2:
            sd = np.where(constant, 0.0, d.std(axis=-1, ddof=1))
        else:
            sd = np.zeros_like(mean)
        mean = np.where(all_zero, 0.0, mean)
        return cls(n, mean, sd, constant, all_zero, tol)

    def dz(self) -> np.ndarray:
        """Cohen's d_z = mean/sd (ddof=1), 0 when all deltas are zero, ``±DZ_CAP`` for constant deltas."""
        with np.errstate(divide="ignore", invalid="ignore"):
            raw = np.where(self.constant, np.sign(self.mean) * DZ_CAP, self.mean / np.where(self.sd > 0, self.sd, 1.0))
        return np.clip(raw, -DZ_CAP, DZ_CAP)


def sign_flip_floor(n: int | np.ndarray, direction: np.ndarray | float, alternative: str) -> np.ndarray:
    """The exact sign-flip p-value of n constant non-zero deltas: the smallest p any paired test can give.

    Two-sided: 2^(1-n) (the observed signs and their mirror image). One-sided: 2^-n when the deltas point
    the way the alternative looks, 1 when they point the other way.
    """
    n = np.asarray(n, dtype=np.float64)
    direction = np.asarray(direction, dtype=np.float64)
    if alternative == "two-sided":
        return np.minimum(1.0, np.exp2(1.0 - n))
    want = -1.0 if alternative == "less" else 1.0
    return np.where(direction == want, np.exp2(-n), 1.0)


@dataclass(frozen=True)
class TestResult:
    """The outcome of one paired test.

    ``test`` is ``"t"``, ``"wilcoxon"`` or ``"randomization"``; ``method`` says how the p-value was
    obtained (``"student t"``, ``"exact"``, ``"normal approximation"``, ``"monte carlo"``, ...);
    ``direction`` is the sign the statistic points to (-1: candidate worse, 0: none, +1: better);
    ``note`` explains a degenerate case when one applied.
    """

    __test__ = False  # not a pytest test class

    test: str
    statistic: float
    p_value: float
    alternative: str
    n: int
    direction: int
    method: str
    note: str | None = None
    n_resamples: int | None = None


@dataclass(frozen=True)
class Prepared:
    """What every one-comparison test starts from: the checked vectors and their delta shape.

    ``early`` is the defined result of a degenerate input (n < 2, all deltas zero); when it is set the
    test returns it as is.
    """

    baseline: np.ndarray
    candidate: np.ndarray
    shape: DeltaShape | None
    early: TestResult | None

    @property
    def going_on(self) -> DeltaShape:
        """``shape``, for a test that goes on (``early`` is None): :func:`prepare` sets it for every n >= 2."""
        if self.shape is None:
            raise RuntimeError("a test with fewer than 2 pairs returns `early` before it needs the delta shape")
        return self.shape


def prepare(test: str, baseline: object, candidate: object, alternative: str) -> Prepared:
    """Check the inputs of a one-comparison test and settle the degenerate cases every test shares."""
    check_alternative(alternative)
    b, c = as_pair(baseline, candidate)
    if b.ndim != 1:
        raise InputError(f"the {test} test takes two 1-D vectors of per-query scores; got shape {b.shape}")
    n = len(b)
    if n < 2:
        return Prepared(b, c, None, too_few(test, n, alternative))
    shape = DeltaShape.of(b, c)
    return Prepared(b, c, shape, all_zero(test, n, alternative) if shape.all_zero else None)


def too_few(test: str, n: int, alternative: str) -> TestResult:
    """Fewer than 2 pairs: no test is possible; p = 1 (no evidence against 'no difference')."""
    return TestResult(
        test, 0.0, 1.0, alternative, n, 0, "none",
        note=f"only {n} paired quer{'y' if n == 1 else 'ies'}; a paired test needs at least 2 (p reported as 1)",
    )


def all_zero(test: str, n: int, alternative: str) -> TestResult:
    """Every delta is zero: statistic 0, p = 1."""
    return TestResult(test, 0.0, 1.0, alternative, n, 0, "none", note="all deltas are zero (p = 1)")


def nct_cdf(t: object, df: object, nc: object) -> np.ndarray:
    """P(T <= t) for a noncentral t, never NaN.

    scipy's noncentral t (Boost) returns NaN for some far-tail arguments (e.g. t = -1.97, df = 299,
    nc = 13.67, where the true value is ~1e-40). There the tail is vanishingly small, so NaN is replaced
    by the complement of the survival function, or by 0 / 1 according to the side of the mode.
    """
    from scipy import stats

    t, df, nc = np.broadcast_arrays(*(np.asarray(x, dtype=np.float64) for x in (t, df, nc)))
    cdf = np.asarray(stats.nct.cdf(t, df, nc), dtype=np.float64)
    bad = np.isnan(cdf)
    if bad.any():
        alt = 1.0 - np.asarray(stats.nct.sf(t[bad], df[bad], nc[bad]), dtype=np.float64)
        side = np.where(t[bad] < nc[bad], 0.0, 1.0)
        cdf[bad] = np.where(np.isnan(alt), side, alt)
    return np.clip(cdf, 0.0, 1.0)


def in_chunks(
    total: int,
    rows: int,
    rng: int | Sequence[int] | np.random.Generator,
    work: Callable[[np.random.Generator, int, int], T],
    workers: int = 1,
) -> list[T]:
    """Run ``work(child_generator, start, size)`` over fixed chunks of ``rows`` out of ``total`` draws.

    Each chunk gets its own child generator spawned from ``rng``, so the results depend on the seed and on
    ``rows`` only, never on ``workers``. At most ``workers`` chunks are in memory at once; numpy releases
    the GIL while drawing and gathering, so threads use several cores.
    """
    if workers < 1:
        raise InputError(f"workers must be at least 1; got {workers}")
    children = np.random.default_rng(rng).spawn(-(-total // rows))
    jobs = [(child, i * rows, min(rows, total - i * rows)) for i, child in enumerate(children)]
    if workers == 1 or len(jobs) == 1:
        return [work(*job) for job in jobs]
    from concurrent.futures import ThreadPoolExecutor

    with ThreadPoolExecutor(max_workers=workers) as pool:
        return list(pool.map(lambda job: work(*job), jobs))
