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

from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass, field, fields, replace
from functools import lru_cache
from typing import Any

import numpy as np

from evalops.errors import InputError
from evalops.notebook import comparisons_html
from evalops.stats._base import DeltaShape, TestResult, as_pair
from evalops.stats.align import Paired
from evalops.stats.bootstrap import paired_bootstrap_ci
from evalops.stats.correction import adjust_p_values
from evalops.stats.decision import Coverage, Decision, Evidence, JudgedShift, Policy, PolicyError, decide, notifies
from evalops.stats.distributions import binomial_sf
from evalops.stats.effect import dz_confidence_interval, hedges_correction, relative_change, win_tie_loss
from evalops.stats.randomization import paired_randomization_test
from evalops.stats.student_t import t_quantile
from evalops.stats.pilot import sd_upper_bound
from evalops.stats.robust import MATERIAL_SHARE, robust_interval
from evalops.stats.rule import family_tail, interval_level, rule_sample_size, spending_tail, t_interval
from evalops.stats.ttest import paired_t_test
from evalops.stats.wilcoxon import wilcoxon_test

__all__ = ["RECORD_FIELDS", "WORST_QUERIES", "Comparison", "public_fields", "public_view", "QueryChange", "adjust_and_decide", "compare", "decide_deltas", "decide_in_family",
           "RuleOutcome", "apply_rule", "run_test", "sign_test_p"]

WORST_QUERIES = 10


@dataclass(frozen=True)
class QueryChange:
    query_id: str
    baseline: float
    candidate: float
    delta: float


@dataclass(frozen=True)
class Comparison:
    """One measure of one candidate against the baseline: the one comparison record of evalops.

    :meth:`to_record` / :meth:`from_record` are its JSON form (every field; undefined values are ``None``),
    :meth:`to_dict` its public view and :func:`evalops.warehouse.abtests.ab_test_columns` its warehouse row. The
    decision step stores it, and the report rows, the alerts, the gate cases and the MLflow hook hold it as
    it is (their ``comparison``): none of them declares a field of its own. Adding a field is adding it here:
    it reaches the record, its public view, the warehouse's ``ab_tests.record`` and every reader; a report
    column or a warehouse column of its own still has to declare it.

    ``delta_ci_low``/``high`` is the reported interval at ``policy.confidence`` (``policy.ci_method``
    bootstrap); ``interval_low``/``high`` is the decision interval at the family-adjusted
    ``interval_level`` over ``family_size`` comparisons. ``deltas`` (not in ``to_dict``) keeps the per-query
    deltas so that a family can be decided again at its own level. ``p_value`` is the policy's reported
    test; under ``interval="robust"`` ``decision_p`` is the p-value of the test the decision interval inverts
    and ``p_adjusted`` its family-adjusted value, the one that decided (otherwise ``p_adjusted`` adjusts
    ``p_value``).
    """

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
    # a record read from its public view (``to_dict``: a judge-label comparison, ``evalops compare`` JSON)
    # lacks the internals: the direction of the test, the degenerate case and the policy take these defaults
    direction: int = 0
    degenerate: str | None = None
    family_size: int = 1
    policy: Policy = field(default_factory=Policy, repr=False)
    notes: tuple[str, ...] = ()
    delta_sd: float | None = None
    margin: float | None = None
    interval_low: float | None = None
    interval_high: float | None = None
    interval_level: float | None = None
    interval_method: str = "t"
    severity: str | None = None
    criterion: str | None = None
    reason_code: str | None = None
    alert: bool = False
    queries_needed: int | None = None
    queries_lost: int = 0
    queries_gained: int = 0
    query_drops_p: float = 1.0
    coverage: dict[str, object] | None = None
    deltas: tuple[float, ...] = field(default=(), repr=False)
    judged_coverage: dict[str, object] | None = None
    higher_is_better: bool = True
    decision_p: float | None = None
    # a daily-repeated comparison decided by the pooled test (``evalops.stats.sequence.pooled_decision``):
    # the looks pooled since the restart, its first day, the queries, the tail and the sequence's bounds
    pooled: dict[str, object] | None = None

    def to_record(self) -> dict[str, object]:
        """Every field as plain JSON (the policy as its dict, worst queries as dicts, ``None`` for undefined
        values, never NaN): what the pipeline hands between tasks and stores. :meth:`from_record` inverts it.

        Built from the dataclass fields, so a new field needs no change here."""
        return {f.name: _plain(getattr(self, f.name)) for f in fields(self)}

    @classmethod
    def from_record(cls, record: Mapping[str, Any]) -> Comparison:
        """The comparison of :meth:`to_record` or of its public view :meth:`to_dict` (a field absent from an
        older record or from the view takes its default). A key that is no field (a typo, an older release's
        field) is an ``InputError`` naming it."""
        names = {f.name: f for f in fields(cls)}
        record = {_RECORD_NAMES.get(k, k): v for k, v in record.items()}
        unknown = sorted(set(record) - set(names))
        if unknown:
            raise InputError(f"comparison record has unknown fields {unknown}; expected some of {sorted(names)}")
        values: dict[str, object] = {}
        for name, value in record.items():
            kind = names[name].type
            if name == "policy":
                value = Policy.from_dict(value)
            elif name == "worst_queries":
                value = tuple(QueryChange(**q) for q in value)
            elif isinstance(value, list):
                value = tuple(value)
            elif value is None and kind == "float":  # a defined-by-type float that was undefined (NaN)
                value = float("nan")
            values[name] = value
        return cls(**values)  # type: ignore[arg-type]

    @classmethod
    def of(cls, value: Comparison | Mapping[str, Any]) -> Comparison:
        """``value`` itself when it is a comparison, else the comparison of its JSON record (:meth:`from_record`)."""
        return value if isinstance(value, Comparison) else cls.from_record(value)

    def _repr_html_(self) -> str:
        """A one-row table for notebooks (:func:`evalops.notebook.comparisons_html`), every text escaped."""
        return comparisons_html([self])

    def to_dict(self) -> dict[str, object]:
        """The public JSON view (``evalops compare --format json``): the record under its public names
        (``baseline``, ``candidate``), without the internals (policy, per-query deltas, direction)."""
        return public_view(self.to_record())


# The public view: these names first, in this order, then any other field in declaration order.
_PUBLIC_ORDER = (
    "measure", "baseline_name", "candidate_name", "n", "coverage", "baseline_mean", "candidate_mean", "delta",
    "delta_sd", "delta_ci_low", "delta_ci_high", "relative_change", "decision", "severity", "criterion",
    "reason_code", "alert", "margin", "interval_low", "interval_high", "interval_level", "interval_method",
    "family_size", "queries_needed", "test", "test_method", "statistic", "p_value", "decision_p", "p_adjusted",
    "effect_size_dz", "effect_size_ci", "effect_size_gz", "wins", "ties", "losses", "queries_lost",
    "queries_gained", "query_drops_p", "reasons", "pooled", "worst_queries", "notes",
)  # fmt: skip
_PUBLIC_NAMES = {"baseline_name": "baseline", "candidate_name": "candidate"}
_INTERNAL = frozenset({"policy", "deltas", "direction", "degenerate"})

# The record's fields, declared once (the dataclass above): every reader of a record goes by these.
RECORD_FIELDS: tuple[str, ...] = tuple(f.name for f in fields(Comparison))
_RECORD_NAMES = {public: name for name, public in _PUBLIC_NAMES.items()}


def public_view(record: Mapping[str, object]) -> dict[str, object]:
    """The public view of a record (:meth:`Comparison.to_dict`): its fields in the public order under their
    public names, without the internals; a field the record lacks is left out."""
    ordered = [n for n in _PUBLIC_ORDER if n in record] + [n for n in RECORD_FIELDS
                                                           if n in record and n not in _PUBLIC_ORDER]
    return {_PUBLIC_NAMES.get(n, n): record[n] for n in ordered if n not in _INTERNAL}


def public_fields() -> tuple[str, ...]:
    """Every public name of :func:`public_view`, in its order."""
    return tuple(public_view(dict.fromkeys(RECORD_FIELDS)))


def _plain(value: object) -> object:
    """A field value as JSON: NaN and infinities become None, tuples lists, dataclasses dicts."""
    if isinstance(value, Policy):
        return value.to_dict()
    if isinstance(value, QueryChange):
        return {k: _plain(v) for k, v in asdict(value).items()}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, (float, np.floating)):
        return float(value) if np.isfinite(value) else None
    if isinstance(value, np.integer):
        return int(value)
    if isinstance(value, np.bool_):
        return bool(value)
    return value


def run_test(baseline: np.ndarray, candidate: np.ndarray, policy: Policy,
             rng: int | np.random.Generator | None, workers: int = 1) -> TestResult:
    """The policy's paired test on aligned vectors."""
    if policy.test == "t":
        return paired_t_test(baseline, candidate, policy.alternative)
    if policy.test == "wilcoxon":
        return wilcoxon_test(baseline, candidate, policy.alternative, zero_method=policy.zero_method,
                            correction=policy.continuity)
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
    coverage: Coverage | None = None,
    judged: JudgedShift | None = None,
    higher_is_better: bool = True,
) -> Comparison:
    """The comparison record of one measure, decided as a family of one.

    ``rng`` (a seed or a Generator) drives the bootstrap and the Monte Carlo test; by default
    ``policy.seed``. ``workers`` threads share the resampling (results do not depend on it).
    ``coverage`` says how many judged queries each side answered (a side under ``policy.min_coverage``
    makes the comparison ``inconclusive``, ``partial_run``). ``judged`` is the judged coverage of both sides at
    the measure's cutoff (a candidate less judged than the policy allows is not called a regression,
    ``unjudged_documents``). ``higher_is_better=False`` (a context measure such as tokens) makes the rule
    read the reduction as the gain; the record's numbers stay candidate minus baseline.
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

    baseline_mean = candidate_mean = delta = rel = sd = None
    delta_ci = dz = dz_ci = gz = None
    degenerate = None
    if n >= 1:
        shape = DeltaShape.of(b, c)
        baseline_mean, candidate_mean = float(b.mean()), float(c.mean())
        delta = float(shape.mean)
        rel = relative_change(baseline_mean, candidate_mean)
        degenerate = "all_zero" if shape.all_zero else "constant" if (shape.constant and n >= 2) else None
    if n >= 2:
        sd = float(shape.sd)
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
    d = c - b
    lost, gained = large_changes(d, policy.query_drop)
    worst = _worst(paired.query_ids, b, c)
    if not higher_is_better:  # a loss is a rise; the worst queries are the largest rises
        lost, gained = gained, lost
        worst = tuple(QueryChange(w.query_id, -w.baseline, -w.candidate, -w.delta)
                      for w in _worst(paired.query_ids, -b, -c))
    comparison = Comparison(
        measure=measure, baseline_name=baseline_name, candidate_name=candidate_name, n=n,
        baseline_mean=baseline_mean, candidate_mean=candidate_mean, delta=delta,
        delta_ci_low=None if delta_ci is None else delta_ci[0],
        delta_ci_high=None if delta_ci is None else delta_ci[1],
        relative_change=rel, test=result.test, test_method=result.method, statistic=result.statistic,
        p_value=result.p_value, p_adjusted=result.p_value, effect_size_dz=dz, effect_size_ci=dz_ci,
        effect_size_gz=gz, wins=wtl.wins, ties=wtl.ties, losses=wtl.losses, decision="", reasons=(),
        worst_queries=worst, direction=result.direction, degenerate=degenerate,
        family_size=1, policy=policy, notes=tuple(notes), delta_sd=sd, margin=policy.margin(measure),
        queries_lost=lost, queries_gained=gained, query_drops_p=sign_test_p(lost, gained),
        coverage=None if coverage is None else asdict(coverage),
        deltas=tuple(float(x) for x in (np.full(n, delta) if degenerate else d)),
        judged_coverage=None if judged is None else judged.to_dict(), higher_is_better=higher_is_better,
    )
    return decide_in_family(comparison, policy, family_size=1, discoveries=1)


def large_changes(d: np.ndarray, query_drop: float) -> tuple[int, int]:
    """(queries that lost ``query_drop`` or more, queries that gained that much): ``d`` candidate - baseline.
    A change of exactly ``query_drop`` counts (to 1e-12: 0.7 - 0.4 is 0.29999999999999993)."""
    edge = query_drop - 1e-12
    return int(np.count_nonzero(d <= -edge)), int(np.count_nonzero(d >= edge))


def sign_test_p(lost: int, gained: int) -> float:
    """One-sided sign test: P(at least ``lost`` of ``lost + gained`` large changes are losses | fair coin)."""
    total = lost + gained
    if total == 0:
        return 1.0
    return binomial_sf(lost - 1, total, 0.5)


@dataclass(frozen=True)
class RuleOutcome:
    """The rule's decision on one comparison, with the interval it was read from."""

    decision: Decision
    interval: tuple[float, float] | None
    interval_level: float
    interval_method: str
    margin: float
    queries_needed: int | None
    alert: bool
    p_value: float | None = None
    p_adjusted: float | None = None


@dataclass(frozen=True)
class _DecisionInterval:
    """The decision interval of one comparison and how it was read (``method``). Under ``interval="robust"``
    the robust rule's reading fills the rest: its branch, non-zero count, strict side, queries needed and
    material interval, and ``p_value``/``p_adjusted`` become those of the test the interval inverts; otherwise
    they stay ``None`` and the p-values are the ones passed in."""

    interval: tuple[float, float] | None
    method: str
    p_value: float
    p_adjusted: float | None
    robust: str | None = None
    nonzero: int | None = None
    strict_side: str | None = None
    queries_needed: int | None = None
    material: tuple[float, float] | None = None


def _decision_interval(policy: Policy, *, n: int, delta: float | None, sd: float | None, degenerate: str | None,
                       deltas: Sequence[float] | np.ndarray, tail: float, level: float, p_value: float,
                       p_adjusted: float | None, workers: int) -> _DecisionInterval:
    """The interval the rule reads at the family's ``tail``: the robust rule's, the t-interval (degenerate
    deltas or ``interval="t"``) or the policy's bootstrap at ``level``; none below two queries."""
    if policy.interval == "robust" and n >= 2 and delta is not None and degenerate != "all_zero":
        return _robust_decision_interval(policy, n, deltas, tail)
    interval = None
    method = "t" if policy.interval == "t" else policy.ci_method
    if n >= 2 and delta is not None:
        if degenerate is not None or policy.interval == "t":
            interval = t_interval(delta, sd or 0.0, n, tail)
        else:
            d = np.asarray(deltas, dtype=np.float64)
            boot = paired_bootstrap_ci(np.zeros_like(d), d, confidence=level, method=policy.ci_method,
                                       n_resamples=policy.n_resamples, rng=[policy.seed, 1], workers=workers)
            interval = None if boot is None else (boot.low, boot.high)  # None only for n = 0
    return _DecisionInterval(interval, method, p_value, p_adjusted)


def _robust_decision_interval(policy: Policy, n: int, deltas: Sequence[float] | np.ndarray,
                              tail: float) -> _DecisionInterval:
    """The robust rule's interval (``evalops.stats.robust``), named by its branch, with the p-value of the
    test it inverts."""
    reading = robust_interval(np.asarray(deltas, dtype=np.float64), tail, t_quantile(n - 1, 1.0 - tail))
    method = {"t": "skew-corrected t", "betting": "betting", "constant": "betting"}.get(reading.branch, "robust")
    strict_side = None
    if reading.strict:
        method, strict_side = "betting and strict t", reading.strict_side
    # the p-value of the test the interval inverts: the one that decides (adjusted: Bonferroni m p under holm,
    # the BH level under bh, the family's divisor either way)
    sides = {"two-sided": min(1.0, 2.0 * min(reading.p_below, reading.p_above)), "less": reading.p_below,
             "greater": reading.p_above}
    p_value = sides[policy.alternative]
    divisor = (policy.alpha / tail) / (2.0 if policy.alternative == "two-sided" else 1.0)
    return _DecisionInterval(reading.interval, method, p_value, min(1.0, p_value * divisor), robust=reading.branch,
                             nonzero=reading.nonzero, strict_side=strict_side,
                             queries_needed=reading.queries_needed, material=reading.material)


def _bound_reader(policy: Policy, *, measure: str | None, family_size: int, discoveries: int, look: int | None,
                  workers: int) -> Callable[[Sequence[float]], tuple[Decision, tuple[float, float] | None]]:
    """The reader ``decide`` applies to the bounds of the unjudged documents (``JudgedShift``)."""

    def read(bound: Sequence[float]) -> tuple[Decision, tuple[float, float] | None]:
        """The rule on the deltas of a bound of the unjudged documents (``JudgedShift``): this comparison's
        own interval method, family and look."""
        d = np.asarray(bound, dtype=np.float64)
        shape = DeltaShape.of(np.zeros_like(d), d)
        flat = "all_zero" if shape.all_zero else "constant" if (shape.constant and len(d) >= 2) else None
        out = apply_rule(policy, measure=measure, n=len(d), delta=float(shape.mean) if len(d) else None,
                         sd=float(shape.sd) if len(d) >= 2 else None, degenerate=flat, deltas=d,
                         family_size=family_size, discoveries=discoveries, look=look, workers=workers,
                         size_hint=False)
        return out.decision, out.interval

    return read


def apply_rule(policy: Policy, *, measure: str | None, n: int, delta: float | None, sd: float | None,
               degenerate: str | None, deltas: Sequence[float] | np.ndarray = (), p_value: float = 1.0,
               p_adjusted: float | None = None, test: str = "t", coverage: Coverage | None = None,
               queries_lost: int = 0, queries_gained: int = 0, query_drops_p: float = 1.0, family_size: int = 1,
               discoveries: int = 1, look: int | None = None, workers: int = 1,
               size_hint: bool = True, judged: JudgedShift | None = None,
               higher_is_better: bool = True) -> RuleOutcome:
    """The decision interval of one comparison at its family's level, and the rule's decision on it.

    ``size_hint=False`` skips the number of queries an undecided comparison would need (simulations).

    ``look`` (1, 2, ...) is set for a comparison repeated on fresh data every day: its error is spent over
    the looks (``evalops.stats.rule.spending_tail``) on top of the family's correction.
    """
    tail = family_tail(policy.alpha, policy.alternative, family_size, policy.correction, discoveries)
    if look is not None:
        tail = tail * spending_tail(1.0, look, "one-sided")
    level = interval_level(tail)
    margin = policy.margin(measure)
    read_ci = _decision_interval(policy, n=n, delta=delta, sd=sd, degenerate=degenerate, deltas=deltas, tail=tail,
                                 level=level, p_value=p_value, p_adjusted=p_adjusted, workers=workers)
    # constant deltas: the exact sign-flip p-value of one side, the best any paired test can do with n queries
    floor = float(2.0 ** -n) if degenerate == "constant" else None
    evidence = Evidence(
        n=n, delta=delta, measure=measure, sd=sd, interval=read_ci.interval, interval_level=level, tail=tail,
        interval_method=read_ci.method, material_interval=read_ci.material, p_value=read_ci.p_value,
        p_adjusted=read_ci.p_adjusted, degenerate=degenerate, floor_p=floor,
        family_size=family_size, test=test, coverage=coverage, queries_lost=queries_lost,
        queries_gained=queries_gained, query_drops_p=query_drops_p, judged=judged,
        higher_is_better=higher_is_better, nonzero=read_ci.nonzero, robust=read_ci.robust,
        queries_needed=read_ci.queries_needed, strict_side=read_ci.strict_side,
        bounded=bool(np.all(np.abs(np.asarray(deltas, dtype=np.float64)) <= 1.0)),
    )
    read = _bound_reader(policy, measure=measure, family_size=family_size, discoveries=discoveries, look=look,
                         workers=workers)
    verdict = decide(evidence, policy, read)
    needed = read_ci.queries_needed
    if size_hint and verdict.reason_code == "underpowered" and sd and degenerate is None:
        # only an undecided comparison needs the number of queries that would decide it
        # the robust t branch reads a claim past the margin at MATERIAL_SHARE of the per-side error
        share = MATERIAL_SHARE if policy.interval == "robust" else 1.0
        planning_sd = sd_upper_bound(deltas) if len(deltas) >= 2 else sd  # so that the n delivers its power
        needed = _queries_needed(planning_sd, margin, share * policy.alpha, policy.alternative, family_size)
        verdict = decide(replace(evidence, queries_needed=needed), policy, read)
    robust = read_ci.robust is not None
    return RuleOutcome(verdict, read_ci.interval, level, read_ci.method, margin,
                       needed if verdict.reason_code else None,
                       notifies(verdict.label, verdict.severity, verdict.criterion, policy.alert_on),
                       read_ci.p_value if robust else None, read_ci.p_adjusted if robust else None)


def decide_deltas(deltas: object, policy: Policy, *, measure: str | None = None, family_size: int = 1,
                  discoveries: int = 1, look: int | None = None, size_hint: bool = True,
                  judged: JudgedShift | None = None) -> RuleOutcome:
    """The rule on a vector of per-query deltas (t-test p reported): for simulations and benchmarks.
    ``judged``: the judged coverage and bounds of the unjudged documents (``evalops.judged.bounds``), read exactly
    as ``compare`` reads them; without it no rule about unjudged documents applies."""
    d = np.asarray(deltas, dtype=np.float64).reshape(-1)
    shape = DeltaShape.of(np.zeros_like(d), d)
    n = len(d)
    degenerate = None
    if n >= 1:
        degenerate = "all_zero" if shape.all_zero else "constant" if (shape.constant and n >= 2) else None
    result = paired_t_test(np.zeros_like(d), d, policy.alternative)
    lost, gained = large_changes(d, policy.query_drop)
    return apply_rule(policy, measure=measure, n=n, delta=float(shape.mean) if n else None,
                      sd=float(shape.sd) if n >= 2 else None, degenerate=degenerate, deltas=d,
                      p_value=result.p_value, queries_lost=lost, queries_gained=gained,
                      query_drops_p=sign_test_p(lost, gained), family_size=family_size, discoveries=discoveries,
                      look=look, size_hint=size_hint, judged=judged)


def decide_in_family(comp: Comparison, policy: Policy, *, family_size: int, discoveries: int = 1,
                     look: int | None = None, workers: int = 1) -> Comparison:
    """Decide one comparison as a member of a family of ``family_size`` (``discoveries``: BH's R)."""
    out = apply_rule(
        policy, measure=comp.measure, n=comp.n, delta=comp.delta, sd=comp.delta_sd, degenerate=comp.degenerate,
        deltas=comp.deltas, p_value=comp.p_value, p_adjusted=comp.p_adjusted, test=comp.test,
        coverage=None if comp.coverage is None else Coverage(**comp.coverage),  # type: ignore[arg-type]
        queries_lost=comp.queries_lost, queries_gained=comp.queries_gained, query_drops_p=comp.query_drops_p,
        family_size=family_size, discoveries=discoveries, look=look, workers=workers,
        judged=None if comp.judged_coverage is None else JudgedShift.from_dict(comp.judged_coverage),
        higher_is_better=comp.higher_is_better,
    )
    v = out.decision
    return replace(
        comp, decision=v.label, reasons=v.reasons, severity=v.severity, criterion=v.criterion,
        reason_code=v.reason_code, margin=out.margin, family_size=family_size,
        interval_low=None if out.interval is None else float(out.interval[0]),
        interval_high=None if out.interval is None else float(out.interval[1]),
        interval_level=out.interval_level, interval_method=out.interval_method, queries_needed=out.queries_needed,
        alert=out.alert, decision_p=out.p_value if out.p_value is not None else comp.decision_p,
        p_adjusted=out.p_adjusted if out.p_adjusted is not None else comp.p_adjusted,
    )


@lru_cache(maxsize=1024)
def _queries_needed(sd: float, margin: float, alpha: float, alternative: str, family_size: int) -> int | None:
    """n for 80% power to call a drop (a gain for ``greater``) of 1.5 x margin critical under this family, for
    deltas of sd ``sd`` (the call site gives the sample's 90% upper bound, ``evalops.stats.pilot.sd_upper_bound``)."""
    side = 1.0 if alternative == "greater" else -1.0
    try:
        return rule_sample_size(side * 1.5 * margin, sd, margin, power=0.8, alpha=alpha, alternative=alternative,
                                family_size=family_size)
    except InputError:
        return None


def adjust_and_decide(comparisons: Sequence[Comparison], policy: Policy | None = None, *,
                      look: int | None = None) -> list[Comparison]:
    """Correct the p-values across ``comparisons`` (one family) and decide each one again at the family's level.

    All comparisons must have been computed under the same policy (``policy`` defaults to theirs).
    ``look``: see ``decide_in_family``.
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
    if policy.interval == "robust":  # the decision's own p-values; under holm the decision is Bonferroni's
        own = [1.0 if comp.decision_p is None else comp.decision_p for comp in comparisons]
        adjusted = (adjust_p_values(own, "bh") if policy.correction == "bh"
                    else np.minimum(1.0, np.multiply(own, len(own))))
    else:
        adjusted = adjust_p_values([comp.p_value for comp in comparisons], policy.correction)
    discoveries = int((adjusted < policy.alpha).sum()) if policy.correction == "bh" else 1
    out = []
    for comp, p_adj in zip(comparisons, adjusted.tolist()):
        comp = replace(comp, p_adjusted=float(p_adj))
        out.append(decide_in_family(comp, policy, family_size=len(comparisons), discoveries=discoveries, look=look))
    return out
