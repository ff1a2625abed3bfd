import numpy as np
import pytest
from scipy import stats

from evalops.errors import InputError
from evalops.stats import adjust_p_values, benjamini_hochberg, holm


def test_holm_hand_made():
    # sorted 0.005 0.01 0.03 0.04 times 4 3 2 1 = 0.02 0.03 0.06 0.04, running max 0.02 0.03 0.06 0.06
    np.testing.assert_allclose(holm([0.01, 0.04, 0.03, 0.005]), [0.03, 0.06, 0.06, 0.02])
    np.testing.assert_allclose(holm([0.5, 0.9]), [1.0, 1.0])


def test_bh_hand_made_and_against_scipy():
    # sorted 0.005 0.01 0.03 0.04: m p / rank = 0.02 0.02 0.04 0.04, running min from the top
    np.testing.assert_allclose(benjamini_hochberg([0.01, 0.04, 0.03, 0.005]), [0.02, 0.04, 0.04, 0.02])
    rng = np.random.default_rng(0)
    for m in (1, 2, 7, 50):
        p = rng.random(m) ** 3
        np.testing.assert_allclose(benjamini_hochberg(p), stats.false_discovery_control(p, method="bh"))


def test_properties():
    rng = np.random.default_rng(1)
    p = rng.random(30) ** 2
    for adjusted in (holm(p), benjamini_hochberg(p)):
        assert np.all(adjusted >= p) and np.all(adjusted <= 1)
        order = np.argsort(p)
        assert np.all(np.diff(adjusted[order]) >= 0)  # ordering of the p-values is kept
    assert np.all(benjamini_hochberg(p) <= holm(p))  # BH is never stricter than Holm
    assert adjust_p_values([], "holm").size == 0
    np.testing.assert_allclose(adjust_p_values([0.02], "bh"), [0.02])


def test_bad_input():
    with pytest.raises(InputError, match="correction must be one of"):
        adjust_p_values([0.1], "bonferroni")
    with pytest.raises(InputError):
        holm([0.1, 1.5])
