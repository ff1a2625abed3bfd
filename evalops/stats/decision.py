"""The regression rule: from the evidence of one comparison and a policy to a decision in words.

Materiality is a **margin in the measure's own units** (per measure name in ``margins``; one for every
other measure in ``min_delta``; by default each measure family's own, ``evalops.stats.margins``: e.g. 0.02
nDCG@10, 0.04 Success@10). The decision is read from the interval ``[lo, hi]`` of the mean delta at the
family-adjusted level (``evalops.stats.rule``: Bonferroni ``1 - alpha/m`` for a Holm family of m, the
Benjamini-Yekutieli level for BH). The interval is the policy's ``interval``: ``robust`` (the default, ``evalops.stats.robust``: the
skew-corrected t-interval where Cochran's rule trusts it, the betting interval for bounded means where it
does not, ``inconclusive`` where neither can hold the level), ``t``, or the bootstrap. With M the margin:

===================================================  ==============  ==========  ===================
the interval of delta                                decision        severity    criterion
===================================================  ==============  ==========  ===================
whole (material) interval below -M                   regression      critical    ``material``
inside (-M, +M) (equivalence, TOST)                  no_change       -           ``equivalence``
below 0, reaching past -M                            regression      warning     ``significant``
anything else                                        inconclusive    -           -
===================================================  ==============  ==========  ===================

Improvements are the mirror image. ``inconclusive`` says why in ``reason_code``: ``underpowered`` (with
the number of queries that would decide it for this rule and family), ``too_few_queries`` (n < 2),
``partial_run`` (a side answered under ``min_coverage`` of the judged queries), ``unjudged_documents`` (see
below), and under the robust interval ``too_few_nonzero`` (fewer than 6 queries changed: no alert, constant
or not) and ``skewed_small_sample`` (too skewed for the t-interval, and the betting interval too wide or not
defined), each with the number of queries that would decide it. One-sided policies look one
way: under ``alternative="less"`` no improvement is declared and ``no_change`` is non-inferiority (lower
bound above -M).

**Unjudged documents.** An unjudged document counts as non-relevant, so a candidate that retrieves
documents the annotators never saw is scored low exactly when it differs most from the baseline. A
comparison carries the judged coverage of both sides and the bounds of what the unjudged documents could do
(``JudgedShift``, ``evalops.judged.bounds``: each unjudged (query, document) one grade in both versions). When the
candidate's coverage is lower than the baseline's by more than ``max_judged_coverage_drop`` (absolute,
default 0.1), a ``regression`` is read again, at the comparison's own level and interval method (``read``,
passed by ``evalops.stats.compare.apply_rule``): under the optimistic bound (a regression there stands, under
both bounds), then on condensed lists (a regression there stands on the judged evidence, the weaker
severity); otherwise it is ``inconclusive`` (``unjudged_documents``), which ``evalops.failing`` turns into an
``unjudged`` alert and gate failure when the judged delta is a drop on an alert measure. The reasons give
the delta as judged, both bounds, the condensed delta and how many documents would need judging. A
comparison without the consistent bounds (stored before them, or under the per-run bound) is withheld as
``inconclusive``. Only a regression is re-read.

Cohen's d_z is reported with every comparison; it is not a gate (it is signal-to-noise, not size).

``alert_on`` chooses the route to an alert, each with a bounded false-alarm rate:

* ``warning`` (the default), the **p-value route**: a significant drop, i.e. the family-adjusted p of the
  interval's own test (``p_adjusted``, Bonferroni ``m p`` under ``holm``) is below alpha; it includes every
  critical drop. A true delta of 0 alerts with probability at most alpha/2 (two-sided);
* ``critical``, the **effect-size route**: a drop shown to exceed the margin in the measure's units (the
  interval's test of ``delta >= -M``); a true delta of -M or more alerts with probability at most alpha/2.

The criterion ``material_estimate`` (``alert_on: either``) and ``query_drops`` (``alert_on_query_drops``)
of older policies were removed (``EITHER_REMOVED``, ``QUERY_DROPS_REMOVED``): neither bounded its
false-alarm rate. Their names stay in ``CRITERIA`` because older stored records carry them.
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Callable, Mapping, Sequence
from dataclasses import InitVar, asdict, dataclass, field, replace
from typing import Any, cast

from evalops.errors import InputError
from evalops.stats._base import ALTERNATIVES
from evalops.stats.bootstrap import CI_METHODS
from evalops.stats.correction import CORRECTIONS
from evalops.stats.margins import DEFAULT_MARGINS, FALLBACK_MARGIN, table_margin
from evalops.stats.wilcoxon import ZERO_METHODS
from evalops.util.numfmt import INTERVAL_TESTS

__all__ = [
    "ALERT_ON", "CRITERIA", "DECISIONS", "DEFAULT_MIN_DELTA", "INTERVALS", "REASON_CODES", "SEVERITIES", "TESTS",
    "Coverage", "Decision", "Evidence", "JudgedShift", "Policy", "PolicyError", "decide", "notifies",
]

DECISIONS: tuple[str, ...] = ("regression", "improvement", "no_change", "inconclusive")
SEVERITIES: tuple[str, ...] = ("critical", "warning")
CRITERIA: tuple[str, ...] = ("material", "significant", "broken_queries", "material_estimate", "query_drops",
                             "equivalence")
REASON_CODES: tuple[str, ...] = ("underpowered", "too_few_queries", "partial_run", "unjudged_documents",
                                 "too_few_nonzero", "skewed_small_sample")
ALERT_ON: tuple[str, ...] = ("critical", "warning")
TESTS: tuple[str, ...] = ("t", "wilcoxon", "randomization")
INTERVALS: tuple[str, ...] = ("robust", "t", "bootstrap")
DEFAULT_MIN_DELTA = FALLBACK_MARGIN  # the margin of a measure outside the table (evalops.stats.margins)
DEFAULT_MIN_COVERAGE = 0.9
DEFAULT_QUERY_DROP = 0.3
DEFAULT_MAX_JUDGED_COVERAGE_DROP = 0.1
_TEST_NAMES = {"t": "paired t-test", "wilcoxon": "Wilcoxon signed-rank", "randomization": "randomization test"}
_CORRECTION_NAMES = {"holm": "Bonferroni intervals for a Holm family", "bh": "Benjamini-Yekutieli level for a BH family"}

MIN_EFFECT_REMOVED = (
    "min_effect (a minimum |d_z|) was removed: materiality is now min_delta, a margin in the measure's own "
    "units (by default each measure's own; per measure under margins), judged from confidence intervals; d_z is "
    "reported, not a gate. Replace min_effect with min_delta"
)


EITHER_REMOVED = (
    "alert_on: either (alert when the point estimate is past the margin, significant or not) was removed: it "
    "alerted in 23-45 % of comparisons of identical systems. Use alert_on: warning (the p-value route: a "
    "significant drop, which includes every critical one) or alert_on: critical (the effect-size route: a drop "
    "shown to exceed the margin)"
)
QUERY_DROPS_REMOVED = (
    "alert_on_query_drops was removed: it read the lost queries without the family's correction. Broken "
    "queries are now their own question, on by default (broken_queries: an exact sign test of the queries "
    "that lost query_drop or more against those that gained that much, at the family's level). "
    "Remove alert_on_query_drops"
)


class PolicyError(InputError):
    """A comparison policy with an invalid setting."""


@dataclass(frozen=True)
class Policy:
    """Everything that decides a comparison; it is stored with every result.

    alpha: the family's error rate; alternative: ``two-sided``, ``less`` (only drops) or ``greater``.
    margins: per-measure margins (by exact measure name); min_delta: one margin, in the measure's units, for
    every measure without a ``margins`` entry (``None``, the default: the measure's family margin in
    ``default_margins``, the table of ``evalops.stats.margins``, copied into the policy so that it is stored
    with every result; ``FALLBACK_MARGIN`` for a measure outside it).
    alert_on: ``critical`` (the effect-size route) or ``warning`` (the p-value route; module docstring).
    correction: ``holm`` or ``bh`` across the family; test: the reported paired test (``t``, ``wilcoxon``,
    ``randomization``); zero_method: Wilcoxon's zero rule; continuity: its continuity correction (normal
    approximation only).
    interval: the decision interval: ``robust`` (the default; ``evalops.stats.robust``: skew-corrected t where
    Cochran's rule trusts it, the betting interval for bounded means where it does not), ``t`` or
    ``bootstrap`` (``ci_method``: ``bca`` or ``percentile``); stored policies keep the interval they ran with.
    query_drop: a query whose delta is -query_drop or less counts as lost (a gain of query_drop or more, gained).
    broken_queries: the second question (``_broken_queries``): an exact sign test of the lost queries against
    the gained ones, a ``regression`` (criterion ``broken_queries``) below the family's per-side error.
    min_coverage: the share of judged queries each side must answer, else ``inconclusive`` (partial_run).
    max_judged_coverage_drop: how much lower (absolute) the candidate's judged coverage may be than the
    baseline's before a regression is withheld as ``inconclusive`` (unjudged_documents).
    n_resamples: bootstrap resamples and Monte Carlo sign vectors; seed: their seed.
    """

    alpha: float = 0.05
    alternative: str = "two-sided"
    min_delta: float | None = None
    margins: Mapping[str, float] = field(default_factory=dict)
    default_margins: Mapping[str, float] = field(default_factory=lambda: dict(DEFAULT_MARGINS))
    alert_on: str = "warning"
    correction: str = "holm"
    test: str = "t"
    zero_method: str = "wilcox"
    continuity: bool = False
    interval: str = "robust"
    ci_method: str = "bca"
    query_drop: float = DEFAULT_QUERY_DROP
    broken_queries: bool = True
    min_coverage: float = DEFAULT_MIN_COVERAGE
    max_judged_coverage_drop: float = DEFAULT_MAX_JUDGED_COVERAGE_DROP
    n_resamples: int = 10_000
    seed: int = 0
    min_effect: InitVar[object] = None
    alert_on_query_drops: InitVar[object] = None

    def __post_init__(self, min_effect: object, alert_on_query_drops: object = None) -> None:
        if min_effect is not None:
            raise PolicyError(MIN_EFFECT_REMOVED)
        if alert_on_query_drops not in (None, False):  # a stored policy's ``false`` still loads
            raise PolicyError(QUERY_DROPS_REMOVED)
        if self.alert_on == "either":
            raise PolicyError(EITHER_REMOVED)
        for name in ("n_resamples", "seed"):  # numpy integers (a seed from a date, say) become plain ints
            value = getattr(self, name)
            if isinstance(value, numbers.Integral) and not isinstance(value, bool):
                object.__setattr__(self, name, int(value))
        for name in ("alpha", "min_delta", "query_drop", "min_coverage", "max_judged_coverage_drop"):
            value = getattr(self, name)
            if isinstance(value, numbers.Real) and not isinstance(value, bool):
                object.__setattr__(self, name, float(value))
        for table in ("margins", "default_margins"):
            given = getattr(self, table)
            if not isinstance(given, Mapping):
                raise PolicyError(f"{table} must map measure names to margins; got {given!r}")
            checked = {}
            for measure, value in dict(given).items():
                if not (isinstance(value, numbers.Real) and not isinstance(value, bool) and cast(float, value) > 0
                        and math.isfinite(value)):
                    raise PolicyError(f"{table}[{measure!r}] must be a positive number; got {value!r}")
                checked[str(measure)] = float(value)
            object.__setattr__(self, table, checked)

        def positive(x: object) -> bool:
            return isinstance(x, float) and x > 0 and math.isfinite(x)

        checks = [
            (isinstance(self.alpha, float) and 0.0 < self.alpha < 1.0, f"alpha must be between 0 and 1; got {self.alpha}"),
            (self.alternative in ALTERNATIVES, f"alternative must be one of {', '.join(ALTERNATIVES)}; "
                                               f"got {self.alternative!r}"),
            (self.min_delta is None or positive(self.min_delta),
             f"min_delta is the margin in the measure's units and must be > 0 (a margin of 0 makes 'no change' "
             f"impossible to show), or null for the per-measure defaults; got {self.min_delta!r}"),
            (self.alert_on in ALERT_ON, f"alert_on must be one of {', '.join(ALERT_ON)}; got {self.alert_on!r}"),
            (self.correction in CORRECTIONS, f"correction must be one of {', '.join(CORRECTIONS)}; "
                                             f"got {self.correction!r}"),
            (self.test in TESTS, f"test must be one of {', '.join(TESTS)}; got {self.test!r}"),
            (self.zero_method in ZERO_METHODS, f"zero_method must be one of {', '.join(ZERO_METHODS)}; "
                                               f"got {self.zero_method!r}"),
            (self.interval in INTERVALS, f"interval must be one of {', '.join(INTERVALS)}; got {self.interval!r}"),
            (self.ci_method in CI_METHODS, f"ci_method must be one of {', '.join(CI_METHODS)}; "
                                           f"got {self.ci_method!r}"),
            (positive(self.query_drop), f"query_drop must be a positive number; got {self.query_drop!r}"),
            (isinstance(self.continuity, bool), f"continuity must be true or false; got {self.continuity!r}"),
            (isinstance(self.broken_queries, bool),
             f"broken_queries must be true or false; got {self.broken_queries!r}"),
            (isinstance(self.min_coverage, float) and 0.0 <= self.min_coverage <= 1.0,
             f"min_coverage must be a share between 0 and 1; got {self.min_coverage!r}"),
            (isinstance(self.max_judged_coverage_drop, float) and 0.0 <= self.max_judged_coverage_drop <= 1.0,
             f"max_judged_coverage_drop must be a share between 0 and 1; got {self.max_judged_coverage_drop!r}"),
            (isinstance(self.n_resamples, int) and self.n_resamples >= 100,
             f"n_resamples must be an integer >= 100; got {self.n_resamples!r}"),
            (isinstance(self.seed, int) and self.seed >= 0, f"seed must be a non-negative integer; got {self.seed!r}"),
        ]
        for ok, message in checks:
            if not ok:
                raise PolicyError(message)

    __hash__ = None  # type: ignore[assignment]  # margins is a dict

    @property
    def confidence(self) -> float:
        """The level of the reported (unadjusted) interval of the delta."""
        return 1.0 - self.alpha

    def margin(self, measure: str | None) -> float:
        """The margin of ``measure``: its ``margins`` entry, else ``min_delta`` when set, else its family's in
        ``default_margins`` (``FALLBACK_MARGIN`` outside the table)."""
        if measure is not None and str(measure) in self.margins:
            return self.margins[str(measure)]
        if self.min_delta is not None:
            return self.min_delta
        return table_margin(measure, self.default_margins)

    def to_dict(self) -> dict[str, object]:
        out = asdict(self)
        out["margins"] = dict(self.margins)
        out["default_margins"] = dict(self.default_margins)
        return out

    @classmethod
    def from_dict(cls, values: Mapping[str, object]) -> Policy:
        """A policy from its stored dict; a stored ``min_effect`` is refused (``MIN_EFFECT_REMOVED``)."""
        values = dict(values)
        if "min_effect" in values:
            raise PolicyError(MIN_EFFECT_REMOVED)
        return cls(**values)  # type: ignore[arg-type]


@dataclass(frozen=True)
class Coverage:
    """How many of the judged queries each side answered, and how the rest were treated."""

    judged: int
    baseline_answered: int
    candidate_answered: int
    treatment: str

    def shares(self) -> tuple[float, float]:
        if self.judged == 0:
            return (1.0, 1.0)
        return (self.baseline_answered / self.judged, self.candidate_answered / self.judged)

    def describe(self) -> str:
        b, c = self.shares()
        return (f"baseline answered {self.baseline_answered} of {self.judged} judged queries ({b:.0%}), candidate "
                f"{self.candidate_answered} of {self.judged} ({c:.0%}); {self.treatment}")


@dataclass(frozen=True)
class JudgedShift:
    """Judged coverage of both sides at a measure's cutoff (``measure`` names it, e.g. ``Judged@10``), and
    what the unjudged documents could do to the comparison.

    ``baseline`` / ``candidate``: mean Judged@k over the compared queries; ``unjudged_documents``: the
    unjudged (query, document) pairs in either side's top k over those queries, the documents that would
    need judging. The per-query deltas over the compared queries (``evalops.judged.bounds``, each unjudged pair
    one grade in both runs): ``relevant_deltas`` the optimistic bound (the candidate's best case),
    ``lower_deltas`` the pessimistic one, ``condensed_deltas`` both runs with their unjudged documents
    removed (Sakai's condensed lists); empty when not scored. ``bound`` names how ``relevant_deltas`` was
    made: ``pair`` (the consistent bounds) or ``per-run`` (a record stored before them: the candidate's
    holes relevant, the baseline's not, which is not a bound of the delta and is never read again).
    """

    measure: str
    baseline: float
    candidate: float
    unjudged_documents: int
    relevant_deltas: tuple[float, ...] = ()
    lower_deltas: tuple[float, ...] = ()
    condensed_deltas: tuple[float, ...] = ()
    bound: str = "pair"

    @property
    def relevant_delta(self) -> float | None:
        """The mean delta under the optimistic bound (``None`` when it was not scored)."""
        return _mean(self.relevant_deltas)

    @property
    def lower_delta(self) -> float | None:
        """The mean delta under the pessimistic bound (``None`` when it was not scored)."""
        return _mean(self.lower_deltas)

    @property
    def condensed_delta(self) -> float | None:
        """The mean delta on condensed lists (``None`` when it was not scored)."""
        return _mean(self.condensed_deltas)

    @property
    def difference(self) -> float:
        """Candidate minus baseline (negative: the candidate's top k is less judged)."""
        return self.candidate - self.baseline

    def to_dict(self) -> dict[str, object]:
        out: dict[str, object] = {"measure": self.measure, "baseline": self.baseline, "candidate": self.candidate,
                                  "difference": self.difference, "unjudged_documents": self.unjudged_documents}
        if self.relevant_deltas:
            out.update(bound=self.bound, holes_relevant_delta=self.relevant_delta,
                       holes_relevant_deltas=list(self.relevant_deltas))
        if self.lower_deltas:
            out.update(holes_pessimistic_delta=self.lower_delta, holes_pessimistic_deltas=list(self.lower_deltas))
        if self.condensed_deltas:
            out.update(condensed_delta=self.condensed_delta, condensed_deltas=list(self.condensed_deltas))
        return out

    @classmethod
    def from_dict(cls, values: Mapping[str, Any]) -> JudgedShift:
        """A stored shift; a record without ``bound`` but with holes-relevant deltas was stored under the
        per-run bound (``per-run``)."""
        def deltas(key: str) -> tuple[float, ...]:
            return tuple(float(x) for x in values.get(key) or ())

        upper = deltas("holes_relevant_deltas")
        return cls(str(values["measure"]), float(values["baseline"]),
                   float(values["candidate"]), int(values["unjudged_documents"]),
                   upper, deltas("holes_pessimistic_deltas"), deltas("condensed_deltas"),
                   str(values.get("bound") or ("per-run" if upper else "pair")))

    def describe(self) -> str:
        n = self.unjudged_documents
        return (f"judged coverage {self.measure}: baseline {self.baseline:.0%}, candidate {self.candidate:.0%} "
                f"({self.difference:+.2f}); {n} unjudged document{'' if n == 1 else 's'} in the top k of either "
                f"version")


def _mean(values: tuple[float, ...]) -> float | None:
    return math.fsum(values) / len(values) if values else None


@dataclass(frozen=True)
class Evidence:
    """What the rule reads from one comparison.

    ``interval`` is the decision interval of the mean delta at ``interval_level`` (family-adjusted);
    ``tail`` its per-side error. ``degenerate`` is ``"all_zero"``, ``"constant"`` or ``None``; for constant
    deltas ``floor_p`` is the exact sign-flip p-value of one side. ``queries_lost`` / ``queries_gained``
    count deltas beyond -/+``query_drop``, ``query_drops_p`` their one-sided sign-test p-value.
    ``queries_needed`` is the n at which the rule would decide (``underpowered``, ``too_few_nonzero``,
    ``skewed_small_sample``). Under ``interval="robust"``: ``nonzero`` counts the non-zero deltas and
    ``robust`` names the branch that gave the interval (``evalops.stats.robust``: ``t``, ``betting``,
    ``constant``, ``too_few_nonzero``, ``unbounded``); ``p_value`` is then the rule's own test (the one the
    interval inverts) and ``p_adjusted`` its family-adjusted value, which is what decides;
    ``material_interval`` is the interval a claim past the margin (``critical``) is read from (the robust t
    branch's at half the per-side error, ``evalops.stats.robust.material_t``; ``None``: ``interval``).
    """

    n: int
    delta: float | None
    measure: str | None = None
    sd: float | None = None
    interval: tuple[float, float] | None = None
    interval_level: float | None = None
    tail: float | None = None
    interval_method: str = "t"
    material_interval: tuple[float, float] | None = None
    p_value: float = 1.0
    p_adjusted: float | None = None
    degenerate: str | None = None
    floor_p: float | None = None
    family_size: int = 1
    test: str = "t"
    coverage: Coverage | None = None
    queries_lost: int = 0
    queries_gained: int = 0
    query_drops_p: float = 1.0
    queries_needed: int | None = None
    judged: JudgedShift | None = None
    higher_is_better: bool = True
    nonzero: int | None = None
    robust: str | None = None
    strict_side: str | None = None  # the strict t-interval's claim beside the betting interval: "below" 0, "above"
    bounded: bool = True  # every delta in [-1, 1] (a retrieval measure): the broken-queries question applies


@dataclass(frozen=True)
class Decision:
    label: str
    reasons: tuple[str, ...]
    severity: str | None = None
    criterion: str | None = None
    reason_code: str | None = None
    margin: float | None = None


def notifies(decision: str, severity: str | None, criterion: str | None, alert_on: str) -> bool:
    """Does a decided comparison raise an alert under ``alert_on``? Only regressions ever do."""
    if decision != "regression":
        return False
    if severity == "critical":
        return True
    return severity == "warning" and alert_on == "warning"


def _g(x: float) -> str:
    return f"{x:.3g}"


def _interval_reason(ev: Evidence, policy: Policy, margin: float) -> str:
    lo, hi = ev.interval  # type: ignore[misc]
    family = (f"{_CORRECTION_NAMES[policy.correction]} of {ev.family_size}" if ev.family_size > 1
              else "a family of one")
    method = ("t-interval" if ev.interval_method == "t" else f"{ev.interval_method} interval"
              if ev.interval_method in INTERVAL_TESTS
              else f"{ev.interval_method} bootstrap interval")
    level = ev.interval_level if ev.interval_level is not None else 1.0 - 2.0 * (ev.tail or policy.alpha / 2.0)
    return (f"delta = {ev.delta:+.4f}, {level:.4g} {method} [{lo:+.4f}, {hi:+.4f}] ({family}, "
            f"{policy.alternative}); margin +-{margin:g}")


Reader = Callable[[Sequence[float]], "tuple[Decision, tuple[float, float] | None]"]
"""Reads per-query deltas with the comparison's own interval method and level (``evalops.stats.compare``
passes one): the rule's decision on them and the interval it was read from."""


def decide(evidence: Evidence, policy: Policy, read: Reader | None = None) -> Decision:
    """Apply the regression rule (module docstring) to one comparison.

    A lower-is-better measure (``higher_is_better=False``: context tokens, redundancy) is read as its
    reduction: the rule sees ``-delta`` and the mirrored interval, so a drop in tokens is an improvement and
    a rise a regression. ``read`` reads the bounds of the unjudged documents (``JudgedShift``) at the
    comparison's own interval and level; without it a regression on a less judged candidate is withheld."""
    if not evidence.higher_is_better:
        lo_hi = None if evidence.interval is None else (-evidence.interval[1], -evidence.interval[0])
        material = evidence.material_interval
        # queries_lost / queries_gained already count in the measure's direction (``compare``)
        mirrored = replace(evidence, higher_is_better=True, interval=lo_hi,
                           material_interval=None if material is None else (-material[1], -material[0]),
                           delta=None if evidence.delta is None else -evidence.delta)
        decided = decide(mirrored, policy)
        note = "lower is better: the rule reads the reduction (baseline - candidate) as the gain"
        return Decision(decided.label, (note, *decided.reasons), decided.severity, decided.criterion,
                        decided.reason_code, decided.margin)
    return _with_judged(_decide(evidence, policy), evidence, policy, read)


def _with_judged(decided: Decision, ev: Evidence, policy: Policy, read: Reader | None) -> Decision:
    """Judged coverage: reported with every decided comparison. A regression on a candidate whose top k is
    less judged than the baseline's by more than the policy allows is read again (module docstring): under
    the optimistic consistent bound, then on condensed lists; it stands when either shows it, else it is
    withheld (``unjudged_documents``), which the gate and the alerts fail closed on."""
    if ev.judged is None or decided.reason_code in ("partial_run", "too_few_queries"):
        return decided
    j = ev.judged
    words = j.describe()
    if not (decided.label == "regression" and j.difference < -policy.max_judged_coverage_drop):
        return Decision(decided.label, (*decided.reasons[:-1], words, decided.reasons[-1]), decided.severity,
                        decided.criterion, decided.reason_code, decided.margin)
    n = j.unjudged_documents
    why = (f"unjudged_documents: the candidate's judged coverage is {-j.difference:.2f} below the baseline's, "
           f"more than the {policy.max_judged_coverage_drop:g} allowed")
    judge = f"judge the {n} unjudged document{'' if n == 1 else 's'} (annotation queue, source hole)"
    # the judged reading's conclusion holds only if every unjudged document is non-relevant: said so
    judged_words = f"as judged (every unjudged document non-relevant): {decided.reasons[-1]}"
    kept = (*decided.reasons[:-1], words, judged_words)
    bounded = j.bound == "pair" and bool(j.relevant_deltas) and read is not None
    if not bounded:  # stored before the consistent bounds: withheld
        return Decision("inconclusive", (
            *kept, f"{why}; no consistent bound of the unjudged documents was scored for this comparison, so "
                   f"the drop may be theirs. {judge[0].upper()}{judge[1:]} to decide it",
        ), None, None, "unjudged_documents", decided.margin)
    upper, upper_interval = read(j.relevant_deltas)  # type: ignore[misc]
    span = _bounds_words(ev, j, upper_interval)
    if upper.label == "regression":
        return Decision("regression", (
            *kept, f"{why}, but the drop holds under both bounds ({span}): a regression "
                   f"({upper.severity} under the optimistic bound); {judge} to narrow the bounds",
        ), upper.severity, upper.criterion, "unjudged_documents", decided.margin)
    condensed = condensed_interval = None
    if j.condensed_deltas:
        condensed, condensed_interval = read(j.condensed_deltas)  # type: ignore[misc]
    lean = ("" if condensed is None else
            f"; on the judged documents alone (condensed lists) delta {j.condensed_delta:+.4f}"
            + ("" if condensed_interval is None else
               f" [{condensed_interval[0]:+.4f}, {condensed_interval[1]:+.4f}]") + f": {condensed.label}")
    if condensed is not None and condensed.label == "regression":
        severity = "warning" if "warning" in (decided.severity, condensed.severity) else "critical"
        criterion = decided.criterion if severity == decided.severity else condensed.criterion
        return Decision("regression", (
            *kept, f"{why}; the bounds disagree ({span}: {upper.label} under the optimistic bound){lean}: a "
                   f"regression on the judged evidence, not a bound; {judge} to confirm it",
        ), severity, criterion, "unjudged_documents", decided.margin)
    return Decision("inconclusive", (
        *kept, f"{why}, and the bounds disagree ({span}: {upper.label} under the optimistic bound){lean}; "
               f"the drop may be the unjudged documents': {judge} to decide it",
    ), None, None, "unjudged_documents", decided.margin)


def _bounds_words(ev: Evidence, j: JudgedShift, interval: tuple[float, float] | None) -> str:
    """``delta as judged, optimistic [interval], pessimistic`` in words."""
    shown = "" if interval is None else f" [{interval[0]:+.4f}, {interval[1]:+.4f}]"
    low = "" if j.lower_delta is None else f", {j.lower_delta:+.4f} at worst (the pessimistic bound)"
    return (f"delta {ev.delta:+.4f} with every unjudged document non-relevant, {j.relevant_delta:+.4f}{shown} "
            f"at best (the optimistic bound: each unjudged document one grade in both versions){low}")


def _decide(evidence: Evidence, policy: Policy) -> Decision:
    """The rule's two questions (module docstring): did the mean drop, and did the candidate break queries."""
    return _broken_queries(_decide_mean(evidence, policy), evidence, policy)


def _broken_queries(decided: Decision, ev: Evidence, policy: Policy) -> Decision:
    """*Did the candidate break queries?* An exact one-sided sign test of the queries that lost at least
    ``query_drop`` against those that gained that much: with ``L`` large losses and ``G`` large gains,
    ``p = P(Binomial(L + G, 1/2) >= L)``, exact whenever large losses and large gains are equally likely (any
    change symmetric about 0, whatever its shape). Below the family's per-side error (``tail``) the
    comparison is a ``regression`` (``warning``, criterion ``broken_queries``), whatever the mean does: a
    few queries broken outright and the rest unchanged is the commonest real regression, and no test of the
    mean valid for every distribution on [-1, 1] can see it (a rare large gain would explain the same
    sample). It reads bounded measures only (deltas in [-1, 1]), and drops only (a ``greater`` policy looks
    for gains)."""
    if (not policy.broken_queries or ev.queries_lost == 0 or ev.tail is None or not ev.bounded
            or decided.label == "regression" or decided.reason_code in ("partial_run", "too_few_queries")
            or policy.alternative == "greater"):
        return decided
    if ev.query_drops_p >= ev.tail:
        return decided
    lost, gained = ev.queries_lost, ev.queries_gained
    why = (f"broken_queries: {lost} quer{'y' if lost == 1 else 'ies'} lost {policy.query_drop:g} or more and "
           f"{gained} gained that much; the exact sign test of large losses against large gains gives "
           f"p = {_g(ev.query_drops_p)} (one-sided), under the family's {_g(ev.tail)} per side: the candidate "
           f"breaks queries (warning), whatever its mean")
    mean = f"the mean alone: {decided.label}" + (f" ({decided.reason_code})" if decided.reason_code else "")
    return Decision("regression", (*decided.reasons, mean, why), "warning", "broken_queries", None, decided.margin)


# The rule's sentences on the interval: a reading's code and numbers (``_read_interval``) become its words here.
_INTERVAL_WORDS = {
    "material_drop": "the whole interval lies below -{margin:g}: a material drop (critical)",
    "material_gain": "the whole interval lies above +{margin:g}: a material gain",
    "equivalent_drop": "a significant drop, but the interval rules out a drop of {margin:g} or more: no material "
                       "change",
    "equivalent_gain": "a significant gain, but the interval rules out a gain of {margin:g} or more: no material "
                       "change",
    "non_inferior": "the interval rules out a drop of {margin:g} or more (non-inferiority)",
    "no_large_gain": "the interval rules out a gain of {margin:g} or more",
    "equivalent": "the interval lies inside +-{margin:g} (equivalence, TOST): no material change",
    "significant_drop": "the interval lies below 0 but {reading}reaches past -{margin:g}: a significant drop, size "
                        "uncertain (warning)",
    "significant_gain": "the interval lies above 0 but {reading}reaches past +{margin:g}: a significant gain, size "
                        "uncertain",
    "strict_drop": "the betting interval reaches past 0, but the skew-corrected t-interval at a tenth of the "
                   "per-side error lies below 0 and the bets on a drop have at least doubled their wealth: a "
                   "significant drop, size uncertain (warning)",
    "strict_gain": "the betting interval reaches past 0, but the skew-corrected t-interval at a tenth of the "
                   "per-side error lies above 0 and the bets on a gain have at least doubled their wealth: a "
                   "significant gain, size uncertain",
    "gains_only": "the one-sided policy only looks for gains",
    "drops_only": "the one-sided policy only looks for drops",
    "skewed": "the deltas are too skewed or sparse for the t-interval at this n (Cochran's rule), and the betting "
              "interval, which holds its level for any shape, is too wide to tell",
    "skewed_strict": ", as is the skew-corrected t-interval at a tenth of the per-side error read beside it",
    "skewed_needed": ": about {needed} queries would let the t-interval decide",
    "underpowered": "the interval is too wide to tell: about {needed} queries would decide it (80% power to call "
                    "a drop of 1.5 x margin critical, this rule and family)",
    "too_wide": "the interval is too wide to tell a material change from none",
    "material_reading": "a claim past the margin is read from the t-interval at half the per-side error: "
                        "[{low:+.4f}, {high:+.4f}]",
}
_MATERIAL_READING = "its material reading "


def _refused(ev: Evidence, policy: Policy, margin: float) -> Decision | None:
    """The comparisons the interval does not decide: a partial run, too few queries, no change at all, a
    sample the robust rule has no trustworthy interval for, no interval."""
    if ev.coverage is not None:
        shares = ev.coverage.shares()
        if min(shares) < policy.min_coverage:
            side = "baseline" if shares[0] <= shares[1] else "candidate"
            return Decision("inconclusive", (
                ev.coverage.describe(),
                f"the {side} answered {min(shares):.0%} of the judged queries, under the minimum coverage of "
                f"{policy.min_coverage:.0%}: a partial run is shown but not decided",
            ), reason_code="partial_run", margin=margin)
    if ev.n < 2 or ev.delta is None:
        return Decision("inconclusive", (
            f"only {ev.n} paired quer{'y' if ev.n == 1 else 'ies'}; a paired comparison needs at least 2",),
            reason_code="too_few_queries", margin=margin)
    if ev.degenerate == "all_zero":
        return Decision("no_change", (f"both versions score the same on all {ev.n} queries (every delta is 0)",),
                        criterion="equivalence", margin=margin)
    skewed = _robust_refusal(ev, margin)
    if skewed is not None:
        return skewed
    if ev.interval is None:
        return Decision("inconclusive", ("no interval of the mean delta could be computed",),
                        reason_code="too_few_queries", margin=margin)
    return None


def _p_reason(ev: Evidence) -> str:
    p = ev.p_adjusted if ev.p_adjusted is not None else ev.p_value
    if ev.robust is not None:
        return (f"{'adjusted ' if ev.family_size > 1 else ''}p = {_g(p)} (the {ev.interval_method} test "
                "the interval inverts; it decides with the interval)")
    return (f"{'adjusted ' if ev.family_size > 1 else ''}p = {_g(p)} "
            f"({_TEST_NAMES.get(ev.test, ev.test)}; reported, the interval decides)")


def _constant(ev: Evidence, policy: Policy, margin: float, reasons: list[str]) -> Decision | None:
    """Every query changed by the same amount: said in ``reasons``; decided here when the point alone
    settles it (inside the margin under the robust rule; too few queries for any p under the others)."""
    assert ev.delta is not None
    tail = ev.tail if ev.tail is not None else policy.alpha / 2.0
    if ev.robust is not None:
        reasons.append(f"every query changed by the same {ev.delta:+.4g} (sd = 0): the point shows whether the "
                       "change is inside the margin; a change needs the betting interval (a constant sample "
                       "cannot rule out a rare query that moved the other way by up to 1)")
        if abs(ev.delta) < margin:  # inside the margin on every query: no material change
            return _with_drops(Decision("no_change", (*reasons, f"every query moved by less than the margin "
                                                      f"{margin:g}: no material change"), None, "equivalence",
                                        None, margin), ev, policy)
        return None
    reasons.append(f"every query changed by the same {ev.delta:+.4g} (sd = 0): the interval is the point")
    if ev.floor_p is not None and ev.floor_p >= tail:
        need = next(k for k in range(2, 200) if 2.0**-k < tail)
        reasons.append(f"with every delta equal, {ev.n} queries can give at best p = {_g(ev.floor_p)} per side "
                       f"against the {_g(tail)} needed; at least {need} are needed")
        return Decision("inconclusive", tuple(reasons), reason_code="underpowered", margin=margin)
    return None


def _read_interval(ev: Evidence, alternative: str, margin: float
                   ) -> tuple[str, str | None, str | None, str | None, tuple[str, ...]]:
    """The rule's reading of the decision interval: ``(label, severity, criterion, reason code, sentence
    codes)``, the codes keys of :data:`_INTERVAL_WORDS`."""
    assert ev.interval is not None  # refused before (_refused)
    lo, hi = ev.interval
    mlo, mhi = ev.material_interval if ev.material_interval is not None else ev.interval
    down, up = alternative in ("two-sided", "less"), alternative in ("two-sided", "greater")
    if down and mhi < -margin:
        return "regression", "critical", "material", None, ("material_drop",)
    if up and mlo > margin:
        return "improvement", "critical", "material", None, ("material_gain",)
    if (lo > -margin if not up else hi < margin if not down else (lo > -margin and hi < margin)):
        code = ("equivalent_drop" if hi < 0 and down else "equivalent_gain" if lo > 0 and up
                else "non_inferior" if alternative == "less" else "no_large_gain" if alternative == "greater"
                else "equivalent")
        return "no_change", None, "equivalence", None, (code,)
    if down and hi < 0:
        return "regression", "warning", "significant", None, ("significant_drop",)
    if up and lo > 0:
        return "improvement", "warning", "significant", None, ("significant_gain",)
    if ev.strict_side is not None and ((down and ev.strict_side == "below") or (up and ev.strict_side == "above")):
        drop = ev.strict_side == "below"
        return ("regression" if drop else "improvement"), "warning", "significant", None, (
            "strict_drop" if drop else "strict_gain",)
    if not down and hi < 0:  # greater-only policy, a drop
        return "no_change", None, None, None, ("gains_only",)
    if not up and lo > 0:
        return "no_change", None, None, None, ("drops_only",)
    if ev.robust in ("betting", "constant"):
        codes = ("skewed",) + (("skewed_strict",) if ev.interval_method == "betting and strict t" else ()) + (
            ("skewed_needed",) if ev.queries_needed is not None else ())
        return "inconclusive", None, None, "skewed_small_sample", codes
    return "inconclusive", None, None, "underpowered", (
        "underpowered" if ev.queries_needed is not None else "too_wide",)


def _decide_mean(evidence: Evidence, policy: Policy) -> Decision:
    """*Did the mean drop?* The decision interval against the margin (module docstring)."""
    ev = evidence
    margin = policy.margin(ev.measure)
    refused = _refused(ev, policy, margin)
    if refused is not None:
        return refused
    reasons = [_interval_reason(ev, policy, margin), _p_reason(ev)]
    if ev.degenerate == "constant":
        decided = _constant(ev, policy, margin, reasons)
        if decided is not None:
            return decided
    assert ev.interval is not None  # refused before (_refused)
    lo, hi = ev.interval
    mlo, mhi = ev.material_interval if ev.material_interval is not None else ev.interval
    down, up = policy.alternative in ("two-sided", "less"), policy.alternative in ("two-sided", "greater")
    values = {"margin": margin, "needed": ev.queries_needed, "low": mlo, "high": mhi,
              "reading": _MATERIAL_READING if (down and hi < -margin) or (up and lo > margin) else ""}
    if (mlo, mhi) != (lo, hi) and ((down and hi < -margin) or (up and lo > margin)):
        reasons.append(_INTERVAL_WORDS["material_reading"].format(**values))
    label, severity, criterion, code, words = _read_interval(ev, policy.alternative, margin)
    why = "".join(_INTERVAL_WORDS[w] for w in words).format(**values)
    return _with_drops(Decision(label, (*reasons, why), severity, criterion, code, margin), ev, policy)


def _robust_refusal(ev: Evidence, margin: float) -> Decision | None:
    """``inconclusive`` where the robust rule has no interval it can trust (``evalops.stats.robust``)."""
    need = f": about {ev.queries_needed} queries would decide it" if ev.queries_needed is not None else ""
    if ev.robust == "too_few_nonzero":
        k = ev.nonzero or 0
        return Decision("inconclusive", (
            f"delta = {ev.delta:+.4f} over {ev.n} queries, but only {k} of them changed (non-zero delta); no "
            f"interval holds its level on fewer than 6 changed queries, constant or not{need}",
        ), reason_code="too_few_nonzero", margin=margin)
    if ev.robust == "unbounded":
        return Decision("inconclusive", (
            f"delta = {ev.delta:+.4f} over {ev.n} queries: the deltas are too skewed for the t-interval at this n "
            f"(Cochran's rule) and lie outside [-1, 1], where no betting interval exists{need}",
        ), reason_code="skewed_small_sample", margin=margin)
    return None


def _with_drops(decided: Decision, ev: Evidence, policy: Policy) -> Decision:
    """The lost and gained queries, reported before the conclusion (their own question:
    :func:`_broken_queries`)."""
    if ev.queries_lost == 0:
        return decided
    words = (f"{ev.queries_lost} quer{'y' if ev.queries_lost == 1 else 'ies'} lost {policy.query_drop:g} or more "
             f"({ev.queries_gained} gained that much; sign test p = {_g(ev.query_drops_p)})")
    # reported before the conclusion, which stays the last reason
    return Decision(decided.label, (*decided.reasons[:-1], words, decided.reasons[-1]), decided.severity,
                    decided.criterion, decided.reason_code, decided.margin)
