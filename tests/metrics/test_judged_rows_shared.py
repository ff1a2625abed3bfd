"""One judged lookup per run table (``evalops.metrics.table_input.judged_rows``), shared by the measures, the
unjudged documents and the holes bound of a version: kept on the table for the gold set's judgment arrays,
so that a table scored against another gold set (other judgments) is looked up again, and the shared
lookup gives exactly what a fresh table gives."""

from __future__ import annotations

import numpy as np

from evalops.data import Qrels
from evalops.formats import read_run_table
from evalops.metrics import evaluate
from evalops.metrics.gold import as_gold
from evalops.metrics.table_input import judged_rows, table_ranks, unjudged_rows

MEASURES = ["nDCG@10", "P@5", "R@100", "RR", "AP", "Judged@10", "Bpref"]


def _files(tmp_path):
    rng = np.random.default_rng(7)
    run, judgments_a, judgments_b = [], [], []
    for q in range(40):
        docs = rng.choice(300, size=30, replace=False)
        scores = np.round(rng.random(30), 2)  # ties: settled by doc id
        run += [f"q{q} Q0 d{d} {r + 1} {s} x\n" for r, (d, s) in enumerate(zip(docs, scores))]
        judged = rng.choice(300, size=12, replace=False)
        judgments_a += [(f"q{q}", f"d{d}", int(rng.integers(0, 3))) for d in judged]
        judgments_b += [(f"q{q}", f"d{d}", int(rng.integers(0, 3))) for d in judged[:6]]
    path = tmp_path / "run.trec"
    path.write_text("".join(run))
    return path, *(Qrels(*map(np.array, zip(*j))) for j in (judgments_a, judgments_b))


def _same(a, b):
    assert a.query_ids.tolist() == b.query_ids.tolist()
    for name, values in a.per_query.items():
        np.testing.assert_array_equal(values, b.per_query[name], err_msg=name)


def test_a_table_scored_against_two_gold_sets_is_looked_up_for_each(tmp_path):
    path, qrels_a, qrels_b = _files(tmp_path)
    table = read_run_table(path)
    gold_a, gold_b = as_gold(qrels_a), as_gold(qrels_b)
    first = evaluate(gold_a, table, MEASURES)
    rows_a, pairs_a = judged_rows(gold_a, table)
    assert judged_rows(gold_a, table)[0] is rows_a  # kept on the table for these judgments
    second = evaluate(gold_b, table, MEASURES)  # other judgments: looked up again
    _same(second, evaluate(gold_b, read_run_table(path), MEASURES))
    _same(first, evaluate(gold_a, read_run_table(path), MEASURES))
    # the rows found are exactly the judged (query, document) pairs
    judged = set(zip(gold_a.query_ids[gold_a.qidx].tolist(), gold_a.doc_ids.tolist()))
    queries = table.query_ids[table.query_codes].tolist()
    docs = table.doc_ids().tolist()
    expected = [i for i, pair in enumerate(zip(queries, docs)) if pair in judged]
    rows_a, pairs_a = judged_rows(gold_a, table)
    assert rows_a.tolist() == expected
    assert [(queries[r], docs[r]) for r in rows_a] == \
        list(zip(gold_a.query_ids[gold_a.qidx[pairs_a]].tolist(), gold_a.doc_ids[pairs_a].tolist()))
    # and the unjudged rows of the top 10 are the others
    ranks = table_ranks(table)
    unjudged = unjudged_rows(gold_a, table, ranks, 10).tolist()
    assert unjudged == [i for i in range(len(table)) if ranks[i] < 10 and i not in set(expected)]
