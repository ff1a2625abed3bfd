"""Invariants every paired test must keep, checked on generated inputs (Hypothesis)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from evalops.stats import paired_randomization_test, paired_t_test, wilcoxon_test

SCORES = st.sampled_from([0.0, 0.1, 0.2, 1 / 3, 0.5, 0.6309, 0.75, 1.0])
PAIRS = st.integers(min_value=2, max_value=30).flatmap(
    lambda n: st.tuples(st.lists(SCORES, min_size=n, max_size=n), st.lists(SCORES, min_size=n, max_size=n))
)
TESTS = {
    "t": lambda b, c, alt: paired_t_test(b, c, alt),
    "wilcoxon": lambda b, c, alt: wilcoxon_test(b, c, alt),
    "randomization": lambda b, c, alt: paired_randomization_test(b, c, alt, n_resamples=2000, rng=3),
}


@pytest.mark.parametrize("name", list(TESTS))
@settings(max_examples=60, deadline=None)
@given(pair=PAIRS)
def test_p_value_is_symmetric_in_the_two_inputs(name, pair):
    b, c = (np.array(x) for x in pair)
    run = TESTS[name]
    forward, backward = run(b, c, "two-sided"), run(c, b, "two-sided")
    assert forward.p_value == pytest.approx(backward.p_value, abs=1e-12)
    assert forward.direction == -backward.direction
    assert run(b, c, "less").p_value == pytest.approx(run(c, b, "greater").p_value, abs=1e-12)


@pytest.mark.parametrize("name", list(TESTS))
@settings(max_examples=60, deadline=None)
@given(pair=PAIRS)
def test_p_value_is_a_probability_and_one_sided_ps_are_consistent(name, pair):
    b, c = (np.array(x) for x in pair)
    run = TESTS[name]
    two, less, greater = (run(b, c, alt).p_value for alt in ("two-sided", "less", "greater"))
    assert all(0.0 <= p <= 1.0 for p in (two, less, greater))
    # the one-sided p in the observed direction is at most the two-sided one
    assert min(less, greater) <= two + 1e-12
