"""Judged@k, bpref and the condensed-list (``judged_only``) variants against pytrec_eval (trec_eval), per query.

Judged@k has no trec_eval measure of its own; the oracle is trec_eval's P@k over qrels in which every
judgment counts as relevant (see ``oracle.judged_per_query``), so the ranking rule is trec_eval's.
"""

from __future__ import annotations

import numpy as np
import pytest

from evalops.data import Run
from evalops.formats import read_qrels, read_run
from evalops.metrics import Policy, evaluate
from .oracle import assert_matches, judged_per_query, pytrec_per_query
from .test_differential import _input_shapes, _synthetic

ZERO = Policy(no_answer="zero")
CUTOFFS = [1, 3, 5, 10, 20, 100]
CONDENSABLE = [
    "P@1", "P@5", "P@10", "R@5", "R@10", "R@100",
    "nDCG@1", "nDCG@5", "nDCG@10", "nDCG",
    "AP", "AP@10", "RR", "Success@1", "Success@5", "R-Prec",
]  # fmt: skip
REAL = [
    ("scifact", "bm25.trec"),
    ("scifact", "itsumida-te3large-zerank1-top15.trec"),
    ("nfcorpus-orig-test", "bm25.trec"),
]


def _param(measure: str, **params: object) -> str:
    """``_param("nDCG@10", judged_only=True)`` -> ``nDCG(judged_only=True)@10``."""
    name, at, cutoff = measure.partition("@")
    inner = ",".join(f"{k}={v}" for k, v in params.items())
    return f"{name}({inner}){at}{cutoff}"


def _check_all(qrels: dict, given_shapes: dict, run: dict, levels=(1, 2)) -> None:
    expected = judged_per_query(qrels, run, CUTOFFS)
    for level in levels:
        params = {} if level == 1 else {"rel": level}
        bpref = pytrec_per_query(qrels, run, ["Bpref"], relevance_level=level)
        expected[_param("Bpref", **params) if params else "Bpref"] = bpref["Bpref"]
        condensed = pytrec_per_query(qrels, run, CONDENSABLE, relevance_level=level, judged_docs_only=True)
        for m in CONDENSABLE:
            if m.startswith("nDCG") and level != 1:
                continue  # nDCG has no threshold: its gain is the grade
            expected[_param(m, **params, judged_only=True)] = condensed[m]
        # the usual measures in the same call: they then come from the same ranking pass
        usual = pytrec_per_query(qrels, run, ["P@5", "R@100", "AP", "RR", "R-Prec"], relevance_level=level)
        expected.update({_param(m, **params) if params else m: v for m, v in usual.items()})
    expected.update(pytrec_per_query(qrels, run, ["nDCG@10", "nDCG"]))
    for shape, given in given_shapes.items():
        result = evaluate(qrels, given, list(expected), ZERO)
        assert len(result.query_ids) == len(qrels), shape
        assert_matches(result, expected)


@pytest.mark.parametrize("collection, run_file", REAL)
def test_real_collections_match_trec_eval(shared_data, collection, run_file):
    qrels = read_qrels(shared_data / collection)
    run = read_run(shared_data / collection / "runs" / run_file)
    shapes = _input_shapes(run, np.random.default_rng(11))
    _check_all(qrels.to_dict(), shapes, run.to_dict(), levels=(1, 2) if collection.startswith("nf") else (1,))


@pytest.mark.parametrize("seed", range(8))
def test_synthetic_ties_negative_grades_and_short_runs(seed):
    qrels, run = _synthetic(seed)
    _check_all(qrels, _input_shapes(Run.from_dict(run), np.random.default_rng(seed)), run)


def test_real_runs_leave_documents_unjudged(shared_data):
    """The condensed list differs from the full one on these runs, or the test above would prove little."""
    qrels = read_qrels(shared_data / "scifact")
    run = read_run(shared_data / "scifact" / "runs" / "bm25.trec")
    result = evaluate(qrels, run, ["Judged@10", "nDCG@10", "nDCG(judged_only=True)@10"], ZERO)
    assert result.mean("Judged@10") < 0.5
    changed = result.per_query["nDCG(judged_only=True)@10"] != result.per_query["nDCG@10"]
    assert changed.sum() > 30
    assert (result.per_query["nDCG(judged_only=True)@10"] >= result.per_query["nDCG@10"] - 1e-12).all()
