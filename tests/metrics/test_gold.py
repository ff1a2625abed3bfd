"""The gold side: dict fast path equals the Qrels path; R and the ideal ranking come from the qrels."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from evalops.data import Qrels
from evalops.errors import InputError
from evalops.metrics.gold import Gold

qrels_dicts = st.dictionaries(
    st.text(min_size=1, max_size=3),
    st.dictionaries(st.text(min_size=1, max_size=3), st.integers(-2, 4), max_size=6),
    max_size=6,
)


@settings(max_examples=80, deadline=None)
@given(qrels_dicts)
def test_from_dict_equals_the_qrels_path(qrels):
    fast = Gold.from_dict(qrels)
    slow = Gold.from_qrels(Qrels.from_dict(qrels))
    assert fast.query_ids.tolist() == slow.query_ids.tolist()
    key = lambda g: sorted(zip(g.query_ids[g.qidx].tolist(), g.doc_ids.tolist(), g.grades.tolist()))  # noqa: E731
    assert key(fast) == key(slow)


def test_relevant_counts_and_ideal_ranking():
    gold = Gold.from_dict({"b": {"x": 1, "y": 3, "z": 0}, "a": {"w": 2, "v": -1}})
    assert gold.query_ids.tolist() == ["a", "b"]
    assert gold.n_relevant(1).tolist() == [1, 2]
    assert gold.n_relevant(3).tolist() == [0, 1]
    q, rank, grade = gold.ideal()
    assert list(zip(q.tolist(), rank.tolist(), grade.tolist())) == [(0, 0, 2), (1, 0, 3), (1, 1, 1)]


def test_non_string_ids_and_bad_grades_take_the_validating_path():
    assert Gold.from_dict({1: {2: 1}}).query_ids.tolist() == ["1"]
    with pytest.raises(InputError, match="grades must be integers"):
        Gold.from_dict({"q": {"d": 1.5}})
    with pytest.raises(InputError, match="grades must be integers"):
        Gold.from_dict({"q": {"d": "relevant"}})
    assert np.array_equal(Gold.from_dict({"q": {"d": 2.0}}).grades, [2])
