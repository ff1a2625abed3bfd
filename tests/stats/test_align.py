import numpy as np
import pytest

from evalops.errors import AlignmentError, InputError
from evalops.stats import align


def test_pairs_by_query_id_in_baseline_order():
    paired = align({"a": 0.1, "b": 0.2, "c": 0.3}, {"c": 0.9, "a": 0.7, "b": 0.8})
    assert paired.query_ids.tolist() == ["a", "b", "c"]
    assert paired.baseline.tolist() == [0.1, 0.2, 0.3]
    assert paired.candidate.tolist() == [0.7, 0.8, 0.9]
    np.testing.assert_allclose(paired.deltas, [0.6, 0.6, 0.6])


def test_accepts_ids_and_values_tuples():
    paired = align((["1", "2"], [0.5, 0.25]), ((2, 1), np.array([0.0, 1.0])))
    assert paired.query_ids.tolist() == ["1", "2"]
    assert paired.candidate.tolist() == [1.0, 0.0]


def test_missing_ids_are_an_error_that_names_them():
    with pytest.raises(AlignmentError) as err:
        align({"a": 1, "b": 1, "q7": 1}, {"a": 1, "b": 1, "z9": 0}, candidate_name="v2")
    message = str(err.value)
    assert "v2 has no score for 1 query that baseline has: 'q7'" in message
    assert "baseline has no score for 1 query that v2 has: 'z9'" in message
    assert "missing='intersection'" in message


def test_long_lists_of_missing_ids_are_shortened():
    base = {str(i): 0.5 for i in range(30)}
    with pytest.raises(AlignmentError, match=r"\.\.\. and 19 more"):
        align(base, {"0": 0.5})


def test_intersection_policy_records_what_it_dropped():
    paired = align({"a": 1, "b": 2, "x": 3}, {"b": 5, "a": 4, "y": 6}, missing="intersection")
    assert paired.query_ids.tolist() == ["a", "b"]
    assert paired.candidate.tolist() == [4.0, 5.0]
    assert paired.dropped_baseline_only == ("x",)
    assert paired.dropped_candidate_only == ("y",)
    assert paired.missing == "intersection"


def test_unknown_policy_duplicates_and_non_finite_scores_are_errors():
    with pytest.raises(InputError, match="missing must be one of"):
        align({"a": 1}, {"a": 1}, missing="zero")
    with pytest.raises(AlignmentError, match="'a' more than once"):
        align((["a", "a"], [1, 2]), {"a": 1})
    with pytest.raises(InputError, match="query 'b' is nan"):
        align({"a": 1.0, "b": float("nan")}, {"a": 1.0, "b": 1.0})
