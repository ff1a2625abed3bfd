"""The regression rule: from the evidence of one comparison and a policy to a decision in words.

``decide(evidence, policy)`` returns ``regression``, ``improvement``, ``no_change`` or ``inconclusive``
with the reasons. With p the *adjusted* p-value (``Evidence.p_adjusted``, the raw p for a family of one):

1. n < 2: **inconclusive** (no paired test is possible).
2. All deltas zero: **no_change**.
3. p < alpha (significant):
   * the test's direction disagrees with the sign of the mean delta (possible with Wilcoxon):
     **inconclusive**;
   * |d_z| >= ``min_effect`` AND |delta| >= ``min_delta``: **regression** (delta < 0) or
     **improvement** (delta > 0). Both conditions are required: significance alone flags tiny changes on
     large query sets, a large effect alone flags noise on small ones;
   * otherwise **no_change**: real but smaller than the policy cares about.
4. p >= alpha (not significant):
   * with no minimum set (both 0): **no_change**;
   * if the confidence intervals still reach a material change (d_z CI beyond ±``min_effect`` and delta
     CI beyond ±``min_delta``, on the sides the alternative looks at): **inconclusive**, with the number
     of queries that would give 80% power for ``min_effect``;
   * otherwise **no_change** (a material change is ruled out at this confidence).

One-sided policies only look one way: with ``alternative="less"`` an improvement is never declared.
The confidence level of the intervals is 1 - alpha.
"""

from __future__ import annotations

import numbers
from dataclasses import asdict, dataclass
from functools import lru_cache

from evalops.errors import InputError
from evalops.stats._base import ALTERNATIVES, sign_flip_floor
from evalops.stats.bootstrap import CI_METHODS
from evalops.stats.correction import CORRECTIONS
from evalops.stats.power import paired_sample_size
from evalops.stats.wilcoxon import ZERO_METHODS

__all__ = ["DECISIONS", "TESTS", "Decision", "Evidence", "Policy", "PolicyError", "decide"]

DECISIONS: tuple[str, ...] = ("regression", "improvement", "no_change", "inconclusive")
TESTS: tuple[str, ...] = ("t", "wilcoxon", "randomization")
_TEST_NAMES = {"t": "paired t-test", "wilcoxon": "Wilcoxon signed-rank", "randomization": "randomization test"}
_CORRECTION_NAMES = {"holm": "Holm", "bh": "Benjamini-Hochberg"}


class PolicyError(InputError):
    """A comparison policy with an invalid setting."""


@dataclass(frozen=True)
class Policy:
    """Everything that decides a comparison; it is stored with every result.

    alpha: significance level for the adjusted p-value (CI level is 1 - alpha).
    alternative: ``two-sided``, ``less`` (only look for drops) or ``greater`` (only gains).
    min_effect: minimum |d_z| for a regression or improvement.
    min_delta: minimum |mean delta|, in the measure's own units (e.g. 0.01 nDCG).
    correction: ``holm`` or ``bh`` across every measure x version compared together.
    test: ``t``, ``wilcoxon`` or ``randomization``; zero_method: Wilcoxon's zero rule.
    ci_method: bootstrap CI of the delta, ``bca`` or ``percentile``; n_resamples: bootstrap resamples
    and Monte Carlo sign vectors; seed: the seed of both (a run's seed comes from its logical date).
    """

    alpha: float = 0.05
    alternative: str = "two-sided"
    min_effect: float = 0.2
    min_delta: float = 0.0
    correction: str = "holm"
    test: str = "t"
    zero_method: str = "wilcox"
    ci_method: str = "bca"
    n_resamples: int = 10_000
    seed: int = 0

    def __post_init__(self) -> None:
        for name in ("n_resamples", "seed"):  # numpy integers (a seed from a date, say) become plain ints
            value = getattr(self, name)
            if isinstance(value, numbers.Integral) and not isinstance(value, bool):
                object.__setattr__(self, name, int(value))
        for name in ("alpha", "min_effect", "min_delta"):
            value = getattr(self, name)
            if isinstance(value, numbers.Real) and not isinstance(value, bool):
                object.__setattr__(self, name, float(value))
        checks = [
            (0.0 < self.alpha < 1.0, f"alpha must be between 0 and 1; got {self.alpha}"),
            (self.alternative in ALTERNATIVES, f"alternative must be one of {', '.join(ALTERNATIVES)}; "
                                               f"got {self.alternative!r}"),
            (self.min_effect >= 0.0, f"min_effect is a minimum |d_z| and must be >= 0; got {self.min_effect}"),
            (self.min_delta >= 0.0, f"min_delta is a minimum |delta| and must be >= 0; got {self.min_delta}"),
            (self.correction in CORRECTIONS, f"correction must be one of {', '.join(CORRECTIONS)}; "
                                             f"got {self.correction!r}"),
            (self.test in TESTS, f"test must be one of {', '.join(TESTS)}; got {self.test!r}"),
            (self.zero_method in ZERO_METHODS, f"zero_method must be one of {', '.join(ZERO_METHODS)}; "
                                               f"got {self.zero_method!r}"),
            (self.ci_method in CI_METHODS, f"ci_method must be one of {', '.join(CI_METHODS)}; "
                                           f"got {self.ci_method!r}"),
            (isinstance(self.n_resamples, int) and self.n_resamples >= 100,
             f"n_resamples must be an integer >= 100; got {self.n_resamples!r}"),
            (isinstance(self.seed, int) and self.seed >= 0, f"seed must be a non-negative integer; got {self.seed!r}"),
        ]
        for ok, message in checks:
            if not ok:
                raise PolicyError(message)

    @property
    def confidence(self) -> float:
        return 1.0 - self.alpha

    def to_dict(self) -> dict[str, object]:
        return asdict(self)


@dataclass(frozen=True)
class Evidence:
    """What the rule reads from one comparison.

    ``direction`` is where the test statistic points (-1 worse, 0, +1 better); ``degenerate`` is
    ``"all_zero"``, ``"constant"`` or ``None``; ``family_size`` is how many comparisons the correction
    spanned. Intervals may be ``None`` when they were not computed.
    """

    n: int
    delta: float | None
    effect_size_dz: float | None
    p_value: float
    p_adjusted: float | None = None
    direction: int = 0
    delta_ci: tuple[float, float] | None = None
    effect_size_ci: tuple[float, float] | None = None
    degenerate: str | None = None
    family_size: int = 1
    test: str = "t"


@dataclass(frozen=True)
class Decision:
    label: str
    reasons: tuple[str, ...]


def _g(x: float) -> str:
    return f"{x:.3g}"


def _significance_reason(ev: Evidence, policy: Policy, p: float, significant: bool) -> str:
    family = (
        f"{_CORRECTION_NAMES[policy.correction]}-adjusted over {ev.family_size} comparisons"
        if ev.family_size > 1 else "a single comparison, nothing to adjust"
    )
    name = "adjusted p" if ev.family_size > 1 else "p"
    return (
        f"{name} = {_g(p)} {'<' if significant else '>='} alpha = {policy.alpha:g} "
        f"({_TEST_NAMES.get(ev.test, ev.test)}, {policy.alternative}; {family})"
    )


def _size_reasons(ev: Evidence, policy: Policy) -> tuple[bool, list[str]]:
    dz, delta = abs(ev.effect_size_dz or 0.0), abs(ev.delta or 0.0)
    big_dz, big_delta = dz >= policy.min_effect, delta >= policy.min_delta
    reasons = [f"|d_z| = {_g(dz)} {'>=' if big_dz else '<'} minimum {policy.min_effect:g}"]
    if policy.min_delta > 0:
        reasons.append(f"|delta| = {_g(delta)} {'>=' if big_delta else '<'} minimum {policy.min_delta:g}")
    return big_dz and big_delta, reasons


def _sides(alternative: str) -> tuple[int, ...]:
    return {"two-sided": (-1, 1), "less": (-1,), "greater": (1,)}[alternative]


def _material_change_possible(ev: Evidence, policy: Policy) -> bool:
    """Do the intervals still reach a change as large as both minimums, on a side the policy looks at?"""
    if ev.effect_size_ci is None or ev.delta_ci is None:
        return True
    for side in _sides(policy.alternative):
        dz_edge = ev.effect_size_ci[0] if side < 0 else ev.effect_size_ci[1]
        delta_edge = ev.delta_ci[0] if side < 0 else ev.delta_ci[1]
        if side * dz_edge >= policy.min_effect and side * delta_edge >= policy.min_delta:
            return True
    return False


@lru_cache(maxsize=256)
def _queries_for_80_percent(min_effect: float, alpha: float, alternative: str) -> int:
    # cached: the same policy asks the same question for every measure of every run
    return paired_sample_size(min_effect, 0.8, alpha, alternative)


def _constant_floor(n: int, alternative: str) -> float:
    """The exact sign-flip p-value of n equal deltas pointing the way the alternative looks."""
    return float(sign_flip_floor(n, -1.0 if alternative == "less" else 1.0, alternative))


def decide(evidence: Evidence, policy: Policy) -> Decision:
    """Apply the regression rule (module docstring) to one comparison."""
    ev = evidence
    if ev.n < 2:
        return Decision("inconclusive", (
            f"only {ev.n} paired quer{'y' if ev.n == 1 else 'ies'}; a paired comparison needs at least 2",))
    if ev.degenerate == "all_zero":
        return Decision("no_change", (f"both versions score the same on all {ev.n} queries (every delta is 0)",))
    p = ev.p_adjusted if ev.p_adjusted is not None else ev.p_value
    significant = p < policy.alpha
    reasons = [_significance_reason(ev, policy, p, significant)]
    if ev.degenerate == "constant":
        reasons.append(f"every query changed by the same {_g(ev.delta or 0.0)} (sd = 0; d_z is capped)")
    sign = (ev.delta > 0) - (ev.delta < 0) if ev.delta else 0
    material, size_reasons = _size_reasons(ev, policy)
    reasons.extend(size_reasons)
    worse = "the candidate scores lower"
    better = "the candidate scores higher"

    if significant:
        if ev.direction != 0 and sign != 0 and ev.direction != sign:
            reasons.append(
                f"the test points to a {'gain' if ev.direction > 0 else 'drop'} but the mean delta is "
                f"{'positive' if sign > 0 else 'negative'}; the evidence disagrees with itself"
            )
            return Decision("inconclusive", tuple(reasons))
        if material and sign < 0:
            reasons.append(f"{worse}, significantly and by at least the minimum effect: a regression")
            return Decision("regression", tuple(reasons))
        if material and sign > 0:
            reasons.append(f"{better}, significantly and by at least the minimum effect: an improvement")
            return Decision("improvement", tuple(reasons))
        reasons.append("the difference is statistically significant but smaller than the policy's minimums")
        return Decision("no_change", tuple(reasons))

    if policy.alternative != "two-sided" and sign != 0 and sign != (-1 if policy.alternative == "less" else 1):
        looked = "drops" if policy.alternative == "less" else "gains"
        reasons.append(f"{better if sign > 0 else worse}, but the one-sided policy only looks for {looked}")
        return Decision("no_change", tuple(reasons))
    if policy.min_effect == 0 and policy.min_delta == 0:
        reasons.append("no significant difference")
        return Decision("no_change", tuple(reasons))
    if ev.degenerate == "constant":
        need = next(k for k in range(2, 64) if _constant_floor(k, policy.alternative) < policy.alpha)
        reasons.append(
            f"not significant: with every delta equal, {ev.n} queries can give at best p = "
            f"{_g(_constant_floor(ev.n, policy.alternative))}; at least {need} are needed"
        )
        return Decision("inconclusive", tuple(reasons))
    if _material_change_possible(ev, policy):
        need = _queries_for_80_percent(policy.min_effect, policy.alpha, policy.alternative) if policy.min_effect else 0
        if ev.n < need:
            why = (f"{ev.n} queries are too few to tell (about {need} give 80% power to detect "
                   f"|d_z| = {policy.min_effect:g})")
        else:
            why = "the observed change is borderline"
        reasons.append(
            f"not significant, but the {policy.confidence:.0%} confidence intervals still include a change as "
            f"large as the minimums: {why}"
        )
        return Decision("inconclusive", tuple(reasons))
    reasons.append(
        f"no significant difference, and the {policy.confidence:.0%} confidence intervals rule out a change as "
        "large as the minimums"
    )
    return Decision("no_change", tuple(reasons))
