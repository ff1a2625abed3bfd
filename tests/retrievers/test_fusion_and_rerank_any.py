"""Hybrid by score-normalised linear fusion, and rerank with any scoring retriever (dense, BM25, TF-IDF)."""

from __future__ import annotations

import numpy as np
import pytest

from evalops.errors import ConfigError
from evalops.retrievers import (
    BM25Retriever,
    FunctionRetriever,
    Query,
    ReciprocalRankFusion,
    RerankedRetriever,
    TfidfRetriever,
    Tokenizer,
    build_retriever,
    load_registry,
)
from evalops.retrievers.rerank import RetrieverReranker

PLAIN = Tokenizer(stem=False, stopwords=False)
TOY = {"d1": "apple apple banana", "d2": "banana cherry", "d3": "cherry cherry cherry date", "d4": "elderberry"}


def fixed(ranked):
    return FunctionRetriever(lambda text, k: ranked, batch=False, name="fixed")


def one(retriever, text="q", k=10):
    (res,) = retriever.retrieve([Query("q", text)], k)
    assert res.ok, res.error
    return res.ranked


def test_linear_fusion_normalises_each_input_by_hand():
    a = fixed([("x", 10.0), ("y", 6.0), ("z", 2.0)])  # normalised 1, 0.5, 0
    b = fixed([("y", 0.9), ("w", 0.3)])  # normalised 1, 0
    got = dict(one(ReciprocalRankFusion([a, b], method="linear", weights=[1.0, 2.0])))
    assert got == pytest.approx({"y": 0.5 + 2.0, "x": 1.0, "z": 0.0, "w": 0.0})
    assert [d for d, _ in one(ReciprocalRankFusion([a, b], method="linear", weights=[1.0, 2.0]))][:2] == ["y", "x"]


def test_linear_fusion_gives_one_to_a_flat_input_and_refuses_unscored_lists():
    flat = fixed([("x", 3.0), ("y", 3.0)])
    got = dict(one(ReciprocalRankFusion([flat, fixed([("x", 1.0)])], method="linear")))
    assert got == pytest.approx({"x": 2.0, "y": 1.0})
    unscored = FunctionRetriever(lambda text, k: ["x", "y"], batch=False, name="ids")
    (res,) = ReciprocalRankFusion([unscored, flat], method="linear").retrieve([Query("q", "t")], 5)
    assert not res.ok and "linear fusion needs scores" in res.error


def test_rrf_weights_scale_each_inputs_share():
    a, b = fixed([("x", 1.0), ("y", 0.5)]), fixed([("y", 1.0), ("x", 0.5)])
    got = dict(one(ReciprocalRankFusion([a, b], weights=[2.0, 1.0])))
    assert got["x"] == pytest.approx(2 / 61 + 1 / 62) and got["y"] == pytest.approx(2 / 62 + 1 / 61)
    with pytest.raises(ConfigError, match="weights must be 2 finite numbers"):
        ReciprocalRankFusion([a, b], weights=[1.0])
    with pytest.raises(ConfigError, match="unknown method 'max'"):
        ReciprocalRankFusion([a, b], method="max")


@pytest.mark.parametrize("scorer", [BM25Retriever, TfidfRetriever])
def test_a_retriever_reranks_with_its_own_scores(scorer):
    s = scorer(TOY, tokenizer=PLAIN)
    first = fixed([("d4", 9.0), ("d1", 8.0), ("d2", 7.0), ("d3", 6.0)])
    got = one(RerankedRetriever(first, RetrieverReranker(s), TOY, depth=4), "cherry")
    full = dict(one(s, "cherry"))
    assert [d for d, _ in got][:2] == ["d3", "d2"]
    for d, score in got:
        assert score == pytest.approx(full.get(d, 0.0))
    np.testing.assert_allclose(s.score_documents("cherry", ["d3", "d4"]), [full["d3"], 0.0])


def test_a_scorer_that_cannot_score_given_documents_is_refused():
    with pytest.raises(ConfigError, match="cannot score given documents"):
        RetrieverReranker(fixed([]))


def test_registry_entries_for_linear_hybrid_and_a_dense_reranker(tmp_path, small_corpus):
    p = tmp_path / "retrievers.yaml"
    p.write_text(
        "retrievers:\n"
        "  - {name: vec, version: '1', adapter: builtin, deployed: false, owner: t,\n"
        "     params: {kind: dense, model: wordllama, dim: 64}}\n"
        "  - {name: mix, version: '1', adapter: builtin, deployed: false, owner: t,\n"
        "     params: {kind: hybrid, method: linear, weights: [1, 0.5], retrievers: [{kind: bm25}, {ref: vec@1}]}}\n"
        "  - {name: rr, version: '1', adapter: builtin, deployed: false, owner: t,\n"
        "     params: {kind: rerank, first: {kind: bm25}, reranker: {retriever: {ref: vec@1}}, depth: 5}}\n")
    reg = load_registry(p)
    mix = build_retriever(reg.resolve("mix@1"), corpus=small_corpus, registry=reg)
    assert mix.method == "linear" and mix.weights == [1.0, 0.5]
    rr = build_retriever(reg.resolve("rr@1"), corpus=small_corpus, registry=reg)
    (res,) = rr.retrieve([Query("q", "refund unopened product")], 3)
    assert res.ok and res.ranked[0][0] == "refund-1"


@pytest.mark.parametrize("params, message", [
    ("{kind: dense, model: wordllama, dim: 100}", "wordllama's dim must be 64, 128 or 256"),
    ("{kind: dense, model: models/st, dim: 64}", "`dim` applies to model: wordllama only"),
    ("{kind: hybrid, method: max, retrievers: [{kind: bm25}, {kind: tfidf}]}", "hybrid method 'max'"),
    ("{kind: hybrid, weights: [1], retrievers: [{kind: bm25}, {kind: tfidf}]}", "weights must be 2 numbers"),
    ("{kind: rerank, first: {kind: bm25}, reranker: {kind: overlap, retriever: {kind: bm25}}}", "exactly one of"),
    ("{kind: rerank, first: {kind: bm25}, reranker: {retriever: {kind: nope}}}", "unknown builtin kind 'nope'"),
])
def test_schema_refuses_bad_dense_hybrid_and_rerank_params(tmp_path, params, message):
    p = tmp_path / "retrievers.yaml"
    p.write_text(f"retrievers:\n  - {{name: x, version: '1', adapter: builtin, deployed: false, owner: t, params: {params}}}\n")
    with pytest.raises(ConfigError, match=message):
        load_registry(p)
