"""The bounds of the unjudged documents (``evalops.judged.bounds``): each unjudged (query, document) one grade in both
runs, against exhaustive enumeration on small cases, and the cases a per-run bound got wrong."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from evalops.judged.bounds import pair_bounds, ranking_of
from evalops.metrics import evaluate


def _delta(qrels, base, cand, measure):
    b = evaluate(qrels, {q: {d: float(len(ds) - i) for i, d in enumerate(ds)} for q, ds in base.items()}, [measure])
    c = evaluate(qrels, {q: {d: float(len(ds) - i) for i, d in enumerate(ds)} for q, ds in cand.items()}, [measure])
    return dict(zip(b.query_ids.tolist(), (c.per_query[measure] - b.per_query[measure]).tolist()))


def _every_assignment(qrels, base, cand, k, grade=1):
    """Every consistent grading of the unjudged documents of the top k of either run (each pair one grade in
    both runs), one query at a time: yields (query, qrels with that query's holes graded)."""
    for q in qrels:
        holes = sorted({d for d in [*base.get(q, [])[:k], *cand.get(q, [])[:k]] if d not in qrels[q]})
        for grades in itertools.product([0, grade], repeat=len(holes)):
            graded = {**qrels, q: {**qrels[q], **{d: g for d, g in zip(holes, grades) if g}}}
            yield q, graded


def _random_case(rng, n_queries=4, pool=7, k=3):
    qrels, base, cand = {}, {}, {}
    for i in range(n_queries):
        q = f"q{i}"
        docs = [f"d{j}" for j in range(pool)]
        judged = rng.choice(docs, size=3, replace=False)
        qrels[q] = {str(d): int(rng.integers(0, 2)) for d in judged}
        if not any(qrels[q].values()):
            qrels[q][str(judged[0])] = 1
        base[q] = [str(d) for d in rng.permutation(docs)[:k + 1]]
        cand[q] = [str(d) for d in rng.permutation(docs)[:k + 1]]
    return qrels, base, cand


@pytest.mark.parametrize("measure", ["P@3", "Success@3"])
def test_for_sums_of_gains_the_bounds_are_the_extremes_of_every_consistent_grading(measure):
    """P@k and Success@k at a fixed cutoff: the optimistic (pessimistic) bound is exactly the largest (smallest)
    delta over every grading that gives each unjudged pair one grade in both runs."""
    rng = np.random.default_rng(7)
    for _ in range(25):
        qrels, base, cand = _random_case(rng)
        found = pair_bounds(qrels, base, cand, [measure], 3)[measure]
        highest = {q: -np.inf for q in qrels}
        lowest = {q: np.inf for q in qrels}
        for q, graded in _every_assignment(qrels, base, cand, 3):
            d = _delta(graded, base, cand, measure)[q]
            highest[q], lowest[q] = max(highest[q], d), min(lowest[q], d)
        ids = found.query_ids.tolist()
        assert found.upper.tolist() == pytest.approx([highest[q] for q in ids])
        assert found.lower.tolist() == pytest.approx([lowest[q] for q in ids])


def test_for_normalised_measures_the_bounds_are_attained_and_bracket_the_judged_delta():
    """nDCG, AP, recall: each bound is the delta of one consistent grading (never beyond every grading), and
    pessimistic <= as judged <= optimistic on every query."""
    rng = np.random.default_rng(11)
    for measure in ("nDCG@3", "AP@3", "R@3"):
        for _ in range(15):
            qrels, base, cand = _random_case(rng)
            found = pair_bounds(qrels, base, cand, [measure], 3)[measure]
            reachable = {q: set() for q in qrels}
            for q, graded in _every_assignment(qrels, base, cand, 3):
                reachable[q].add(round(_delta(graded, base, cand, measure)[q], 9))
            for q, hi, lo, judged in zip(found.query_ids.tolist(), found.upper, found.lower, found.judged):
                assert lo <= judged <= hi
                assert round(float(hi), 9) in reachable[q] and round(float(lo), 9) in reachable[q]
                assert max(reachable[q]) >= hi - 1e-9 and min(reachable[q]) <= lo + 1e-9


def test_a_document_is_relevant_or_not_in_both_runs_where_a_per_run_bound_saw_a_gain():
    """Half the queries answered exactly as the baseline answers them, the other half by nothing: a per-run
    bound (the candidate's holes relevant, the baseline's not) read every answered query as a gain. One grade
    per pair: the answered queries cancel, an empty answer has no holes, so the optimistic bound is the judged
    delta and the drop stands."""
    qrels = {f"q{i}": {"r": 1, "n": 0} for i in range(6)}
    base = {q: ["u1", "r", "u2", "n"] for q in qrels}  # u1, u2: unjudged
    cand = {q: (docs if i % 2 == 0 else []) for i, (q, docs) in enumerate(base.items())}
    found = pair_bounds(qrels, base, cand, ["nDCG@3"], 3)["nDCG@3"]
    assert found.upper.tolist() == pytest.approx(found.judged.tolist())
    assert found.judged.mean() < 0 and found.upper.mean() < 0
    assert (found.upper[::2] == 0).all()  # identical answers: no delta under any grading
    assert (found.lower[1::2] < found.judged[1::2]).all()  # the baseline's holes can only widen the loss
    # what a per-run bound claimed: the candidate's holes relevant, the baseline's not, on an identical answer
    per_run = _delta({q: {**j, "u1": 1, "u2": 1} for q, j in qrels.items()}, {q: [] for q in qrels}, cand, "nDCG@3")
    assert per_run["q0"] > 0


def test_identical_runs_and_tie_order_change_nothing():
    qrels = {"q1": {"a": 2, "b": 0}, "q2": {"c": 1}}
    run = {"q1": {"a": 1.0, "x": 1.0, "y": 0.5, "b": 0.2}, "q2": {"z": 3.0, "c": 3.0, "w": 1.0}}
    shuffled = {q: dict(reversed(list(docs.items()))) for q, docs in run.items()}  # ties, file order reversed
    base, cand = ranking_of(run, 10), ranking_of(shuffled, 10)
    assert base == cand
    found = pair_bounds(qrels, base, cand, ["nDCG@10", "P@2", "AP"], 10)
    for bounds in found.values():
        assert not bounds.upper.any() and not bounds.lower.any() and not bounds.condensed.any()


def test_graded_judgments_use_the_highest_grade_and_condensed_lists_drop_the_holes():
    qrels = {"q1": {"a": 2, "b": 1, "n": 0}}
    base = {"q1": ["a", "b", "n"]}
    cand = {"q1": ["u", "n", "a", "b"]}  # one unjudged document first
    found = pair_bounds(qrels, base, cand, ["nDCG@3"], 3)["nDCG@3"]
    with_u = _delta({"q1": {**qrels["q1"], "u": 2}}, base, cand, "nDCG@3")["q1"]
    assert found.upper[0] == pytest.approx(max(with_u, found.judged[0]))
    # condensed: the candidate's list without 'u' is [n, a, b]: scored as such
    assert found.condensed[0] == pytest.approx(_delta(qrels, base, {"q1": ["n", "a", "b"]}, "nDCG@3")["q1"])
    assert found.holes.tolist() == [1]
