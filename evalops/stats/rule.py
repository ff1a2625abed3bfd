"""The numbers the regression rule is built from: family-adjusted intervals, their power, and daily looks.

**Per-side error.** A comparison's interval of the mean delta is two-sided, at level ``1 - 2 * tail``:

* ``alternative="two-sided"``: ``tail = alpha / (2 m')``. A drop is declared when the upper bound is
  below 0, so a two-sided policy alarms on drops at alpha/2 (and on gains at alpha/2);
* ``alternative="less"`` / ``"greater"``: ``tail = alpha / m'`` (only one side is ever declared).

``m'`` is the family's divisor: ``m`` (the family size) under ``holm`` (Bonferroni intervals, which are
what a Holm family's simultaneous intervals are), and ``m / R`` under ``bh`` with R the number of the
family's Benjamini-Hochberg discoveries at alpha (at least 1): the false-coverage-rate adjusted level
``1 - R alpha / m`` of Benjamini & Yekutieli (2005).

**Power of the rule** (``rule_power``). With n pairs, true mean delta ``delta`` and sd ``sd``, the t-interval
``mean +- t_{1-tail, n-1} s / sqrt(n)`` gives (T' a noncentral t with df = n - 1):

* ``critical`` (whole interval below -margin): ``P(T' < -t*)``, noncentrality ``(delta + margin) sqrt(n) / sd``;
* ``regression`` (interval below 0, any severity from the interval): noncentrality ``delta sqrt(n) / sd``;
* ``no_change`` (two-sided: interval inside +-margin; one-sided ``less``: lower bound above -margin): the
  first by one-dimensional quadrature over the chi distribution of s, the second a noncentral t again.

These are exact for a normal delta under ``holm`` (any m) and under ``bh`` with m = 1. Under ``bh`` with
m > 1 the level depends on the other comparisons; ``rule_power`` then simulates the family with the other
m - 1 comparisons null and independent, and states the Monte Carlo standard error.

**Daily looks** (``spending_tail``). A comparison repeated on fresh data every day (production samples)
spends alpha over the looks: look k (1, 2, ...) is tested at ``alpha * 6 / (pi^2 k^2)``, whose sum over
every k is alpha. By the union bound the chance that any look of an unchanged version alarms is at most
alpha however long it is watched, with independent or dependent samples alike.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from evalops.errors import InputError
from evalops.stats._base import check_alternative
from evalops.stats.distributions import nct_cdf, norm_cdf, norm_ppf, t_quantile
from evalops.stats.correction import benjamini_hochberg

__all__ = [
    "OUTCOMES",
    "RulePower",
    "family_tail",
    "interval_level",
    "rule_power",
    "rule_sample_size",
    "spending_tail",
    "t_interval",
]

OUTCOMES: tuple[str, ...] = ("critical", "regression", "no_change")
_MAX_N = 10**7
_SIMULATIONS = 20_000


def family_tail(alpha: float, alternative: str, family_size: int = 1, correction: str = "holm",
                discoveries: int = 1) -> float:
    """The per-side error of one comparison's interval in a family (module docstring)."""
    check_alternative(alternative)
    if not 0.0 < alpha < 1.0:
        raise InputError(f"alpha must be between 0 and 1; got {alpha}")
    m = max(1, int(family_size))
    if correction == "holm":
        divisor = float(m)
    elif correction == "bh":
        divisor = m / float(min(m, max(1, int(discoveries))))
    else:
        raise InputError(f"correction must be holm or bh; got {correction!r}")
    sides = 2.0 if alternative == "two-sided" else 1.0
    return alpha / (sides * divisor)


def interval_level(tail: float) -> float:
    """The two-sided confidence level of an interval whose each side errs with probability ``tail``."""
    return 1.0 - 2.0 * tail


def t_interval(delta: float, sd: float, n: int, tail: float) -> tuple[float, float]:
    """``delta +- t_{1-tail, n-1} sd / sqrt(n)``; the point itself when sd = 0."""
    if n < 2:
        raise InputError("a t-interval needs at least 2 pairs")
    half = t_quantile(n - 1, 1.0 - tail) * sd / math.sqrt(n) if sd > 0 else 0.0
    return (delta - half, delta + half)


@dataclass(frozen=True)
class RulePower:
    """The probability of an outcome of the rule, how it was obtained, and its Monte Carlo error (or 0)."""

    power: float
    method: str
    mc_se: float = 0.0


def _check(n: int, sd: float, margin: float, outcome: str) -> None:
    if n < 2:
        raise InputError(f"the rule needs at least 2 pairs; got n = {n}")
    if not (sd > 0 and math.isfinite(sd)):
        raise InputError(f"sd must be a positive number (the sd of the per-query deltas); got {sd}")
    if not (margin > 0 and math.isfinite(margin)):
        raise InputError(f"margin must be a positive number in the measure's units; got {margin}")
    if outcome not in OUTCOMES:
        raise InputError(f"outcome must be one of {', '.join(OUTCOMES)}; got {outcome!r}")


def _exact(delta: float, sd: float, n: int, margin: float, tail: float, alternative: str, outcome: str) -> float:
    df = n - 1
    crit = t_quantile(df, 1.0 - tail)
    root = math.sqrt(n) / sd
    if outcome == "critical":
        if alternative == "greater":  # mirrored: whole interval above +margin
            return 1.0 - nct_cdf(crit, df, (delta - margin) * root)
        return nct_cdf(-crit, df, (delta + margin) * root)
    if outcome == "regression":
        if alternative == "greater":
            return 1.0 - nct_cdf(crit, df, delta * root)
        return nct_cdf(-crit, df, delta * root)
    if alternative == "less":  # non-inferiority: lower bound above -margin
        return 1.0 - nct_cdf(crit, df, (delta + margin) * root)
    if alternative == "greater":  # upper bound below +margin
        return nct_cdf(-crit, df, (delta - margin) * root)
    # two-sided equivalence: -margin + t* s/sqrt(n) < mean < margin - t* s/sqrt(n), mean ~ N(delta, sd^2/n),
    # s^2 (n-1)/sd^2 ~ chi2(df) independent of the mean
    se = sd / math.sqrt(n)

    def given(u: float) -> float:
        half = crit * sd * math.sqrt(u / df) / math.sqrt(n)
        if half >= margin:
            return 0.0
        return norm_cdf((margin - half - delta) / se) - norm_cdf((-margin + half - delta) / se)

    from scipy import integrate, stats  # only this outcome integrates; the rest of the rule needs no scipy

    u_max = df * (margin * math.sqrt(n) / (crit * sd)) ** 2  # beyond it the interval is wider than the margin
    dist = stats.chi2(df)
    value, _ = integrate.quad(lambda u: given(u) * dist.pdf(u), 0.0, u_max, limit=200, epsabs=1e-10)
    return float(min(1.0, max(0.0, value)))


def rule_power(delta: float, sd: float, n: int, margin: float, *, alpha: float = 0.05,
               alternative: str = "two-sided", family_size: int = 1, correction: str = "holm",
               outcome: str = "critical", simulations: int = _SIMULATIONS, seed: int = 0) -> RulePower:
    """The probability that the interval rule gives ``outcome`` for a true mean delta ``delta``.

    ``outcome``: ``critical`` (the whole interval past the margin, on the side of ``delta``'s sign for a
    two-sided policy), ``regression`` (interval below 0) or ``no_change`` (equivalence). Exact for holm and
    for a family of one (module docstring); simulated for bh families of m > 1, with ``mc_se`` set.
    """
    check_alternative(alternative)
    _check(n, sd, margin, outcome)
    side = alternative
    if alternative == "two-sided" and outcome != "no_change":
        side = "greater" if delta > 0 else "less"
    if correction == "holm" or family_size <= 1:
        tail = family_tail(alpha, alternative, family_size, "holm")
        return RulePower(_exact(delta, sd, n, margin, tail, side, outcome), "exact (noncentral t)")
    return _simulated(delta, sd, n, margin, alpha, alternative, side, family_size, outcome, simulations, seed)


def _simulated(delta: float, sd: float, n: int, margin: float, alpha: float, alternative: str, side: str,
               m: int, outcome: str, simulations: int, seed: int) -> RulePower:
    from scipy import special, stats

    rng = np.random.default_rng(seed)
    df = n - 1
    mean = rng.normal(delta, sd / math.sqrt(n), simulations)
    s = sd * np.sqrt(rng.chisquare(df, simulations) / df)
    t = mean / (s / math.sqrt(n))
    if alternative == "two-sided":
        p = 2.0 * special.stdtr(df, -np.abs(t))
    elif alternative == "less":
        p = special.stdtr(df, t)
    else:
        p = special.stdtr(df, -t)
    others = rng.uniform(size=(simulations, m - 1))  # the rest of the family: null, independent
    family = np.concatenate([p[:, None], others], axis=1)
    discoveries = np.array([(benjamini_hochberg(row) < alpha).sum() for row in family])
    sides = 2.0 if alternative == "two-sided" else 1.0
    tail = alpha * np.maximum(discoveries, 1) / (m * sides)
    half = stats.t.ppf(1.0 - tail, df) * s / math.sqrt(n)
    lo, hi = mean - half, mean + half
    if outcome == "critical":
        hit = lo > margin if side == "greater" else hi < -margin
    elif outcome == "regression":
        hit = lo > 0 if side == "greater" else hi < 0
    elif alternative == "less":
        hit = lo > -margin
    elif alternative == "greater":
        hit = hi < margin
    else:
        hit = (lo > -margin) & (hi < margin)
    power = float(hit.mean())
    se = math.sqrt(max(power * (1.0 - power), 0.25 / simulations) / simulations)
    return RulePower(power, f"simulation ({simulations} draws; the other {m - 1} comparisons null)", se)


def rule_sample_size(delta: float, sd: float, margin: float, *, power: float = 0.8, alpha: float = 0.05,
                     alternative: str = "two-sided", family_size: int = 1, correction: str = "holm",
                     outcome: str = "critical") -> int:
    """The smallest n >= 2 at which ``rule_power`` reaches ``power`` (bh families: the holm n, a safe bound).

    ``critical`` needs |delta| > margin; ``no_change`` needs |delta| < margin.
    """
    if not 0.0 < power < 1.0:
        raise InputError(f"power must be between 0 and 1; got {power}")
    _check(2, sd, margin, outcome)
    if outcome == "critical" and abs(delta) <= margin:
        raise InputError(f"a true delta of {delta:g} is not past the margin {margin:g}: no n makes it critical")
    if outcome == "no_change" and abs(delta) >= margin:
        raise InputError(f"a true delta of {delta:g} is not inside the margin {margin:g}: no n shows equivalence")
    if outcome == "regression" and delta == 0:
        raise InputError("a true delta of 0 is never a regression")

    def reaches(k: int) -> bool:
        return rule_power(delta, sd, k, margin, alpha=alpha, alternative=alternative, family_size=family_size,
                          correction="holm", outcome=outcome).power >= power

    # start from the normal approximation, which is within a few queries of the answer, then make it exact
    z = norm_ppf(1.0 - family_tail(alpha, alternative, family_size, "holm")) + norm_ppf(power)
    gap = abs(delta) - margin if outcome == "critical" else margin - abs(delta) if outcome == "no_change" else abs(delta)
    guess = max(2, int(math.ceil((z * sd / gap) ** 2)))
    if guess < _MAX_N:
        if reaches(guess):
            k = guess
            while k > 2 and reaches(k - 1) and guess - k < 8:
                k -= 1
            if k == 2 or guess - k < 8:
                return k
        else:
            k = guess + 1
            while k < guess + 8:
                if reaches(k):
                    return k
                k += 1
    lo, hi = 2, 2
    while not reaches(hi):
        lo, hi = hi, hi * 2
        if hi > _MAX_N:
            raise InputError(f"more than {_MAX_N} queries would be needed")
    if hi == 2:
        return 2
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if reaches(mid):
            hi = mid
        else:
            lo = mid
    return hi


def spending_tail(alpha: float, look: int, alternative: str = "two-sided") -> float:
    """The per-side error of look ``look`` (1, 2, ...) of a daily repeated comparison (module docstring)."""
    if look < 1:
        raise InputError(f"look must be 1 or more; got {look}")
    spent = alpha * 6.0 / (math.pi**2 * look**2)
    return spent / (2.0 if alternative == "two-sided" else 1.0)
