"""Power and sample size of the robust rule from a pilot of real per-query deltas, by simulation.

``rule_power`` and ``rule_sample_size`` assume normal deltas with a known sd; real deltas are sparse and
skewed, and the robust rule (``evalops.stats.robust``) pays for skew with width. ``pilot_power`` resamples
a pilot (the per-query deltas of a stored comparison, say), re-centred to a true mean of exactly
``delta``, and counts how often the default rule decides ``outcome``; ``pilot_sample_size`` searches the
smallest n whose simulated power reaches the target. Both state their Monte Carlo standard error. The same
seed gives the same draws at every n (common random numbers), so the search is stable.
"""

from __future__ import annotations

import math

import numpy as np

from evalops.errors import InputError
from evalops.metrics.student_t import t_quantile
from evalops.stats.robust import read_robust
from evalops.stats.rule import RulePower, family_tail

__all__ = ["pilot_power", "pilot_sample_size"]

_OUTCOMES = ("regression", "critical")
_MAX_N = 100_000


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

    lo, hi = 1, 10
    while at(hi).power < power:
        lo, hi = hi, hi * 2
        if hi > _MAX_N:
            raise InputError(f"more than {_MAX_N} queries would be needed")
    while hi - lo > 1:  # to the query: near the n where the t-interval takes over, power jumps steeply
        mid = (lo + hi) // 2
        if at(mid).power >= power:
            hi = mid
        else:
            lo = mid
    return hi, at(hi)
