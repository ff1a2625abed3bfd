"""Kernels against hand computations (the formulas in the measure docstrings, term by term)."""

from __future__ import annotations

from math import log2

import numpy as np
import pytest

from evalops.metrics import kernels

# rows: grades at ranks 1..5
GRADES = np.array(
    [
        [1, 0, 1, 1, 0],  # three relevant at ranks 1, 3, 4
        [0, 0, 0, 0, 0],  # none retrieved
        [0, 2, 1, 0, 3],  # graded
        [-1, 0, 1, 0, 0],  # a negative grade first
    ]
)
N_REL = np.array([5, 2, 3, 1])


def test_precision_divides_by_k_even_past_the_matrix():
    np.testing.assert_allclose(kernels.precision(GRADES, 4), [3 / 4, 0, 2 / 4, 1 / 4])
    np.testing.assert_allclose(kernels.precision(GRADES, 50), [3 / 50, 0, 3 / 50, 1 / 50])
    np.testing.assert_allclose(kernels.precision(GRADES, 5, rel=2), [0, 0, 2 / 5, 0])


def test_recall_and_f1():
    np.testing.assert_allclose(kernels.recall(GRADES, 4, N_REL), [3 / 5, 0, 2 / 3, 1])
    p, r = 3 / 4, 3 / 5
    np.testing.assert_allclose(kernels.f1(GRADES, 4, N_REL)[[0, 1]], [2 * p * r / (p + r), 0])
    np.testing.assert_allclose(kernels.recall(GRADES, 4, np.array([0, 0, 0, 0])), [0, 0, 0, 0])


def test_average_precision_uses_R_as_denominator():
    ap = (1 / 1 + 2 / 3 + 3 / 4) / 5
    assert kernels.average_precision(GRADES, None, N_REL)[0] == pytest.approx(ap)
    ap_at_3 = (1 / 1 + 2 / 3) / 5
    assert kernels.average_precision(GRADES, 3, N_REL)[0] == pytest.approx(ap_at_3)
    assert kernels.average_precision(GRADES, None, N_REL)[1] == 0.0


def test_reciprocal_rank_success_and_r_precision():
    np.testing.assert_allclose(kernels.reciprocal_rank(GRADES, None), [1, 0, 1 / 2, 1 / 3])
    np.testing.assert_allclose(kernels.reciprocal_rank(GRADES, 2), [1, 0, 1 / 2, 0])
    np.testing.assert_allclose(kernels.reciprocal_rank(GRADES, None, rel=3), [0, 0, 1 / 5, 0])
    np.testing.assert_allclose(kernels.success(GRADES, 2), [1, 0, 1, 0])
    # R-Prec: relevant in the top R; R = 5 > depth for row 0 counts everything retrieved
    np.testing.assert_allclose(kernels.r_precision(GRADES, N_REL), [3 / 5, 0, 2 / 3, 0])
    assert kernels.r_precision(np.zeros((2, 0), dtype=int), np.array([1, 0])).tolist() == [0.0, 0.0]


def test_ndcg_linear_gain_is_trec_evals_ndcg_cut():
    ideal = np.array([[3, 2, 1, 0, 0]])
    ranked = np.array([[0, 2, 1, 0, 3]])
    dcg = 2 / log2(3) + 1 / log2(4) + 3 / log2(6)
    idcg = 3 / log2(2) + 2 / log2(3) + 1 / log2(4)
    assert kernels.ndcg(ranked, None, ideal)[0] == pytest.approx(dcg / idcg, abs=1e-12)
    dcg3 = 2 / log2(3) + 1 / log2(4)
    assert kernels.ndcg(ranked, 3, ideal)[0] == pytest.approx(dcg3 / idcg, abs=1e-12)


def test_ndcg_exp_gain_by_hand():
    ideal = np.array([[3, 2, 1, 0, 0]])
    ranked = np.array([[0, 2, 1, 0, 3]])
    dcg = (2**2 - 1) / log2(3) + (2**1 - 1) / log2(4) + (2**3 - 1) / log2(6)
    idcg = (2**3 - 1) / log2(2) + (2**2 - 1) / log2(3) + (2**1 - 1) / log2(4)
    assert kernels.ndcg(ranked, None, ideal, gain="exp")[0] == pytest.approx(dcg / idcg, abs=1e-12)
    dcg2 = (2**2 - 1) / log2(3)
    idcg2 = (2**3 - 1) / log2(2) + (2**2 - 1) / log2(3)
    assert kernels.ndcg(ranked, 2, ideal, gain="exp")[0] == pytest.approx(dcg2 / idcg2, abs=1e-12)


def test_ndcg_gives_negative_grades_no_gain_and_zero_without_ideal():
    ideal = np.array([[1, 0, 0], [0, 0, 0]])
    ranked = np.array([[-1, 1, 0], [-3, 0, 0]])
    np.testing.assert_allclose(kernels.ndcg(ranked, None, ideal), [(1 / log2(3)) / 1.0, 0.0])


def test_context_precision_ragas_definition():
    # ranks 1, 3, 4 relevant: (P@1 + P@3 + P@4) / 3
    expected = (1 / 1 + 2 / 3 + 3 / 4) / 3
    assert kernels.context_precision(GRADES, 5)[0] == pytest.approx(expected)
    assert kernels.context_precision(GRADES, 2)[0] == pytest.approx(1.0)  # only rank 1 counts, / 1
    assert kernels.context_precision(GRADES, 5)[1] == 0.0  # nothing relevant retrieved
    assert kernels.context_precision(GRADES, 5)[2] == pytest.approx((1 / 2 + 2 / 3 + 3 / 5) / 3)
