"""The full comparison record of one measure, and the decision across many.

``compare(paired, measure=..., policy=...)`` runs the policy's test, the bootstrap CI of the mean
delta, the effect sizes and the win/tie/loss count on one aligned pair of per-query vectors, and decides
it as a family of one. ``adjust_and_decide(comparisons)`` then corrects the p-values across every
measure x version compared in the same run (``policy.correction``) and decides each one again.

Undefined quantities are ``None`` (JSON ``null``), never NaN:

* n = 0: means, delta and every interval are ``None``; n = 1: the delta is defined, its interval,
  d_z, g_z and their interval are not. Both decide ``inconclusive`` with p = 1.
* relative change: ``None`` when the baseline mean is 0 and the candidate mean is not.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field, replace

import numpy as np

from evalops.stats._base import DeltaShape, TestResult, as_pair
from evalops.stats.align import Paired
from evalops.stats.bootstrap import paired_bootstrap_ci
from evalops.stats.correction import adjust_p_values
from evalops.stats.decision import Evidence, Policy, PolicyError, decide
from evalops.stats.effect import dz_confidence_interval, hedges_correction, relative_change, win_tie_loss
from evalops.stats.randomization import paired_randomization_test
from evalops.stats.ttest import paired_t_test
from evalops.stats.wilcoxon import wilcoxon_test

__all__ = ["WORST_QUERIES", "Comparison", "QueryChange", "adjust_and_decide", "compare", "run_test"]

WORST_QUERIES = 10


@dataclass(frozen=True)
class QueryChange:
    query_id: str
    baseline: float
    candidate: float
    delta: float


@dataclass(frozen=True)
class Comparison:
    """One measure of one candidate against the baseline. ``to_dict`` is the stable JSON record."""

    measure: str
    baseline_name: str
    candidate_name: str
    n: int
    baseline_mean: float | None
    candidate_mean: float | None
    delta: float | None
    delta_ci_low: float | None
    delta_ci_high: float | None
    relative_change: float | None
    test: str
    test_method: str
    statistic: float
    p_value: float
    p_adjusted: float
    effect_size_dz: float | None
    effect_size_ci: tuple[float, float] | None
    effect_size_gz: float | None
    wins: int
    ties: int
    losses: int
    decision: str
    reasons: tuple[str, ...]
    worst_queries: tuple[QueryChange, ...]
    direction: int
    degenerate: str | None
    family_size: int
    policy: Policy = field(repr=False)
    notes: tuple[str, ...] = ()

    def evidence(self) -> Evidence:
        delta_ci = None if self.delta_ci_low is None else (self.delta_ci_low, self.delta_ci_high)
        return Evidence(
            n=self.n, delta=self.delta, effect_size_dz=self.effect_size_dz, p_value=self.p_value,
            p_adjusted=self.p_adjusted, direction=self.direction, delta_ci=delta_ci,  # type: ignore[arg-type]
            effect_size_ci=self.effect_size_ci, degenerate=self.degenerate, family_size=self.family_size,
            test=self.test,
        )

    def to_dict(self) -> dict[str, object]:
        """The JSON record (plain Python types; ``None`` for undefined values)."""
        return {
            "measure": self.measure,
            "baseline": self.baseline_name,
            "candidate": self.candidate_name,
            "n": self.n,
            "baseline_mean": self.baseline_mean,
            "candidate_mean": self.candidate_mean,
            "delta": self.delta,
            "delta_ci_low": self.delta_ci_low,
            "delta_ci_high": self.delta_ci_high,
            "relative_change": self.relative_change,
            "test": self.test,
            "test_method": self.test_method,
            "statistic": self.statistic,
            "p_value": self.p_value,
            "p_adjusted": self.p_adjusted,
            "effect_size_dz": self.effect_size_dz,
            "effect_size_ci": None if self.effect_size_ci is None else list(self.effect_size_ci),
            "effect_size_gz": self.effect_size_gz,
            "wins": self.wins,
            "ties": self.ties,
            "losses": self.losses,
            "decision": self.decision,
            "reasons": list(self.reasons),
            "worst_queries": [
                {"query_id": q.query_id, "baseline": q.baseline, "candidate": q.candidate, "delta": q.delta}
                for q in self.worst_queries
            ],
            "notes": list(self.notes),
        }


def run_test(baseline: np.ndarray, candidate: np.ndarray, policy: Policy,
             rng: int | np.random.Generator | None, workers: int = 1) -> TestResult:
    """The policy's paired test on aligned vectors."""
    if policy.test == "t":
        return paired_t_test(baseline, candidate, policy.alternative)
    if policy.test == "wilcoxon":
        return wilcoxon_test(baseline, candidate, policy.alternative, zero_method=policy.zero_method)
    return paired_randomization_test(
        baseline, candidate, policy.alternative, n_resamples=policy.n_resamples, rng=rng, workers=workers
    )


def _worst(query_ids: np.ndarray, b: np.ndarray, c: np.ndarray) -> tuple[QueryChange, ...]:
    d = c - b
    drops = np.flatnonzero(d < 0)
    # largest drop first; equal drops by query id so the list is stable
    order = sorted(drops.tolist(), key=lambda i: (d[i], str(query_ids[i])))[:WORST_QUERIES]
    return tuple(QueryChange(str(query_ids[i]), float(b[i]), float(c[i]), float(d[i])) for i in order)


def compare(
    paired: Paired,
    *,
    measure: str,
    policy: Policy | None = None,
    rng: int | np.random.Generator | None = None,
    baseline_name: str = "baseline",
    candidate_name: str = "candidate",
    workers: int = 1,
) -> Comparison:
    """The comparison record of one measure, decided as a family of one.

    ``rng`` (a seed or a Generator) drives the bootstrap and the Monte Carlo test; by default
    ``policy.seed``. ``workers`` threads share the resampling (results do not depend on it).
    Use ``adjust_and_decide`` when several measures or versions are compared together.
    """
    policy = policy or Policy()
    b, c = as_pair(paired.baseline, paired.candidate)
    n = len(b)
    gen = np.random.default_rng(policy.seed if rng is None else rng)
    test_rng, boot_rng = gen.spawn(2)
    result = run_test(b, c, policy, test_rng, workers)
    notes = [result.note] if result.note else []
    dropped = len(paired.dropped_baseline_only) + len(paired.dropped_candidate_only)
    if dropped:
        notes.append(f"{dropped} queries scored by one side only were left out (missing={paired.missing})")

    baseline_mean = candidate_mean = delta = rel = None
    delta_ci = dz = dz_ci = gz = None
    degenerate = None
    if n >= 1:
        shape = DeltaShape.of(b, c)
        baseline_mean, candidate_mean = float(b.mean()), float(c.mean())
        delta = float(shape.mean)
        rel = relative_change(baseline_mean, candidate_mean)
        degenerate = "all_zero" if shape.all_zero else "constant" if (shape.constant and n >= 2) else None
    if n >= 2:
        if degenerate is not None:
            delta_ci = (delta, delta)
        else:
            interval = paired_bootstrap_ci(b, c, confidence=policy.confidence, method=policy.ci_method,
                                           n_resamples=policy.n_resamples, rng=boot_rng, workers=workers)
            delta_ci = (interval.low, interval.high) if interval is not None else None
        dz = float(shape.dz())
        # sd = 0: the pivot has no spread to work with; the interval is the point itself
        dz_ci = (dz, dz) if degenerate is not None else dz_confidence_interval(dz, n, policy.confidence)
        gz = hedges_correction(n) * dz
    wtl = win_tie_loss(b, c)
    comparison = Comparison(
        measure=measure, baseline_name=baseline_name, candidate_name=candidate_name, n=n,
        baseline_mean=baseline_mean, candidate_mean=candidate_mean, delta=delta,
        delta_ci_low=None if delta_ci is None else delta_ci[0],
        delta_ci_high=None if delta_ci is None else delta_ci[1],
        relative_change=rel, test=result.test, test_method=result.method, statistic=result.statistic,
        p_value=result.p_value, p_adjusted=result.p_value, effect_size_dz=dz, effect_size_ci=dz_ci,
        effect_size_gz=gz, wins=wtl.wins, ties=wtl.ties, losses=wtl.losses, decision="", reasons=(),
        worst_queries=_worst(paired.query_ids, b, c), direction=result.direction, degenerate=degenerate,
        family_size=1, policy=policy, notes=tuple(notes),
    )
    verdict = decide(comparison.evidence(), policy)
    return replace(comparison, decision=verdict.label, reasons=verdict.reasons)


def adjust_and_decide(comparisons: Sequence[Comparison], policy: Policy | None = None) -> list[Comparison]:
    """Correct the p-values across ``comparisons`` (one family) and decide each one again.

    All comparisons must have been computed under the same policy (``policy`` defaults to theirs).
    """
    if not comparisons:
        return []
    policy = policy or comparisons[0].policy
    for comp in comparisons:
        if comp.policy != policy:
            raise PolicyError(
                f"{comp.measure} ({comp.candidate_name}) was computed under a different policy; "
                "compare every member of a family under the same policy"
            )
    adjusted = adjust_p_values([comp.p_value for comp in comparisons], policy.correction)
    out = []
    for comp, p_adj in zip(comparisons, adjusted.tolist()):
        comp = replace(comp, p_adjusted=float(p_adj), family_size=len(comparisons))
        verdict = decide(comp.evidence(), policy)
        out.append(replace(comp, decision=verdict.label, reasons=verdict.reasons))
    return out
