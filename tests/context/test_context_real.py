"""The context measures of a real run equal the naive implementation, query by query."""

from __future__ import annotations

import numpy as np
import pytest

from evalops.context import context_values
from evalops.formats import read_qrels, read_run
from evalops.formats.beir import read_beir_corpus, read_beir_queries
from evalops.metrics.topk import top_k
from .naive import naive_all

MEASURES = ["Tokens@10", "Redundancy@10", "NearDuplicates@10", "QueryCoverage@10", "RelevantTokenShare@10"]


def scifact_inputs(folder):
    corpus = read_beir_corpus(folder / "corpus.jsonl")
    texts = dict(zip(corpus.doc_id, (corpus.title + "\n" + corpus.text).tolist()))
    queries = read_beir_queries(folder / "queries.jsonl")
    qrels = read_qrels(folder).to_dict()
    queries = {q: t for q, t in queries.items() if q in qrels}
    ranked = top_k(read_run(folder / "runs" / "bm25.trec"), 10)
    return queries, ranked, texts, qrels


@pytest.mark.parametrize("collection", ["scifact", "nfcorpus-orig-test"])
def test_real_run_matches_the_naive_implementation(shared_data, collection):
    queries, ranked, texts, qrels = scifact_inputs(shared_data / collection)
    # plant near-duplicates (real top 10s have none): in every third query, rank 5 becomes a copy of
    # rank 1 with one word dropped
    for i, q in enumerate(sorted(ranked)):
        docs = ranked[q]
        if i % 3 == 0 and len(docs) >= 5:
            copy = f"{docs[0]}-copy"
            texts[copy] = texts[docs[0]].replace(" the ", " ", 1)
            docs[4] = copy
    values = context_values(MEASURES, queries, ranked, texts, qrels)
    expected = naive_all(queries, ranked, texts, qrels)
    for m in MEASURES:
        theirs = np.array([expected[m][q] for q in values.query_ids.tolist()])
        np.testing.assert_allclose(values.per_query[m], theirs, rtol=0, atol=1e-12, err_msg=m)
    # the data exercise every measure: none is constant
    for m in MEASURES:
        assert np.ptp(values.per_query[m]) > 0, m


def test_top_k_follows_the_evaluation_ranking():
    run = {"q": {"d1": 1.0, "d9": 1.0, "d2": 2.0, "d0": 0.5}, "p": {"a": 0.1}}
    assert top_k(run, 3) == {"q": ["d2", "d9", "d1"], "p": ["a"]}  # ties: doc id descending
    with pytest.raises(ValueError):
        top_k(run, 0)
