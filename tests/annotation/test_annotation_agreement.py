"""Cohen's kappa and Krippendorff's alpha against published and library values, and the queue's item states."""

from __future__ import annotations

import math
import random

import pytest

from evalops.annotation.agreement import agreement_report, cohen_kappa, krippendorff_alpha
from evalops.annotation.queue import item_states, ordered_items, priority_of
from evalops.warehouse.labels import Adjudication, Label

_ = None
# Krippendorff (2011), "Computing Krippendorff's alpha-reliability", 4 observers x 12 units: alpha nominal
# 0.743, ordinal 0.815, interval 0.849
OBSERVERS = [
    [1, 2, 3, 3, 2, 1, 4, 1, 2, _, _, _],
    [1, 2, 3, 3, 2, 2, 4, 1, 2, 5, _, 3],
    [_, 3, 3, 3, 2, 3, 4, 2, 2, 5, 1, _],
    [1, 2, 3, 3, 2, 4, 4, 1, 2, 5, 1, _],
]
UNITS = [[v for v in unit if v is not None] for unit in zip(*OBSERVERS)]


@pytest.mark.parametrize(("level", "expected"), [("nominal", 0.743), ("ordinal", 0.815), ("interval", 0.849)])
def test_alpha_matches_krippendorffs_worked_example(level, expected):
    assert krippendorff_alpha(UNITS, level) == pytest.approx(expected, abs=5e-4)


def test_alpha_edge_cases():
    assert math.isnan(krippendorff_alpha([[1], [2]]))  # nothing pairable
    assert math.isnan(krippendorff_alpha([[1, 1], [1, 1]]))  # one value used: no expected disagreement
    assert krippendorff_alpha([[0, 0], [2, 2], [1, 1]]) == 1.0
    with pytest.raises(ValueError):
        krippendorff_alpha(UNITS, "ratio")


def test_kappa_of_a_hand_computed_case():
    # p_o = 3/4, p_e = (2*2 + 2*2)/16 = 1/2, kappa = (3/4 - 1/2) / (1/2) = 0.5
    assert cohen_kappa([0, 0, 1, 1], [0, 0, 1, 0]) == pytest.approx(0.5)
    # p_o = 2/3; p_e = (1*2 + 2*1 + 0*0)/9 = 4/9; kappa = (6/9 - 4/9) / (5/9) = 0.4
    assert cohen_kappa(["a", "b", "b"], ["a", "a", "b"]) == pytest.approx(0.4)
    assert math.isnan(cohen_kappa([1, 1], [1, 1])) and math.isnan(cohen_kappa([], []))


@pytest.mark.slow  # importing scikit-learn takes seconds
def test_kappa_matches_sklearn():
    sklearn = pytest.importorskip("sklearn.metrics")
    rng = random.Random(3)
    for _ in range(20):
        a = [rng.randint(0, 3) for _ in range(40)]
        b = [x if rng.random() < 0.6 else rng.randint(0, 3) for x in a]
        assert cohen_kappa(a, b) == pytest.approx(sklearn.cohen_kappa_score(a, b), abs=1e-12)


def test_the_report_pairs_annotators_and_the_judge():
    labels = {"a": {"x": 1, "y": 1}, "b": {"x": 1, "y": 0}, "c": {"x": 0, "y": None}}
    report = agreement_report(labels, {"a": 1, "b": 0, "c": None})
    assert report["annotators"] == ["x", "y"]
    [pair] = report["pairs"]
    assert (pair["a"], pair["b"], pair["items"], pair["agreement"]) == ("x", "y", 2, 0.5)
    assert [(r["a"], r["items"]) for r in report["judge"]] == [("x", 2), ("y", 2)]


def _label(item, who, grade):
    return Label(item, "hole", "q", "d", who, grade, None, None)


def test_item_states_need_k_agreeing_labels_and_adjudication_settles_conflicts():
    labels = [_label("a", "x", 1), _label("a", "y", 1), _label("b", "x", 1), _label("b", "y", 0),
              _label("c", "x", 2), _label("c", "y", None), _label("d", "x", 0), _label("d", "y", 2)]
    adjudicated = {"d": Adjudication("d", "q", "d", 2, "z", None, None)}
    states = item_states(["a", "b", "c", "d", "e"], labels, adjudicated, labels_per_item=2)
    assert {i: (s.state, s.grade) for i, s in states.items()} == {
        "a": ("agreed", 1), "b": ("conflict", None), "c": ("open", None), "d": ("adjudicated", 2), "e": ("open", None)}
    assert item_states(["c"], labels, {}, labels_per_item=1)["c"].state == "agreed"  # a skip is no grade


def test_holes_come_first_by_priority():
    hole = "gold: s 2 vs 1, top 10; priority {}; in 2"
    rows = [{"item_id": "g", "source": "generated", "origin": "judge", "created_at": "1"},
            {"item_id": "h1", "source": "hole", "origin": hole.format("0.250"), "created_at": "1"},
            {"item_id": "h2", "source": "hole", "origin": hole.format("1.000"), "created_at": "2"},
            {"item_id": "s", "source": "sampled_query", "origin": "production sample", "created_at": "0"}]
    assert [r["item_id"] for r in ordered_items(rows)] == ["h2", "h1", "s", "g"]
    assert priority_of(rows[1]) == 0.25 and priority_of(rows[0]) is None
