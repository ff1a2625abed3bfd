"""Paired statistics for comparing two retriever versions on the same queries, and the regression rule.

Everything here is a pure function over aligned per-query vectors (``delta = candidate - baseline``):
no I/O, no printing, no rounding, randomness passed in as a seed or ``numpy.random.Generator``.

* alignment by query id: ``align`` -> ``Paired``;
* tests: ``paired_t_test`` (vectorised kernel ``paired_t``), ``wilcoxon_test``,
  ``paired_randomization_test``; bootstrap CI of the mean delta: ``paired_bootstrap_ci``;
* effect sizes: ``cohens_dz``, ``dz_confidence_interval``, ``hedges_correction``, ``relative_change``,
  ``win_tie_loss``;
* power: ``paired_power``, ``paired_sample_size``, ``minimum_detectable_effect``;
* correction: ``adjust_p_values`` (``holm``, ``benjamini_hochberg``);
* the rule: ``Policy``, ``Evidence``, ``decide`` (margins in the measure's units, family-adjusted intervals,
  severities); its default decision interval, skew-corrected t or betting (``evalops.stats.robust``); its
  power: ``rule_power``, ``rule_sample_size``; daily looks: ``spending_tail``;
* the record: ``compare``, ``adjust_and_decide``, ``decide_in_family``; ``Comparison`` declares its fields
  (``RECORD_FIELDS``) and is the one typed record every reader holds (``Comparison.from_record`` reads
  its JSON back).
"""

from __future__ import annotations

from evalops.stats._base import ALTERNATIVES, DZ_CAP, TestResult
from evalops.stats.align import MISSING_POLICIES, Paired, align
from evalops.stats.bootstrap import Interval, bootstrap_interval, bootstrap_means, paired_bootstrap_ci
from evalops.stats.compare import RECORD_FIELDS, Comparison, QueryChange, RuleOutcome, adjust_and_decide, compare, decide_deltas, decide_in_family, sign_test_p

from evalops.stats.correction import CORRECTIONS, adjust_p_values, benjamini_hochberg, holm
from evalops.stats.decision import (
    ALERT_ON,
    CRITERIA,
    DECISIONS,
    DEFAULT_MIN_DELTA,
    REASON_CODES,
    SEVERITIES,
    TESTS,
    Coverage,
    Decision,
    Evidence,
    JudgedShift,
    Policy,
    PolicyError,
    decide,
    notifies,
)
from evalops.stats.effect import (
    WinTieLoss,
    cohens_dz,
    dz_confidence_interval,
    hedges_correction,
    relative_change,
    win_tie_loss,
)
from evalops.stats.power import (
    minimum_detectable_effect,
    paired_power,
    paired_sample_size,
    two_sample_normal_sample_size,
)
from evalops.stats.rule import RulePower, family_tail, rule_power, rule_sample_size, spending_tail
from evalops.stats.randomization import paired_randomization_test, sign_flip_count
from evalops.stats.ttest import paired_t, paired_t_test
from evalops.stats.wilcoxon import ZERO_METHODS, wilcoxon_test

__all__ = [
    "ALERT_ON",
    "ALTERNATIVES",
    "CRITERIA",
    "DEFAULT_MIN_DELTA",
    "REASON_CODES",
    "SEVERITIES",
    "Coverage",
    "RulePower",
    "RuleOutcome",
    "decide_deltas",
    "decide_in_family",
    "family_tail",
    "notifies",
    "rule_power",
    "rule_sample_size",
    "sign_test_p",
    "spending_tail",
    "CORRECTIONS",
    "DECISIONS",
    "DZ_CAP",
    "MISSING_POLICIES",
    "TESTS",
    "ZERO_METHODS",
    "Comparison",
    "RECORD_FIELDS",
    "Decision",
    "Evidence",
    "JudgedShift",
    "Interval",
    "Paired",
    "Policy",
    "PolicyError",
    "QueryChange",
    "TestResult",
    "WinTieLoss",
    "adjust_and_decide",
    "adjust_p_values",
    "align",
    "benjamini_hochberg",
    "bootstrap_interval",
    "bootstrap_means",
    "cohens_dz",
    "compare",
    "decide",
    "dz_confidence_interval",
    "hedges_correction",
    "holm",
    "minimum_detectable_effect",
    "paired_bootstrap_ci",
    "paired_power",
    "paired_randomization_test",
    "paired_sample_size",
    "paired_t",
    "paired_t_test",
    "relative_change",
    "sign_flip_count",
    "two_sample_normal_sample_size",
    "wilcoxon_test",
    "win_tie_loss",
]
