"""Judge quality: kappa, the confusion matrix and Krippendorff's alpha against reference implementations."""

from __future__ import annotations

import numpy as np
import pytest

from evalops.judges.agreement import AgreementGate, agreement, cohen_kappa, confusion_matrix, krippendorff_alpha

A = [0, 1, 1, 0, 1, 1, 0, 0, 1, 1, 1, 0, 1, 0, 0, 1]
B = [0, 1, 0, 0, 1, 1, 1, 0, 1, 1, 0, 0, 1, 0, 1, 1]
GA = [0, 1, 2, 3, 3, 2, 1, 0, 2, 3, 1, 1, 0, 2, 3, 3, 0, 1]
GB = [0, 2, 2, 3, 2, 2, 0, 0, 3, 3, 1, 2, 0, 1, 3, 2, 1, 1]
RELIABILITY = [
    [1, 2, 3, 3, 2, 1, 4, 1, 2, np.nan, np.nan, np.nan],
    [1, 2, 3, 3, 2, 2, 4, 1, 2, 5, np.nan, 3],
    [np.nan, 3, 3, 3, 2, 3, 4, 2, 2, 5, 1, np.nan],
    [1, 2, 3, 3, 2, 4, 4, 1, 2, 5, 1, np.nan],
]


def test_hand_computed_kappa():
    # 2x2: [[2, 1], [0, 1]] -> po = 3/4, pe = (3*2 + 1*2)/16 = 1/2, kappa = 1/2
    assert cohen_kappa([0, 0, 0, 1], [0, 0, 1, 1]) == pytest.approx(0.5)
    assert np.isnan(cohen_kappa([1, 1], [1, 1]))


def test_kappa_and_confusion_equal_scikit_learn():
    import sklearn.metrics as sklearn  # in the dev extra: the reference must not be skipped
    assert cohen_kappa(A, B) == pytest.approx(sklearn.cohen_kappa_score(A, B))
    assert cohen_kappa(GA, GB, weights="quadratic") == pytest.approx(
        sklearn.cohen_kappa_score(GA, GB, weights="quadratic"))
    assert cohen_kappa(GA, GB, weights="linear") == pytest.approx(sklearn.cohen_kappa_score(GA, GB, weights="linear"))
    assert (confusion_matrix(GA, GB) == sklearn.confusion_matrix(GA, GB)).all()
    assert (confusion_matrix(GA, GB, labels=[3, 2, 1, 0]) == sklearn.confusion_matrix(GA, GB, labels=[3, 2, 1, 0])).all()


@pytest.mark.parametrize("level", ["nominal", "ordinal", "interval"])
def test_alpha_equals_the_krippendorff_package(level):
    import krippendorff  # in the dev extra: the reference must not be skipped
    expected = krippendorff.alpha(reliability_data=np.array(RELIABILITY), level_of_measurement=level)
    assert krippendorff_alpha(RELIABILITY, level) == pytest.approx(expected)
    binary = [[1, 0, 1, 1, 0, np.nan], [1, 0, 0, 1, 0, 1], [1, 1, 1, 1, np.nan, 1]]
    assert krippendorff_alpha(binary, level) == pytest.approx(
        krippendorff.alpha(reliability_data=np.array(binary), level_of_measurement=level))


def test_alpha_by_hand():
    # Krippendorff's textbook example (nominal, 2 coders, 10 units) gives 0.095.
    coder_a = [0, 1, 0, 0, 0, 0, 0, 0, 1, 0]
    coder_b = [1, 1, 1, 0, 0, 1, 0, 0, 0, 0]
    assert krippendorff_alpha([coder_a, coder_b]) == pytest.approx(0.095, abs=5e-4)


def test_agreement_binary_graded_and_per_language():
    human = [0, 1, 2, 3, 0, 2, 3, 1]
    judge = [0, 1, 2, 2, np.nan, 3, 3, 0]
    langs = ["en", "en", "en", "zh", "zh", "zh", "en", "en"]
    binary = agreement(human, judge, graded=False, rel=1, languages=langs)
    assert binary.n == 7
    assert binary.kappa == pytest.approx(cohen_kappa([0, 1, 1, 1, 1, 1, 1], [0, 1, 1, 1, 1, 1, 0]))
    assert binary.confusion.tolist() == [[1, 0], [1, 5]]
    assert set(binary.per_language) == {"en", "zh"} and binary.per_language["zh"][1] == 2
    graded = agreement(human, judge, graded=True, levels=[0, 1, 2, 3])
    assert graded.kappa == pytest.approx(cohen_kappa([0, 1, 2, 3, 2, 3, 1], [0, 1, 2, 2, 3, 3, 0],
                                                     weights="quadratic", labels=[0, 1, 2, 3]))
    assert graded.to_dict()["confusion"][3][2] == 1


def test_the_gate():
    gate = AgreementGate()
    assert gate.threshold == 0.6
    assert gate.decide(0.6)["status"] == "alerting"
    assert gate.decide(0.59)["status"] == "descriptive"
    assert gate.decide(float("nan"))["status"] == "descriptive"
    assert gate.decide(None)["status"] == "descriptive"
