"""Invariants that must hold for any qrels and run (Hypothesis)."""

from __future__ import annotations

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from evalops.data import Run
from evalops.metrics import Policy, evaluate

DOCS = [f"d{i}" for i in range(12)] + ["D1", "é", "10", "9"]
QUERIES = [f"q{i}" for i in range(6)]
ALL_MEASURES = [
    "P@1", "P@3", "P@20", "R@2", "R@20", "F1@3", "nDCG@3", "nDCG", "nDCG(gain=exp)@5",
    "RR", "RR@2", "AP", "AP@3", "Success@2", "R-Prec", "ContextPrecision@4", "P(rel=2)@3", "AP(rel=2)",
    "Judged@1", "Judged@5", "Bpref", "Bpref(rel=2)", "nDCG(judged_only=True)@5", "AP(judged_only=True)",
    "P(rel=2,judged_only=True)@3", "RR(judged_only=True)", "R-Prec(judged_only=True)",
]  # fmt: skip

grades = st.integers(min_value=-1, max_value=3)
scores = st.one_of(st.sampled_from([0.0, 0.5, 1.0, 2.0]), st.floats(-10, 10, allow_nan=False))
qrels_strategy = st.dictionaries(
    st.sampled_from(QUERIES), st.dictionaries(st.sampled_from(DOCS), grades, min_size=1), min_size=1
)
run_strategy = st.dictionaries(st.sampled_from(QUERIES + ["extra"]), st.dictionaries(st.sampled_from(DOCS), scores))
SETTINGS = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@SETTINGS
@given(qrels_strategy, run_strategy, st.sampled_from(["exclude", "zero"]))
def test_every_value_lies_in_the_unit_interval(qrels, run, no_answer):
    result = evaluate(qrels, run, ALL_MEASURES, Policy(no_answer=no_answer))
    for name, values in result.per_query.items():
        finite = values[~np.isnan(values)]
        assert np.all((finite >= 0.0) & (finite <= 1.0 + 1e-12)), name
        if no_answer == "zero":
            assert not np.isnan(values).any(), name


@SETTINGS
@given(qrels_strategy, st.randoms(use_true_random=False))
def test_a_perfect_ranking_scores_one(qrels, random):
    # rank every positively graded document by its grade, then the rest
    run = {}
    for qid, docs in qrels.items():
        ordered = sorted(docs, key=lambda d: -docs[d])
        noise = [d for d in DOCS if d not in docs]
        random.shuffle(noise)
        ranking = ordered + noise[:3]
        run[qid] = {d: float(len(ranking) - i) for i, d in enumerate(ranking)}
    result = evaluate(qrels, run, ["nDCG@5", "nDCG", "nDCG(gain=exp)@3", "AP", "RR"])
    for name, values in result.per_query.items():
        np.testing.assert_allclose(values, 1.0, rtol=0, atol=1e-12, err_msg=name)


@SETTINGS
@given(qrels_strategy, run_strategy)
def test_recall_never_decreases_with_k(qrels, run):
    cutoffs = [1, 2, 3, 5, 8, 13, 20]
    result = evaluate(qrels, run, [f"R@{k}" for k in cutoffs])
    table = np.vstack([result.per_query[f"R@{k}"] for k in cutoffs])
    assert np.all(np.diff(table, axis=0) >= 0)


@SETTINGS
@given(qrels_strategy, run_strategy, st.randoms(use_true_random=False))
def test_shuffling_input_lines_changes_nothing(qrels, run, random):
    base = Run.from_dict(run)
    order = list(range(len(base)))
    random.shuffle(order)
    shuffled = Run(base.query_ids[order], base.doc_ids[order], base.scores[order])
    shuffled_dict = {q: dict(random.sample(list(d.items()), len(d))) for q, d in random.sample(list(run.items()), len(run))}
    expected = evaluate(qrels, run, ALL_MEASURES, Policy(no_answer="zero"))
    for other in (shuffled, shuffled_dict, base.to_frame().iloc[order]):
        got = evaluate(qrels, other, ALL_MEASURES, Policy(no_answer="zero"))
        assert got.query_ids.tolist() == expected.query_ids.tolist()
        for name in expected.per_query:
            np.testing.assert_array_equal(got.per_query[name], expected.per_query[name], err_msg=name)


@SETTINGS
@given(qrels_strategy, run_strategy)
def test_a_run_of_judged_documents_only_is_its_own_condensed_list(qrels, run):
    judged = {
        q: {d: s for d, s in docs.items() if qrels.get(q, {}).get(d, -1) >= 0} for q, docs in run.items()
    }
    full = ["nDCG@5", "AP", "P@3", "RR", "R-Prec"]
    condensed = [m.replace("@", "(judged_only=True)@") if "@" in m else f"{m}(judged_only=True)" for m in full]
    zero = Policy(no_answer="zero")
    on_judged = evaluate(qrels, judged, full, zero)
    as_condensed = evaluate(qrels, run, condensed, zero)
    for f, c in zip(full, condensed):
        np.testing.assert_allclose(as_condensed.per_query[c], on_judged.per_query[f], rtol=0, atol=1e-12, err_msg=c)
    coverage = evaluate(qrels, {q: d for q, d in judged.items() if d}, ["Judged@5"], zero).per_query["Judged@5"]
    answered = np.isin(on_judged.query_ids, [q for q, d in judged.items() if d])
    np.testing.assert_array_equal(coverage[answered], 1.0)
