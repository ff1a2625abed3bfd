"""The rule withholds a regression on a candidate whose top k is less judged than the policy allows."""

from __future__ import annotations

import numpy as np
import pytest

from evalops.stats import JudgedShift, Policy, PolicyError, adjust_and_decide, align, compare


def _drop(n=200, shift=-0.05, seed=0):
    rng = np.random.default_rng(seed)
    ids = [f"q{i}" for i in range(n)]
    b = rng.uniform(0.2, 0.9, n)
    return align(dict(zip(ids, b)), dict(zip(ids, np.clip(b + shift + rng.normal(0, 0.03, n), 0, 1))))


def test_a_less_judged_candidate_is_not_called_a_regression():
    plain = compare(_drop(), measure="nDCG@10")
    assert plain.decision == "regression"
    holes = JudgedShift("Judged@10", baseline=0.9, candidate=0.7, unjudged_documents=412)
    comp = compare(_drop(), measure="nDCG@10", judged=holes)
    assert (comp.decision, comp.reason_code, comp.severity, comp.alert) == (
        "inconclusive", "unjudged_documents", None, False)
    assert "Judge the 412 unjudged documents" in comp.reasons[-1]
    assert "no consistent bound of the unjudged documents was scored" in comp.reasons[-1]
    assert "judged coverage Judged@10: baseline 90%, candidate 70% (-0.20)" in " ".join(comp.reasons)
    assert comp.judged_coverage == {"measure": "Judged@10", "baseline": 0.9, "candidate": 0.7,
                                    "difference": pytest.approx(-0.2), "unjudged_documents": 412}
    assert comp.to_dict()["judged_coverage"] == comp.judged_coverage
    # decided again in a family, the judged coverage travels with the record
    [again] = adjust_and_decide([comp])
    assert again.reason_code == "unjudged_documents"


def test_the_threshold_is_the_policy_and_only_a_regression_is_withheld():
    small = JudgedShift("Judged@10", 0.9, 0.85, 30)
    comp = compare(_drop(), measure="nDCG@10", judged=small)
    assert comp.decision == "regression"  # 0.05 below, within the default 0.1
    assert any(r.startswith("judged coverage Judged@10") for r in comp.reasons)
    strict = Policy(max_judged_coverage_drop=0.01)
    assert compare(_drop(), measure="nDCG@10", policy=strict, judged=small).reason_code == "unjudged_documents"
    # an improvement read from a less judged candidate stands (the bias lowers its score)
    up = compare(_drop(shift=0.05), measure="nDCG@10", judged=JudgedShift("Judged@10", 0.9, 0.5, 900))
    assert up.decision == "improvement"
    # a more judged candidate is never withheld
    more = compare(_drop(), measure="nDCG@10", judged=JudgedShift("Judged@10", 0.5, 0.9, 3))
    assert more.decision == "regression"


def test_a_regression_that_holds_under_the_optimistic_bound_stands_and_one_that_does_not_is_inconclusive():
    paired = _drop()
    lower = paired.candidate - paired.baseline
    rng = np.random.default_rng(1)
    # the optimistic bound: still a clear drop (the candidate lost judged relevant documents), of about
    # 0.035, past nDCG's default margin of 0.02
    still = JudgedShift("Judged@10", 0.9, 0.6, 300, tuple(lower + 0.015 + rng.normal(0, 0.01, len(lower))))
    comp = compare(paired, measure="nDCG@10", judged=still)
    assert (comp.decision, comp.reason_code, comp.alert) == ("regression", "unjudged_documents", True)
    assert comp.severity == "critical"
    assert "the drop holds under both bounds" in comp.reasons[-1]
    assert f"delta {comp.delta:+.4f} with every unjudged document non-relevant" in comp.reasons[-1]
    # the judged reading's conclusion is kept, said to hold only with the unjudged documents non-relevant
    assert comp.reasons[-2].startswith("as judged (every unjudged document non-relevant): ")
    assert comp.judged_coverage["holes_relevant_delta"] == pytest.approx(float(np.mean(still.relevant_deltas)))
    assert comp.judged_coverage["bound"] == "pair"
    again = adjust_and_decide([comp, comp])  # a family of two reads the bound at its own level
    assert {(c.decision, c.reason_code, c.family_size) for c in again} == {("regression", "unjudged_documents", 2)}
    boot = compare(paired, measure="nDCG@10", judged=still, policy=Policy(interval="bootstrap", n_resamples=2000))
    assert (boot.decision, boot.reason_code) == ("regression", "unjudged_documents")  # the bound's own bootstrap
    # the bound is a gain and no condensed lists: the drop may be the holes'
    gain = JudgedShift("Judged@10", 0.9, 0.6, 300, tuple(-lower))
    comp = compare(paired, measure="nDCG@10", judged=gain)
    assert (comp.decision, comp.reason_code, comp.severity, comp.alert) == (
        "inconclusive", "unjudged_documents", None, False)
    assert "the bounds disagree" in comp.reasons[-1] and "improvement under the optimistic bound" in comp.reasons[-1]
    # a drop under the bound that is not material (inside the margin) does not stand either
    small = JudgedShift("Judged@10", 0.9, 0.6, 300, tuple(rng.normal(-0.001, 0.001, len(lower))))
    assert compare(paired, measure="nDCG@10", judged=small).decision == "inconclusive"


def test_when_the_bounds_disagree_the_condensed_lists_decide_and_say_it_is_not_a_bound():
    """Bounds of opposite signs: the comparison on the judged documents alone (condensed lists) is read at the
    same level; a drop there is a regression on the judged evidence (the weaker severity), none is withheld."""
    paired = _drop()
    lower = paired.candidate - paired.baseline
    gain = tuple(-lower)
    shown = JudgedShift("Judged@10", 0.9, 0.6, 300, gain, tuple(lower * 2), tuple(lower))
    comp = compare(paired, measure="nDCG@10", judged=shown)
    assert (comp.decision, comp.reason_code, comp.alert) == ("regression", "unjudged_documents", True)
    assert "on the judged documents alone (condensed lists)" in comp.reasons[-1]
    assert "a regression on the judged evidence, not a bound" in comp.reasons[-1]
    assert comp.judged_coverage["condensed_delta"] == pytest.approx(float(np.mean(lower)))
    flat = JudgedShift("Judged@10", 0.9, 0.6, 300, gain, tuple(lower * 2), tuple(np.zeros(len(lower))))
    held = compare(paired, measure="nDCG@10", judged=flat)
    assert (held.decision, held.reason_code) == ("inconclusive", "unjudged_documents")
    assert "on the judged documents alone (condensed lists) delta +0.0000" in held.reasons[-1]
    # a record stored under the old per-run bound is never read as a bound again: withheld
    stored = JudgedShift.from_dict({"measure": "Judged@10", "baseline": 0.9, "candidate": 0.6,
                                    "unjudged_documents": 300, "holes_relevant_deltas": list(lower)})
    assert stored.bound == "per-run"
    assert compare(paired, measure="nDCG@10", judged=stored).decision == "inconclusive"


@pytest.mark.parametrize("bad", [-0.1, 1.5, "x"])
def test_a_bad_threshold_is_refused(bad):
    with pytest.raises(PolicyError, match="max_judged_coverage_drop"):
        Policy(max_judged_coverage_drop=bad)


def test_a_lower_is_better_measure_is_read_as_its_reduction():
    rising = _drop(shift=0.05)  # the candidate's values are higher: more tokens
    up = compare(rising, measure="Tokens@10", higher_is_better=False)
    assert up.decision == "regression" and up.delta > 0  # the record keeps candidate - baseline
    assert up.reasons[0].startswith("lower is better")
    assert all(w.delta > 0 for w in up.worst_queries)  # the worst queries are the largest rises
    down = compare(_drop(shift=-0.05), measure="Tokens@10", higher_is_better=False)
    assert down.decision == "improvement"
    [again] = adjust_and_decide([up])
    assert again.decision == "regression" and again.higher_is_better is False
