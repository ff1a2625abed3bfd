"""Runs ranked straight from the reader's codes give the values of the ``Run`` path (which the parity
tests hold to pytrec_eval), through both parsers, on real runs and on tie-heavy ones."""

from __future__ import annotations

import random

import numpy as np
import pytest

import evalops.formats._table as table
from evalops.formats import read_qrels, read_run, read_run_table
from evalops.metrics import evaluate

MEASURES = ["nDCG@10", "nDCG", "P@5", "AP", "RR", "R@100", "R-Prec", "Success@3"]


def _tie_heavy(path, qrels_path, seed=3):
    rng = random.Random(seed)
    run, qrels = [], []
    for q in range(60):
        docs = rng.sample(range(400), 80)
        for rank, d in enumerate(docs):
            run.append(f"q{q} Q0 doc{d} {rank + 1} {rng.choice([1, 1.5, 2, 2.0000001, 3])} tie\n")
        for d in rng.sample(docs, 10) + rng.sample(range(400, 450), 2):
            qrels.append(f"q{q} 0 doc{d} {rng.choice([0, 1, 2, 3])}\n")
    path.write_text("".join(run))
    qrels_path.write_text("".join(qrels))


@pytest.mark.parametrize("fast", [True, False], ids=["arrow", "exact"])
@pytest.mark.parametrize("case", ["scifact", "nfcorpus-orig-test", "ties"])
def test_table_path_equals_run_path(shared_data, tmp_path, monkeypatch, fast, case):
    if fast:
        monkeypatch.setattr(table, "SMALL_FILE", 0)
        monkeypatch.setattr(table, "_BLOCK", 1 << 16)  # several Arrow blocks
    else:  # the exact parser even where pyarrow is already imported
        monkeypatch.setattr(table, "SMALL_FILE_ARROW_LOADED", table.SMALL_FILE)
    if case == "ties":
        run_path, qrels_path = tmp_path / "ties.trec", tmp_path / "ties.qrels"
        _tie_heavy(run_path, qrels_path)
    else:
        run_path, qrels_path = shared_data / case / "runs" / "bm25.trec", shared_data / case
    gold = read_qrels(qrels_path)
    tab = read_run_table(run_path)
    assert isinstance(tab.doc_dictionary, np.ndarray) != fast
    a = evaluate(gold, tab, MEASURES)
    b = evaluate(gold, read_run(run_path), MEASURES)
    for name in a.per_query:
        np.testing.assert_array_equal(a.per_query[name], b.per_query[name])
    assert a.run_name == b.run_name and a.missing_from_run_ids == b.missing_from_run_ids


def test_a_mid_sized_file_takes_the_arrow_path_once_pyarrow_is_loaded(tmp_path, monkeypatch):
    """A pipeline run has pyarrow imported: 100 KB of qrels is read in columns (not line by line), with the
    values the exact parser gives."""
    import pyarrow.compute  # noqa: F401  (what a run has loaded)
    import pyarrow.csv  # noqa: F401

    from evalops.formats import _table as table
    from evalops.formats.beir import read_beir_qrels

    path = tmp_path / "qrels.tsv"
    path.write_text("query-id\tcorpus-id\tscore\n" + "".join(f"q{i // 5}\td{i * 7 % 9973}\t{i % 3}\n"
                                                             for i in range(8000)))
    assert table.SMALL_FILE_ARROW_LOADED < path.stat().st_size < table.SMALL_FILE
    exact = table.read_table_exact
    calls = []
    monkeypatch.setattr(table, "read_table_exact", lambda *a, **k: calls.append(1) or exact(*a, **k))
    fast = read_beir_qrels(path)
    assert calls == []
    monkeypatch.setattr(table, "SMALL_FILE_ARROW_LOADED", 1 << 30)
    slow = read_beir_qrels(path)
    assert calls == [1]
    for name in ("query_ids", "doc_ids", "grades"):
        assert np.array_equal(getattr(fast, name), getattr(slow, name)), name
