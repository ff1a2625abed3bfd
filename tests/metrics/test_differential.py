"""evalops against pytrec_eval (trec_eval), per query, to 1e-9: real collections and adversarial synthetic runs."""

from __future__ import annotations

import numpy as np
import pytest

from evalops.data import Run
from evalops.formats import read_qrels, read_run
from evalops.metrics import Policy, evaluate
from .oracle import assert_matches, pytrec_per_query

TREC_MEASURES = [
    "P@1", "P@5", "P@10", "P@100",
    "R@5", "R@10", "R@100", "R@1000",
    "nDCG@1", "nDCG@5", "nDCG@10", "nDCG@100", "nDCG",
    "AP", "AP@10", "AP@100",
    "RR",
    "Success@1", "Success@5", "Success@10",
    "R-Prec",
]  # fmt: skip
ZERO = Policy(no_answer="zero")


def _input_shapes(run: Run, rng: np.random.Generator) -> dict[str, object]:
    """The same run as a Run, a dict, a DataFrame, and shuffled (so the sorting path runs too)."""
    shuffle = rng.permutation(len(run))
    shuffled = Run(run.query_ids[shuffle], run.doc_ids[shuffle], run.scores[shuffle], run.name)
    as_dict = run.to_dict()
    reversed_dict = {q: dict(reversed(list(docs.items()))) for q, docs in reversed(list(as_dict.items()))}
    return {
        "run": run,
        "dict": as_dict,
        "frame": run.to_frame(),
        "shuffled-run": shuffled,
        "reversed-dict": reversed_dict,
    }


@pytest.mark.parametrize(
    "collection, run_file",
    [
        ("scifact", "bm25.trec"),
        ("scifact", "itsumida-te3large-zerank1-top15.trec"),
        ("nfcorpus-orig-test", "bm25.trec"),
    ],
)
def test_real_collections_match_pytrec_eval(shared_data, collection, run_file):
    qrels = read_qrels(shared_data / collection)
    run = read_run(shared_data / collection / "runs" / run_file)
    expected = pytrec_per_query(qrels.to_dict(), run.to_dict(), TREC_MEASURES)
    for shape, given in _input_shapes(run, np.random.default_rng(7)).items():
        result = evaluate(qrels, given, TREC_MEASURES, ZERO)
        assert result.query_ids.tolist() == sorted(qrels.queries.tolist()), shape
        assert_matches(result, expected)


def test_real_collections_have_the_hard_cases(shared_data):
    """The real runs exercise ties and unanswered queries, or the test above would prove less."""
    run = read_run(shared_data / "nfcorpus-orig-test" / "runs" / "bm25.trec")
    qrels = read_qrels(shared_data / "nfcorpus-orig-test")
    frame = run.to_frame()
    assert frame.duplicated(["query_id", "score"]).sum() > 100
    assert len(set(qrels.queries) - set(run.queries)) > 0
    assert set(qrels.grades.tolist()) == {1, 2}


def test_graded_collection_with_relevance_level_2(shared_data):
    qrels = read_qrels(shared_data / "nfcorpus-orig-test")
    run = read_run(shared_data / "nfcorpus-orig-test" / "runs" / "bm25.trec")
    binary = ["P@5", "P@10", "R@100", "AP", "AP@10", "RR", "Success@5", "R-Prec"]
    ours = [m.replace("@", "(rel=2)@", 1) if "@" in m else f"{m}(rel=2)" for m in binary]
    expected = pytrec_per_query(qrels.to_dict(), run.to_dict(), binary, relevance_level=2)
    result = evaluate(qrels, run, ours, ZERO)
    renamed = {new: expected[old] for old, new in zip(binary, ours)}
    assert_matches(result, renamed)


def test_real_collection_exclude_policy_is_the_zero_policy_minus_no_answer_queries(shared_data):
    qrels = read_qrels(shared_data / "nfcorpus-orig-test")
    run = read_run(shared_data / "nfcorpus-orig-test" / "runs" / "bm25.trec")
    excluded = evaluate(qrels, run, ["P(rel=2)@10"])
    zero = evaluate(qrels, run, ["P(rel=2)@10"], ZERO)
    no_answer = set(excluded.no_answer_ids["P(rel=2)@10"])
    assert no_answer, "some nfcorpus queries have no grade-2 document"
    keep = [q not in no_answer for q in zero.query_ids.tolist()]
    assert excluded.query_ids.tolist() == zero.query_ids[keep].tolist()
    np.testing.assert_array_equal(excluded.per_query["P(rel=2)@10"], zero.per_query["P(rel=2)@10"][keep])


# -- synthetic runs built to break implementations ------------------------------------------------


def _synthetic(seed: int) -> tuple[dict, dict]:
    """Many tied scores, doc ids whose string order differs from numeric order (and non-ASCII ones),
    queries missing from the run, run queries without judgments, judged non-relevant and negative grades,
    and runs shallower than the cutoffs."""
    rng = np.random.default_rng(seed)
    alphabet = ["d1", "d10", "d9", "D2", "d2", "doc-é", "doc-z", "x", "x0", "ё", "a", "10", "9", "099"]
    docs = alphabet + [f"d{i}" for i in range(40)]
    docs = list(dict.fromkeys(docs))
    qrels: dict[str, dict[str, int]] = {}
    run: dict[str, dict[str, float]] = {}
    for q in range(40):
        qid = f"q{q}"
        judged = rng.choice(len(docs), size=int(rng.integers(1, 15)), replace=False)
        qrels[qid] = {docs[j]: int(rng.choice([-1, 0, 0, 1, 1, 2, 3])) for j in judged}
        if q % 7 == 3:
            continue  # missing from the run
        depth = int(rng.integers(1, 30))
        retrieved = rng.choice(len(docs), size=min(depth, len(docs)), replace=False)
        levels = rng.choice([0.5, 1.0, 2.0, 2.5]) if q % 3 else rng.random()
        run[qid] = {docs[j]: float(rng.choice([levels, 1.0, 3.0, -0.0, 0.0])) for j in retrieved}
    run["unjudged-query"] = {"d1": 1.0, "d2": 0.5}
    return qrels, run


@pytest.mark.parametrize("seed", range(8))
def test_synthetic_ties_missing_queries_and_deep_cutoffs(seed):
    qrels, run = _synthetic(seed)
    measures = [
        "P@1", "P@3", "P@10", "P@50",
        "R@3", "R@10", "R@50",
        "nDCG@3", "nDCG@10", "nDCG@50", "nDCG",
        "AP", "AP@5", "AP@50",
        "RR",
        "Success@1", "Success@3", "Success@50",
        "R-Prec",
    ]  # fmt: skip
    for level in (1, 2):
        expected = pytrec_per_query(qrels, run, measures, relevance_level=level)
        ours = [m if level == 1 or m.startswith("nDCG") else _with_rel(m, level) for m in measures]
        renamed = {new: expected[old] for old, new in zip(measures, ours)}
        for shape, given in _input_shapes(Run.from_dict(run), np.random.default_rng(seed)).items():
            result = evaluate(qrels, given, ours, ZERO)
            assert len(result.query_ids) == len(qrels), shape
            assert_matches(result, renamed)


def _with_rel(measure: str, level: int) -> str:
    name, at, cutoff = measure.partition("@")
    return f"{name}(rel={level}){at}{cutoff}"


def test_synthetic_runs_really_have_ties_and_gaps():
    qrels, run = _synthetic(0)
    tied = sum(len(d) - len(set(d.values())) for d in run.values())
    assert tied > 50
    assert set(qrels) - set(run)
    assert any(len(d) < 10 for d in run.values())


def test_scores_tie_at_float32_precision_as_in_trec_eval():
    """trec_eval stores scores as C floats: these two differ as doubles but tie, and "d9" > "d1" wins."""
    high, low = 0.4141877302904503, 0.4141877268728097
    assert high != low and np.float32(high) == np.float32(low)
    qrels = {"q": {"d9": 1}}
    run = {"q": {"d1": high, "d9": low, "d0": 0.1}}
    expected = pytrec_per_query(qrels, run, ["RR", "P@1"])
    assert expected["RR"]["q"] == 1.0  # pytrec_eval (trec_eval) puts d9 first
    for given in (run, Run.from_dict(run), Run.from_dict(run).to_frame()):
        assert_matches(evaluate(qrels, given, ["RR", "P@1"]), expected)


@pytest.mark.parametrize("seed", range(3))
def test_synthetic_near_ties_below_float32_precision(seed):
    """Deep runs whose scores collide only after rounding to float32 (what the 10k-query benchmark found)."""
    rng = np.random.default_rng(100 + seed)
    qrels, run = {}, {}
    for q in range(60):
        base = rng.random(80)
        scores = np.concatenate([base, base[:40] + rng.choice([1e-9, -1e-9, 3e-10], 40)])  # float32 twins
        docs = [f"d{int(x)}" for x in rng.choice(10_000, len(scores), replace=False)]
        run[f"q{q}"] = dict(zip(docs, scores.tolist()))
        qrels[f"q{q}"] = {d: int(rng.integers(1, 3)) for d in rng.choice(docs, 8, replace=False).tolist()}
    measures = ["RR", "AP", "nDCG@10", "P@20", "R-Prec", "R@50", "Success@5"]
    expected = pytrec_per_query(qrels, run, measures)
    for shape, given in _input_shapes(Run.from_dict(run), rng).items():
        assert_matches(evaluate(qrels, given, measures, ZERO), expected)
