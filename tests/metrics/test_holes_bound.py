"""The holes-relevant bound scored on the gold set's arrays equals the definition scored through dicts
(the gold set as ``{query: {doc: grade}}`` with each query's unjudged top-k documents added at the highest
grade), value for value, whether the holes' hits are added at their ranks or looked up (bpref and
``judged_only`` measures), on the real SciFact and NFCorpus runs (read as columns and as dicts, with the holes
given as columns, as a mapping or not at all) and on hand-made graded judgments."""

from __future__ import annotations

import numpy as np
import pytest

from evalops.formats import read_qrels
from evalops.holes import HOLES_RELEVANT, cutoff_of, holes_relevant_frame, unjudged_top
from evalops.metrics import evaluate
from evalops.metrics.evaluation import evaluate_located
from evalops.metrics.gold import as_gold
from evalops.unjudged import unjudged_of_table
from evalops.retrievers.runfile import RunFileRetriever
from evalops.retrievers.scoring import retrieve_table

MEASURES = ["nDCG@10", "P@5", "R@100", "AP@100", "RR@10", "nDCG(gain=exp)@10", "R-Prec", "Judged@10", "Bpref"]


def by_definition(qrels, run, measures, default_k):
    """The bound as the module docstring defines it, one dict evaluate per cutoff."""
    gold = as_gold(qrels)
    grade = max(1, int(gold.grades.max()))
    judged: dict[str, dict[str, int]] = {}
    for q, d, g in zip(gold.query_ids[gold.qidx].tolist(), gold.doc_ids.tolist(), gold.grades.tolist()):
        judged.setdefault(q, {})[d] = int(g)
    by_cutoff: dict[int, list[str]] = {}
    for m in measures:
        if not m.startswith("Judged@"):
            by_cutoff.setdefault(cutoff_of(m, default_k), []).append(m)
    holes = unjudged_top(judged, run, max(by_cutoff))
    out = {}
    for k, names in by_cutoff.items():
        augmented = {q: dict(docs) for q, docs in judged.items()}
        for q, docs in holes.items():
            augmented[q].update({d: grade for d, r in docs if r < k})
        result = evaluate(augmented, run, names)
        for m in names:
            out[m + HOLES_RELEVANT] = dict(zip(result.query_ids.tolist(), result.per_query[m].tolist()))
    return out


def as_values(frame):
    out: dict[str, dict[str, float]] = {}
    for m, q, v in zip(frame["measure"], frame["query_id"], frame["value"]):
        out.setdefault(str(m), {})[str(q)] = float(v)
    return out


def assert_equal(expected, got):
    assert set(got) == set(expected)
    for m in expected:
        assert got[m].keys() == expected[m].keys(), m
        a = np.array([expected[m][q] for q in sorted(expected[m])])
        b = np.array([got[m][q] for q in sorted(expected[m])])
        assert np.array_equal(a, b, equal_nan=True), (m, np.flatnonzero(a != b)[:5])


@pytest.mark.parametrize("collection,run", [("scifact", "bm25.trec"),
                                            ("scifact", "itsumida-te3large-zerank1-top15.trec"),
                                            ("nfcorpus-orig-test", "bm25.trec")])
def test_real_runs_bound_equals_the_definition(shared_data, collection, run):
    folder = shared_data / collection
    qrels = read_qrels(folder / "qrels.tsv")
    retriever = RunFileRetriever(folder / "runs" / run)
    query_ids = sorted(set(qrels.query_ids.tolist()))
    table = retrieve_table(retriever, query_ids, k=100, name="v")
    kept = table.exclude_failed(qrels)
    as_dict = table.run.to_run().to_dict()
    columns = unjudged_of_table(kept, table.run, 100)
    for measures in (MEASURES[:-1], MEASURES):  # with Bpref, the k = 100 group looks its holes up
        expected = by_definition(kept, as_dict, measures, 100)
        assert any(v != 0 for v in expected["nDCG@10+holes"].values())
        assert_equal(expected, as_values(holes_relevant_frame(kept, table.run, measures, 100, None, columns)))
        located = evaluate_located(kept, table.run, measures)[1]  # the scores' own hits, reused by the bound
        assert_equal(expected, as_values(holes_relevant_frame(kept, table.run, measures, 100, None, columns,
                                                              located)))
        assert_equal(expected, as_values(holes_relevant_frame(kept, table.run, measures, 100)))
        assert_equal(expected, as_values(holes_relevant_frame(kept, as_dict, measures, 100, None,
                                                              unjudged_top(kept, as_dict, 100))))


def test_graded_holes_take_the_highest_grade_and_unjudged_queries_are_dropped():
    qrels = {"q1": {"a": 2, "b": 0, "c": 1}, "q2": {"x": 3}, "q3": {"z": 0}}
    run = {"q1": {"new1": 3.0, "a": 2.0, "new2": 1.0, "b": 0.5}, "q2": {"x": 2.0, "y": 1.0, "w": 1.0},
           "q3": {"n": 1.0}, "q9": {"m": 1.0}}
    measures = ["nDCG@2", "nDCG@3", "P@3", "AP", "R@2", "Bpref", "nDCG(judged_only=True)@3"]
    expected = by_definition(qrels, run, measures, 4)
    assert expected["P@3+holes"] == {"q1": 1.0, "q2": 1.0, "q3": 1 / 3}  # holes count as relevant
    assert_equal(expected, as_values(holes_relevant_frame(qrels, run, measures, 4)))
    holes = dict(unjudged_top(qrels, run, 4), q9=[("m", 0)])  # a query the gold set does not judge
    assert_equal(expected, as_values(holes_relevant_frame(qrels, run, measures, 4, None, holes)))


def test_the_sample_projects_graded_gold_set_bound_equals_the_definition(repo_root):
    import json

    import pandas as pd

    from evalops.retrievers import build_retriever, retrieve_run
    from evalops.retrievers.registry import builtin_entry

    folder = repo_root / "include" / "goldset"
    rows = [json.loads(line) for line in (folder / "corpus.jsonl").read_text(encoding="utf-8").splitlines() if line]
    corpus = pd.DataFrame({"doc_id": [r["_id"] for r in rows], "title": [r["title"] for r in rows],
                           "text": [r["text"] for r in rows]})
    queries = {r["_id"]: r["text"] for r in map(json.loads, (folder / "queries.jsonl").read_text(encoding="utf-8").splitlines())}
    qrels = read_qrels(folder / "qrels" / "test.tsv")
    result = retrieve_run(build_retriever(builtin_entry("bm25"), corpus=corpus), queries, k=20, failure_budget=1.0,
                          name="bm25")
    assert int(qrels.grades.max()) == 2  # graded: holes count at grade 2
    measures = ["nDCG@10", "P@5", "R@20", "AP", "RR@10", "nDCG(gain=exp)@5"]
    expected = by_definition(qrels, result.run, measures, 20)
    judged = evaluate(qrels, result.run, ["P@5"]).per_query["P@5"]
    assert sum(expected["P@5+holes"].values()) > judged.sum()  # the run has holes in its top 5
    assert_equal(expected, as_values(holes_relevant_frame(qrels, result.run, measures, 20)))
