"""Power and sample size of the robust rule from a pilot of real per-query deltas, by simulation.

``rule_power`` and ``rule_sample_size`` assume normal deltas with a known sd; real deltas are sparse and
skewed, and the robust rule (``evalops.stats.robust``) pays for skew with width. ``pilot_power`` resamples
a pilot (the per-query deltas of a stored comparison, say), re-centred to a true mean of exactly
``delta``, and counts how often the default rule decides ``outcome``; ``pilot_sample_size`` searches the
smallest n whose simulated power reaches the target. Both state their Monte Carlo standard error. The same
seed gives the same draws at every n (common random numbers), so the search is stable.

**The pilot's own uncertainty.** A pilot of 50 queries is a sample: its n for 80 % is itself a guess, off
by far more than the Monte Carlo error (on the real pools a 50-query pilot's n ranged over 105-301 where 192
were needed). ``pilot_sample_size_range`` carries it: it draws ``resamples`` bootstrap pilots (the pilot's
queries drawn again with replacement), finds each one's n, and reports the range between their
``(1 - level) / 2`` and ``(1 + level) / 2`` quantiles beside the pilot's own n: where the truth lies for the
pilots the data could have been. The sd, the skew and the share of queries that changed all move with the
resample, and the skew and that share (not the sd) set the n of the robust rule on skewed measures. A
bootstrap pilot cannot hold a rarer or larger delta than the pilot, so the spread of its n understates the
spread over real pilots (measured on the real pools: a 90 % range of bootstrap n covered the needed n in
under half of the pilots of a skewed RR@10 pool); the range is therefore widened to the n at the pilot sd's
own bootstrap bounds (the same level, 2,000 resamples), since n scales with the variance at a fixed shape.
A pilot with fewer than ``MIN_NONZERO`` changed queries says nothing of how large or how rare the changes
are, in either direction: its range has no upper end, and its lower end is at most ``STRICT_NONZERO`` (20),
the n from which the strict t-interval can read a drop whose deltas differ; its own n simulates (nearly)
constant drops, which only the betting interval reads, and overstated the n of a pool whose few large
changes spread the deltas (measured on the P@10 pool of ``benchmarks/stats_power.py``: pilots without a
changed query asked for about 250 queries where the pool needs 82).

**An upper bound on the sd** (:func:`sd_upper_bound`): the sd of a sample's deltas, raised to a one-sided
upper confidence bound of the variance from its own fourth moment (the normal approximation of the
sample variance, ``se(s^2) = s^2 sqrt((kurtosis - 1) / n)``, which widens with heavy tails). An inconclusive
comparison's hint ("about N queries would decide it", ``evalops.stats.compare``) is computed at that bound,
so that the n it quotes delivers the power it promises for the comparisons that quote it, not only for
those whose sample happened to show the sd.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from evalops.errors import InputError
from evalops.stats.distributions import norm_ppf
from evalops.stats.robust import MIN_NONZERO, STRICT_NONZERO, read_robust
from evalops.stats.rule import RulePower, family_tail
from evalops.stats.student_t import t_quantile

__all__ = ["PilotRange", "pilot_power", "pilot_sample_size", "pilot_sample_size_range", "sd_upper_bound"]

_OUTCOMES = ("regression", "critical")
_MAX_N = 100_000
_SD_RESAMPLES = 2000


def _pilot(deltas: object) -> np.ndarray:
    d = np.asarray(deltas, dtype=np.float64).reshape(-1)
    if len(d) < 2 or not np.all(np.isfinite(d)):
        raise InputError(f"a pilot needs at least 2 finite per-query deltas; got {len(d)}")
    if np.abs(d).max() > 1.0:
        raise InputError("pilot deltas must lie in [-1, 1] (differences of measures in [0, 1])")
    return d


def pilot_power(deltas: object, delta: float, n: int, margin: float, *, alpha: float = 0.05,
                alternative: str = "two-sided", family_size: int = 1, outcome: str = "regression",
                simulations: int = 2000, seed: int = 0) -> RulePower:
    """The share of simulated comparisons of n queries that the default rule calls ``outcome`` (a drop:
    ``regression``, the default alert: interval below 0 and not inside the margin; ``critical``, below
    -margin) when the deltas are the pilot's shape with a true mean of ``delta`` (< 0); the decision is
    ``decide``'s on the robust interval (``_drops``)."""
    pilot = _pilot(deltas)
    if outcome not in _OUTCOMES:
        raise InputError(f"outcome must be one of {', '.join(_OUTCOMES)}; got {outcome!r}")
    if not delta < 0:
        raise InputError(f"delta must be a drop (< 0); got {delta}")
    if n < 2:
        raise InputError(f"n must be at least 2; got {n}")
    if alternative not in ("two-sided", "less"):
        raise InputError(f"a drop is only declared under alternative two-sided or less; got {alternative!r}")
    tail = family_tail(alpha, alternative, family_size, "holm")
    rng = np.random.default_rng(seed)
    shaped = pilot - pilot.mean() + delta
    draws = np.clip(shaped[rng.integers(0, len(shaped), (simulations, n))], -1.0, 1.0)
    hit = _drops(draws, tail, margin, alternative, outcome)
    power = float(hit.mean())
    se = math.sqrt(max(power * (1.0 - power), 0.25 / simulations) / simulations)
    return RulePower(power, f"simulation of the robust rule ({simulations} draws from a pilot of {len(pilot)} "
                            "deltas)", se)


def _drops(draws: np.ndarray, tail: float, margin: float, alternative: str, outcome: str) -> np.ndarray:
    """Which rows the default rule (``decide`` on the robust interval) calls a ``critical`` drop, or a
    ``regression`` of either severity. As in ``decide``: a critical drop first (the whole material interval,
    ``evalops.stats.robust.material_t``, below -margin); then equivalence (inside the margin; for constant
    deltas, every query moved by less than the margin), which is ``no_change`` even when the interval lies
    below 0; then a significant drop. Rows without an interval (too few non-zero deltas, unbounded) never alert."""
    reading = read_robust(draws, tail, (-margin, 0.0, margin), t_crit=t_quantile(draws.shape[-1] - 1, 1.0 - tail),
                          material=margin)
    below, above = reading.below, reading.above
    critical = reading.material_below
    assert critical is not None  # read_robust reads the material interval when given ``material``
    if outcome == "critical":
        return critical
    inside = above[0] if alternative == "less" else above[0] & below[2]
    equivalent = np.where(reading.method == 1, np.abs(draws.mean(axis=-1)) < margin, inside)
    return critical | (below[1] & ~equivalent)


def pilot_sample_size(deltas: object, delta: float, margin: float, *, power: float = 0.8, alpha: float = 0.05,
                      alternative: str = "two-sided", family_size: int = 1, outcome: str = "regression",
                      simulations: int = 2000, seed: int = 0) -> tuple[int, RulePower]:
    """The smallest n whose ``pilot_power`` reaches ``power`` (searched to the query: where the deltas are
    skewed, the robust rule's power climbs steeply around the n from which the t-interval decides, by several
    points per query), and that power."""
    if not 0.0 < power < 1.0:
        raise InputError(f"power must be between 0 and 1; got {power}")

    def at(k: int) -> RulePower:
        return pilot_power(deltas, delta, k, margin, alpha=alpha, alternative=alternative,
                           family_size=family_size, outcome=outcome, simulations=simulations, seed=seed)

    n = _smallest_n(lambda k: at(k).power >= power, 10)
    return n, at(n)


def _smallest_n(reaches: Callable[[int], bool], start: int, within: float = 0.0) -> int:
    """The smallest n >= 2 that ``reaches`` the target, bracketed from ``start`` (doubling up or halving down)
    and then bisected to the query (``within``: to that share of n, an n that reaches it)."""
    hi = max(2, int(start))
    if reaches(hi):
        lo = hi // 2
        while lo >= 2 and reaches(lo):
            hi, lo = lo, lo // 2
        lo = max(lo, 1)  # 1: below any n (never evaluated)
    else:
        lo, hi = hi, hi * 2
        while not reaches(hi):
            lo, hi = hi, hi * 2
            if hi > _MAX_N:
                raise InputError(f"more than {_MAX_N} queries would be needed")
    while hi - lo > max(1.0, within * hi):  # to the query: near the n where the t-interval takes over, power
        mid = (lo + hi) // 2                 # jumps steeply
        if reaches(mid):
            hi = mid
        else:
            lo = mid
    return hi


@dataclass(frozen=True)
class PilotRange:
    """The n for ``power`` from a pilot with the pilot's own uncertainty (``pilot_sample_size_range``):
    ``n`` and ``at_n`` the pilot's own answer; ``low``/``high`` the ``level`` range of the n of ``resamples``
    bootstrap pilots, widened to the n at the sd's bootstrap bounds (``high`` is ``None`` when more than
    ``MAX_N`` queries would be needed, or when the pilot has fewer than ``MIN_NONZERO`` changed queries, which
    ``note`` then says: such a pilot says nothing of how large the rare changes are, and its ``low`` is then
    at most ``STRICT_NONZERO``);
    ``simulations`` per n of each bootstrap pilot."""

    n: int
    at_n: RulePower
    low: int
    high: int | None
    level: float
    resamples: int
    simulations: int
    note: str | None = None


MAX_N = _MAX_N


def pilot_sample_size_range(deltas: object, delta: float, margin: float, *, power: float = 0.8,
                            alpha: float = 0.05, alternative: str = "two-sided", family_size: int = 1,
                            outcome: str = "regression", simulations: int = 2000, level: float = 0.9,
                            resamples: int = 20, seed: int = 0) -> PilotRange:
    """``pilot_sample_size`` and the range of n the pilot's own sampling error allows (module docstring):
    the ``level`` quantile range of the n of ``resamples`` bootstrap pilots, each searched to 2 % of its n with
    ``max(200, simulations // 4)`` simulated comparisons per n, widened to ``n (sd bound / sd)^2`` at the
    ``level`` bootstrap bounds of the pilot's sd."""
    if not 0.0 < level < 1.0:
        raise InputError(f"level must be between 0 and 1; got {level}")
    if resamples < 2:
        raise InputError(f"resamples must be at least 2; got {resamples}")
    pilot = _pilot(deltas)
    n, at_n = pilot_sample_size(pilot, delta, margin, power=power, alpha=alpha, alternative=alternative,
                                family_size=family_size, outcome=outcome, simulations=simulations, seed=seed)
    sims = max(200, simulations // 4)
    rng = np.random.default_rng([seed, 1])
    found: list[float] = []
    for _ in range(resamples):
        boot = pilot[rng.integers(0, len(pilot), len(pilot))]

        def reaches(k: int, b: np.ndarray = boot) -> bool:
            return pilot_power(b, delta, k, margin, alpha=alpha, alternative=alternative, family_size=family_size,
                               outcome=outcome, simulations=sims, seed=seed).power >= power

        try:
            found.append(float(_smallest_n(reaches, n, within=0.02)))
        except InputError:  # this resample needs more than MAX_N queries
            found.append(math.inf)
    quantiles = [(1.0 - level) / 2.0, (1.0 + level) / 2.0]
    low, high = np.quantile(np.array(found), quantiles, method="inverted_cdf")
    # and the n at the sd's own bootstrap bounds: n scales with the variance at a fixed shape
    sd = float(pilot.std(ddof=1))
    if sd > 0:
        sds = pilot[rng.integers(0, len(pilot), (_SD_RESAMPLES, len(pilot)))].std(axis=1, ddof=1)
        sd_low, sd_high = np.quantile(sds, quantiles)
        low = min(low, math.floor(n * (sd_low / sd) ** 2))
        high = max(high, math.ceil(n * (sd_high / sd) ** 2))
    high = math.inf if high > _MAX_N else high
    note = None
    changed = int(np.count_nonzero(pilot))
    if changed < MIN_NONZERO:
        # nothing is known of the changes the pilot missed: they may spread the deltas, from which the strict
        # t-interval reads a drop from STRICT_NONZERO queries on, or not (the pilot's own, constant-drop n)
        high = math.inf
        low = min(low, STRICT_NONZERO)
        note = (f"only {changed} of the pilot's {len(pilot)} queries changed: it says nothing of how large or how "
                f"rare the changes are, so no number of queries is an upper end and any from {STRICT_NONZERO} on "
                "may do; take a larger pilot")
    return PilotRange(n, at_n, max(2, int(min(low, n))), None if math.isinf(high) else int(max(high, n)), level,
                      resamples, sims, note)


def sd_upper_bound(deltas: object, confidence: float = 0.9) -> float:
    """A one-sided ``confidence`` upper bound on the sd of the deltas (module docstring): sqrt(s^2 (1 + z
    sqrt((kurtosis - 1) / n))), kurtosis = m4 / m2^2 of the sample (at least 1)."""
    d = np.asarray(deltas, dtype=np.float64).reshape(-1)
    if len(d) < 2 or not np.all(np.isfinite(d)):
        raise InputError(f"an sd bound needs at least 2 finite deltas; got {len(d)}")
    if not 0.5 <= confidence < 1.0:
        raise InputError(f"confidence must be in [0.5, 1); got {confidence}")
    var = float(d.var(ddof=1))
    c = d - d.mean()
    m2 = float(np.mean(c**2))
    kurtosis = float(np.mean(c**4)) / m2**2 if m2 > 0 else 1.0
    return math.sqrt(var * (1.0 + norm_ppf(confidence) * math.sqrt(max(kurtosis - 1.0, 0.0) / len(d))))
