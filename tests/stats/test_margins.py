"""Default margins per measure (``evalops.stats.margins``): the table, its precedence, and how it is stored."""

import numpy as np
import pytest

from evalops.stats import Policy, decide_deltas
from evalops.stats.margins import DEFAULT_MARGINS, FALLBACK_MARGIN, measure_family, table_margin


@pytest.mark.parametrize(
    ("measure", "margin"),
    [("P@10", 0.01), ("P@5", 0.01), ("R@100", 0.02), ("nDCG@10", 0.02), ("nDCG(gains=exponential)@10", 0.02),
     ("RR@10", 0.03), ("MRR@10", 0.03), ("AP", 0.02), ("MAP@100", 0.02), ("Success@10", 0.04), ("Hit@5", 0.04),
     ("R-Prec", 0.02), ("Rprec", 0.02), ("ContextPrecision@10", 0.03), ("F1@10", 0.01), ("Bpref", 0.03),
     ("Judged@10", FALLBACK_MARGIN), ("Tokens@10", FALLBACK_MARGIN)],
)
def test_the_default_policy_gives_each_measure_its_own_margin(measure, margin):
    assert Policy().margin(measure) == margin
    assert table_margin(measure, DEFAULT_MARGINS) == margin


def test_family_names_resolve_aliases_parameters_and_cutoffs():
    assert [measure_family(m) for m in ("MRR@10", "MAP", "Hit@5", "nDCG(gains=exponential)@10", "P@5")] == [
        "RR", "AP", "Success", "nDCG", "P"]


def test_a_margins_entry_beats_min_delta_which_beats_the_table():
    assert Policy(margins={"nDCG@10": 0.05}).margin("nDCG@10") == 0.05
    explicit = Policy(min_delta=0.01, margins={"nDCG@10": 0.05})
    assert (explicit.margin("nDCG@10"), explicit.margin("Success@10"), explicit.margin("P@10")) == (0.05, 0.01, 0.01)
    assert Policy(default_margins={"nDCG": 0.03}).margin("nDCG@10") == 0.03
    assert Policy(default_margins={"nDCG": 0.03}).margin("AP") == FALLBACK_MARGIN  # the policy's table only
    assert Policy().margin(None) == FALLBACK_MARGIN


def test_the_table_is_stored_with_the_policy():
    stored = Policy().to_dict()
    assert stored["min_delta"] is None and stored["default_margins"] == dict(DEFAULT_MARGINS)
    assert Policy.from_dict(stored) == Policy()
    # a later change of the table does not change how a stored policy reads
    stored["default_margins"] = {**stored["default_margins"], "nDCG": 0.05}
    assert Policy.from_dict(stored).margin("nDCG@10") == 0.05


def test_a_policy_stored_before_the_table_keeps_its_single_margin():
    old = {"alpha": 0.05, "alternative": "two-sided", "min_delta": 0.01, "margins": {}, "alert_on": "warning",
           "correction": "holm", "test": "t", "interval": "robust"}
    policy = Policy.from_dict(old)
    assert [policy.margin(m) for m in ("nDCG@10", "Success@10", "RR@10")] == [0.01, 0.01, 0.01]


def test_the_decision_reads_the_measures_margin():
    rng = np.random.default_rng(4)
    d = rng.normal(-0.03, 0.05, 400)  # a drop of 0.03, interval about [-0.035, -0.025]
    assert decide_deltas(d, Policy(), measure="nDCG@10", size_hint=False).decision.severity == "critical"
    success = decide_deltas(d, Policy(), measure="Success@10", size_hint=False)  # margin 0.04: not material
    assert (success.margin, success.decision.label, success.decision.criterion) == (0.04, "no_change", "equivalence")
