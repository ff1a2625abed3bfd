"""A run file scored in columns (``retrieve_table``) gives what the per-query path (``retrieve_run``) gives:
per-query values, unjudged documents with their ranks, the judge's top documents and the failures, on the
real SciFact and NFCorpus runs, at the retrieval depth and below it (the cut at k), and on a hand-made file
whose ties at the cut are settled by doc id."""

from __future__ import annotations

import numpy as np
import pytest

from evalops.data import Qrels, RunTable
from evalops.formats import read_qrels
from evalops.judged.holes import unjudged_top
from evalops.judged.unjudged import UnjudgedDocs, read_unjudged, unjudged_of_table, write_unjudged
from evalops.metrics import evaluate
from evalops.retrievers.runfile import RunFileRetriever
from evalops.retrievers.scoring import retrieve_run, retrieve_table

MEASURES = ["nDCG@10", "P@10", "R@100", "AP@100", "RR@10", "Judged@10", "nDCG(gain=exp)@10", "R-Prec"]


def both_paths(qrels: Qrels, retriever: RunFileRetriever, query_ids: list[str], k: int):
    old = retrieve_run(retriever, {q: "text" for q in query_ids}, k=k, failure_budget=1.0, name="v")
    new = retrieve_table(retriever, query_ids, k=k, name="v")
    assert isinstance(new.run, RunTable)
    return old, new


def assert_same(qrels: Qrels, old, new, k: int) -> None:
    kept = old.exclude_failed(qrels)
    assert new.failed == old.failed
    a, b = evaluate(kept, old.run, MEASURES), evaluate(new.exclude_failed(qrels), new.run, MEASURES)
    assert a.query_ids.tolist() == b.query_ids.tolist()
    for m in MEASURES:
        assert np.array_equal(a.per_query[m], b.per_query[m], equal_nan=True), m
    expected = unjudged_top(kept, old.run, k)
    got = unjudged_of_table(kept, new.run, k)
    assert expected and {q: got[q] for q in got} == expected
    assert new.top_documents(5) == old.top_documents(5)
    return got


@pytest.mark.parametrize("collection,run", [("scifact", "bm25.trec"), ("nfcorpus-orig-test", "bm25.trec")])
@pytest.mark.parametrize("k", [100, 7])
@pytest.mark.parametrize("reader", ["exact", "arrow"])
def test_real_runs_score_the_same_in_columns(shared_data, collection, run, k, reader, monkeypatch, tmp_path):
    import evalops.formats._table as table_module
    import evalops.retrievers.runfile as runfile

    monkeypatch.setattr(runfile, "_TABLES", type(runfile._TABLES)())
    if reader == "arrow":  # small files go to the exact parser (a numpy dictionary); Arrow's is another path
        monkeypatch.setattr(table_module, "SMALL_FILE", 0)
    else:  # the exact parser even where pyarrow is already imported
        monkeypatch.setattr(table_module, "SMALL_FILE_ARROW_LOADED", table_module.SMALL_FILE)
    folder = shared_data / collection
    qrels = read_qrels(folder / "qrels.tsv")
    retriever = RunFileRetriever(folder / "runs" / run)
    assert retriever.columnar
    assert isinstance(retriever._table.doc_dictionary, np.ndarray) == (reader == "exact")
    query_ids = sorted(set(qrels.query_ids.tolist()))
    # a shard's slice of the gold queries, plus one query the file does not hold (a failure)
    shard = query_ids[: len(query_ids) // 2] + ["no-such-query"]
    old, new = both_paths(qrels, retriever, shard, k)
    assert "no-such-query" in new.failed
    unjudged = assert_same(qrels, old, new, k)
    write_unjudged(tmp_path / "unjudged.parquet", unjudged)  # as a shard keeps them, and as compare reads them
    assert dict(read_unjudged(tmp_path / "unjudged.parquet")) == dict(unjudged)
    # the table holds the shard's queries only, each cut at k
    assert set(new.run.query_ids.tolist()) <= set(shard)
    assert np.bincount(new.run.query_codes).max() <= k


def test_ties_at_the_cut_are_settled_by_doc_id_descending(tmp_path):
    path = tmp_path / "tied.trec"
    # q1: four documents tie on score; the cut at 2 keeps the two greatest doc ids (d9, d5), as trec_eval ranks
    path.write_text("q1 Q0 d1 1 1.0 t\nq1 Q0 d9 2 1.0 t\nq1 Q0 d5 3 1.0 t\nq1 Q0 d3 4 1.0 t\n"
                    "q2 Q0 d2 1 3.0 t\nq2 Q0 d4 2 2.00000001 t\nq2 Q0 d7 3 2.0 t\n")
    qrels = Qrels.from_dict({"q1": {"d5": 1, "d1": 1}, "q2": {"d7": 2, "d4": 0}, "q3": {"d1": 1}})
    retriever = RunFileRetriever(path, missing="empty")
    old, new = both_paths(qrels, retriever, ["q1", "q2", "q3"], 2)
    assert new.failed == {}
    assert new.top_documents(2) == {"q1": ["d9", "d5"], "q2": ["d2", "d7"], "q3": []}
    assert_same(qrels, old, new, 2)
    assert dict(unjudged_of_table(qrels, new.run, 2)) == {"q1": [("d9", 0)], "q2": [("d2", 0)]}


def test_unjudged_documents_round_trip_through_parquet(tmp_path):
    plain = {"q2": [("d1", 0), ("d é", 4)], "q1": [("d3", 2)], "q9": []}
    docs = UnjudgedDocs.from_dict(plain)
    assert dict(docs) == {"q1": [("d3", 2)], "q2": [("d1", 0), ("d é", 4)]}
    write_unjudged(tmp_path / "u.parquet", docs)
    back = read_unjudged(tmp_path / "u.parquet")
    assert dict(back) == dict(docs)
    assert back.get("q9", ()) == () and "q2" in back and back.n_documents() == 3
    both = UnjudgedDocs.concat([back, UnjudgedDocs.from_dict({"q0": [("x", 1)]})])
    assert dict(both) == {**dict(docs), "q0": [("x", 1)]}


def test_a_file_checked_then_scored_is_read_once_and_a_changed_file_again(tmp_path, monkeypatch):
    import os

    import evalops.retrievers.runfile as runfile
    from evalops.retrievers.runfile import check_run_file

    reads = []
    real = runfile.read_run_table
    monkeypatch.setattr(runfile, "read_run_table", lambda *a, **k: reads.append(1) or real(*a, **k))
    path = tmp_path / "run.trec"
    path.write_text("q1 Q0 d1 1 2.0 t\nq1 Q0 d2 2 1.0 t\n")
    check_run_file(path)
    first = RunFileRetriever(path)
    assert len(reads) == 1 and first.table(["q1"], 1)[0].doc_ids().tolist() == ["d1"]
    path.write_text("q1 Q0 d1 1 1.0 t\nq1 Q0 d2 2 2.0 t\n")  # the file changed: read again
    os.utime(path, ns=(1, 1))
    second = RunFileRetriever(path)
    assert len(reads) == 2 and second.table(["q1"], 1)[0].doc_ids().tolist() == ["d2"]


@pytest.mark.parametrize("reader", ["exact", "arrow"])
def test_ranks_from_codes_equal_the_ranking_rule_on_many_ties(tmp_path, reader, monkeypatch):
    import evalops.formats._table as table_module
    from evalops.formats.trec import read_run_table
    from evalops.metrics.ranking import trec_eval_order
    from evalops.metrics.table_input import table_ranks

    if reader == "arrow":
        monkeypatch.setattr(table_module, "SMALL_FILE", 0)
    else:
        monkeypatch.setattr(table_module, "SMALL_FILE_ARROW_LOADED", table_module.SMALL_FILE)
    rng = np.random.default_rng(7)
    lines = []
    for q in range(60):
        docs = rng.choice(400, size=int(rng.integers(1, 40)), replace=False)
        for d in docs.tolist():  # few distinct scores (ties everywhere), one pair differing beyond float32
            score = rng.choice(["1", "2", "2.5", "-0", "0", "3.0000000001", "3"])
            lines.append(f"q{q % 45} Q0 d{d}{'é' if d % 7 == 0 else ''} 1 {score} t")
    seen, kept = set(), []
    for line in rng.permutation(lines).tolist():  # queries interleaved, no duplicate pair
        key = tuple(line.split()[:3:2])
        if key not in seen:
            seen.add(key)
            kept.append(line)
    path = tmp_path / "ties.trec"
    path.write_text("\n".join(kept) + "\n")
    table = read_run_table(path, float32=False)
    run = table.to_run()
    order = trec_eval_order(run.scores, run.doc_ids, run.query_ids)
    expected = np.empty(len(order), dtype=np.int64)
    queries = run.query_ids[order]
    starts = np.r_[0, np.flatnonzero(queries[1:] != queries[:-1]) + 1]
    first = np.repeat(starts, np.diff(np.r_[starts, len(order)]))
    expected[order] = np.arange(len(order)) - first
    assert np.array_equal(table_ranks(table), expected)
