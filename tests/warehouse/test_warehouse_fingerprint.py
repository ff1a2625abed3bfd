"""The eval fingerprint: stable, order-independent, and able to say which component changed."""

from __future__ import annotations

import numpy as np
import pytest

from evalops.errors import InputError
from evalops.fingerprint import COMPONENTS, EvalFingerprint

BASE = dict(
    gold_set_version="gold-3f2a",
    kb_snapshot_id="kb-2024-05-01",
    measures=["nDCG@10", "P@5", "RR@10"],
    policies={"ties": "trec_eval", "missing": "zero", "no_answer": "skip", "gain": "linear"},
)


def fp(**changes) -> EvalFingerprint:
    return EvalFingerprint.of(**{**BASE, **changes})


def test_hash_is_pinned_so_a_scheme_change_cannot_go_unnoticed():
    # The SHA-256 of the documented canonical JSON, computed independently. A change here makes every
    # stored baseline stale: change SCHEME deliberately if the canonical form must change.
    assert fp().hash == "5aa74075b7cad7e69df43fa8e5647aabf4159e4e12938656e1040ea046597376"
    assert fp().hash == fp().hash
    assert fp().short == fp().hash[:12]


def test_measure_order_and_repetition_do_not_change_the_hash():
    assert fp(measures=["RR@10", "P@5", "nDCG@10", "P@5"]).hash == fp().hash
    assert fp().measures == ("P@5", "RR@10", "nDCG@10")


def test_policy_key_order_tuples_and_integral_floats_do_not_change_the_hash():
    reordered = dict(reversed(list(BASE["policies"].items())))
    assert fp(policies=reordered).hash == fp().hash
    assert fp(policies={"cutoffs": (5, 10)}).hash == fp(policies={"cutoffs": [5, 10]}).hash
    assert fp(policies={"alpha": 1.0}).hash == fp(policies={"alpha": 1}).hash
    assert fp(policies={"alpha": np.float64(0.05)}).hash == fp(policies={"alpha": 0.05}).hash
    assert fp(policies={"k": np.int64(3), "on": np.bool_(True)}).hash == fp(policies={"k": 3, "on": True}).hash


def test_bool_and_int_policies_stay_distinct():
    assert fp(policies={"x": True}).hash != fp(policies={"x": 1}).hash


@pytest.mark.parametrize(
    "component, change",
    [
        ("gold_set_version", {"gold_set_version": "gold-9e1b"}),
        ("kb_snapshot_id", {"kb_snapshot_id": "kb-2024-05-02"}),
        ("measures", {"measures": ["nDCG@10", "P@5", "RR@10", "R@100"]}),
        ("policies", {"policies": {**BASE["policies"], "ties": "average"}}),
    ],
)
def test_each_component_changes_the_hash_and_is_named_by_diff(component, change):
    other = fp(**change)
    assert other.hash != fp().hash
    assert other.diff(fp()) == (component,)
    assert fp().diff(fp()) == ()
    assert len(other.explain(fp())) == 1
    assert other.explain(fp())[0].startswith(component)


def test_diff_lists_several_components_in_a_fixed_order():
    other = fp(policies={"ties": "average"}, gold_set_version="g2")
    assert other.diff(fp()) == ("gold_set_version", "policies")
    assert set(COMPONENTS) == {"gold_set_version", "kb_snapshot_id", "measures", "policies"}


def test_explain_says_what_changed():
    new = fp(measures=["nDCG@10", "R@100"], policies={**BASE["policies"], "ties": "average", "extra": 1})
    lines = new.explain(fp())
    assert "measures: +R@100 -P@5 -RR@10" in lines
    assert 'policies.ties: "trec_eval" -> "average"' in lines
    assert "policies.extra: (unset) -> 1" in lines


def test_round_trip_through_a_dict():
    original = fp()
    assert EvalFingerprint.from_dict(original.to_dict()) == original
    assert EvalFingerprint.from_dict(original.to_dict()).hash == original.hash


def test_policies_are_returned_as_a_copy():
    original = fp()
    original.policies["ties"] = "changed"
    assert original.policies["ties"] == "trec_eval"


@pytest.mark.parametrize(
    "changes, message",
    [
        ({"gold_set_version": ""}, "gold_set_version"),
        ({"kb_snapshot_id": None}, "kb_snapshot_id"),
        ({"measures": []}, "measures"),
        ({"measures": ["nDCG@10", " "]}, "measures"),
        ({"policies": {"alpha": float("nan")}}, "policy alpha"),
        ({"policies": {"inner": {1: "x"}}}, "non-string key"),
        ({"policies": {"when": object()}}, "policy when"),
        ({"policies": ["not", "a", "mapping"]}, "mapping"),
    ],
)
def test_bad_components_raise_input_errors_that_name_the_problem(changes, message):
    with pytest.raises(InputError, match=message):
        fp(**changes)


def test_from_dict_names_missing_keys():
    with pytest.raises(InputError, match="missing"):
        EvalFingerprint.from_dict({"gold_set_version": "g"})
