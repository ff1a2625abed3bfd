"""The one ranking rule (``trec_eval_order``) against trec_eval itself, on float32 near-ties.

trec_eval stores scores as C floats: 1.00000002 and 1.00000001 are the same float32, so they tie and the
greater doc id ranks first. The evaluator, the run writer and the retrievers' cut at k must all agree.
"""

from __future__ import annotations

import numpy as np
import pytest
import pytrec_eval

from evalops.data import Run
from evalops.formats import ranking_order, read_run, write_trec_run
from evalops.metrics import Policy, evaluate, top_k as run_top_k
from evalops.metrics.ranking import trec_eval_order
from evalops.retrievers.base import top_k


def test_scores_equal_at_float32_tie_and_the_greater_doc_id_ranks_first():
    scores = np.array([1.00000002, 1.00000001])
    docs = np.array(["a", "b"], dtype=object)
    assert np.float32(scores[0]) == np.float32(scores[1]) and scores[0] > scores[1]
    assert trec_eval_order(scores, docs).tolist() == [1, 0]  # b before a, as trec_eval ranks them
    # The retriever's cut at k keeps the document the evaluator ranks first, with the retriever's scores.
    assert top_k(scores, docs, 1) == (("b", 1.00000001),)
    assert top_k(scores, docs, 2) == (("b", 1.00000001), ("a", 1.00000002))


def test_a_near_tie_below_the_kth_score_is_kept_by_the_cut():
    """The k-th score in float64 is 1.00000002; 1.00000001 ties with it at float32 and has the greater id."""
    scores = np.array([3.0, 1.00000002, 1.00000001, 0.5])
    docs = np.array(["m", "a", "z", "y"], dtype=object)
    assert [d for d, _ in top_k(scores, docs, 2)] == ["m", "z"]


def _rank_by_trec_eval(run: dict[str, dict[str, float]]) -> dict[str, dict[str, int]]:
    """trec_eval's 1-based rank of every document: the reciprocal rank when it is the only relevant one."""
    qrels, pseudo = {}, {}
    for q, docs in run.items():
        for d in docs:
            key = f"{q}\t{d}"
            qrels[key] = {d: 1}
            pseudo[key] = docs
    rr = pytrec_eval.RelevanceEvaluator(qrels, {"recip_rank"}).evaluate(pseudo)
    ranks: dict[str, dict[str, int]] = {}
    for key, values in rr.items():
        q, d = key.split("\t")
        ranks.setdefault(q, {})[d] = round(1.0 / values["recip_rank"])
    return ranks


def _near_tie_run(rng: np.random.Generator, n_queries: int = 12, n_docs: int = 25) -> dict[str, dict[str, float]]:
    """Scores from a few values 1e-8 apart (equal at float32) and a few exact repeats: most rows tie."""
    levels = np.array([2.0, 1.00000003, 1.00000002, 1.00000001, 1.0, 0.25, 0.25000001])
    run = {}
    for q in range(n_queries):
        docs = rng.choice(200, size=n_docs, replace=False)
        scores = levels[rng.integers(0, len(levels), size=n_docs)]
        run[f"q{q}"] = {f"d{d:03d}": float(s) for d, s in zip(docs.tolist(), scores.tolist())}
    return run


def test_trec_eval_order_is_the_order_pytrec_eval_ranks_a_tie_heavy_run_by():
    run = _near_tie_run(np.random.default_rng(18))
    expected = _rank_by_trec_eval(run)
    as_run = Run.from_dict(run)
    order = ranking_order(as_run)
    queries, docs = as_run.query_ids[order], as_run.doc_ids[order]
    for q in run:
        ranked = docs[queries == q].tolist()
        assert ranked == sorted(run[q], key=lambda d: expected[q][d]), q
        # the retriever's cut, fed one query's scores, ranks the same way
        ids = np.array(list(run[q]), dtype=object)
        cut = top_k(np.array(list(run[q].values())), ids, len(ids))
        assert [d for d, _ in cut] == ranked, q


@pytest.mark.parametrize("k", [1, 3, 5, 10])
def test_a_run_cut_at_k_by_the_retrievers_scores_as_trec_eval_scores_the_whole_run(k):
    """Cutting at k must keep trec_eval's top k: P@k and nDCG@k of the cut run equal trec_eval's on the
    full run, for every query, on random judgments."""
    rng = np.random.default_rng(k)
    run = _near_tie_run(rng)
    qrels = {q: {d: int(rng.integers(0, 3)) for d in docs} for q, docs in run.items()}
    cut = {}
    for q, docs in run.items():
        ids = np.array(list(docs), dtype=object)
        cut[q] = dict(top_k(np.array(list(docs.values())), ids, k))
    measures = [f"P@{k}", f"nDCG@{k}"]
    result = evaluate(qrels, cut, measures, Policy(no_answer="zero"))
    names = {f"P@{k}": f"P_{k}", f"nDCG@{k}": f"ndcg_cut_{k}"}
    expected = pytrec_eval.RelevanceEvaluator(qrels, set(names.values())).evaluate(run)
    for measure, trec in names.items():
        ours = dict(zip(result.query_ids.tolist(), result.per_query[measure].tolist()))
        for q in run:
            assert ours[q] == pytest.approx(expected[q][trec], abs=1e-12), (measure, q)


def test_written_runs_and_the_metrics_top_k_follow_the_same_rule(tmp_path):
    run = Run.from_dict({"q1": {"a": 1.00000002, "b": 1.00000001, "c": 5.0}})
    assert run_top_k(run, 2) == {"q1": ["c", "b"]}
    path = tmp_path / "run.trec"
    write_trec_run(run, path)
    assert [line.split()[2] for line in path.read_text().splitlines()] == ["c", "b", "a"]
    assert read_run(path).doc_ids.tolist() == ["c", "b", "a"]


def test_unscored_rows_keep_their_order_and_queries_sort_by_id():
    scores = np.array([np.nan, np.nan, 2.0, 1.0])
    docs = np.array(["a", "z", "b", "c"], dtype=object)
    queries = np.array(["q2", "q2", "q1", "q1"], dtype=object)
    assert trec_eval_order(scores, docs, queries).tolist() == [2, 3, 0, 1]
    assert trec_eval_order(np.zeros(0), np.zeros(0, dtype=object)).tolist() == []
