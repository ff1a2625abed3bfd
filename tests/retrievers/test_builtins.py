"""Built-in retrievers on hand-checkable corpora: BM25, TF-IDF, RRF, rerank, dense (injected encoder)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from evalops.errors import ConfigError, InputError
from evalops.retrievers import (
    BM25Retriever,
    CallableReranker,
    DenseRetriever,
    FunctionRetriever,
    LexicalOverlapReranker,
    Query,
    QueryResult,
    ReciprocalRankFusion,
    RerankedRetriever,
    TfidfRetriever,
    Tokenizer,
    as_corpus,
)

PLAIN = Tokenizer(stem=False, stopwords=False)
TOY = {"d1": "apple apple banana", "d2": "banana cherry", "d3": "cherry cherry cherry date", "d4": "elderberry"}


def one(retriever, text, k=10):
    (res,) = retriever.retrieve([Query("q", text)], k)
    assert res.ok, res.error
    return res.ranked


def bm25_by_hand(query_tokens, docs, k1, b):
    tokens = {d: t.split() for d, t in docs.items()}
    n = len(docs)
    avgdl = sum(len(t) for t in tokens.values()) / n
    out = {}
    for d, toks in tokens.items():
        s = 0.0
        for q in query_tokens:
            df = sum(q in t for t in tokens.values())
            tf = toks.count(q)
            if df == 0 or tf == 0:
                continue
            idf = math.log(1 + (n - df + 0.5) / (df + 0.5))
            s += idf * tf / (tf + k1 * (1 - b + b * len(toks) / avgdl))
        out[d] = s
    return out


def test_bm25_matches_the_lucene_formula_by_hand():
    r = BM25Retriever(TOY, k1=0.9, b=0.4, tokenizer=PLAIN)
    got = dict(one(r, "banana cherry cherry"))
    want = {d: s for d, s in bm25_by_hand(["banana", "cherry", "cherry"], TOY, 0.9, 0.4).items() if s > 0}
    assert set(got) == set(want) == {"d1", "d2", "d3"}
    for d in want:
        assert got[d] == pytest.approx(want[d], rel=1e-6)


def test_bm25_orders_by_score_and_leaves_out_unmatched_documents():
    r = BM25Retriever(TOY, tokenizer=PLAIN)
    ranked = one(r, "cherry")
    assert [d for d, _ in ranked] == ["d3", "d2"]
    assert one(r, "zucchini") == ()  # a real "retrieved nothing", not a failure


def test_index_fraction_truncates_the_index_in_collection_order():
    r = BM25Retriever(TOY, tokenizer=PLAIN, index_fraction=0.5)
    assert len(r.docs) == 2
    assert [d for d, _ in one(r, "cherry")] == ["d2"]  # d3 is no longer indexed
    with pytest.raises(ConfigError, match=r"index_fraction must be in \(0, 1\]"):
        BM25Retriever(TOY, index_fraction=0)


def test_tfidf_cosine_matches_a_dense_computation():
    r = TfidfRetriever(TOY, tokenizer=PLAIN)
    vocab = sorted({t for text in TOY.values() for t in text.split()})
    n = len(TOY)
    df = np.array([sum(t in text.split() for text in TOY.values()) for t in vocab])
    idf = np.log((1 + n) / (1 + df)) + 1

    def vec(text):
        tf = np.array([text.split().count(t) for t in vocab], dtype=float)
        w = np.where(tf > 0, 1 + np.log(np.where(tf > 0, tf, 1)), 0) * idf
        return w / np.linalg.norm(w)

    q = vec("banana cherry")
    want = {d: float(vec(t) @ q) for d, t in TOY.items() if vec(t) @ q > 0}
    got = dict(one(r, "banana cherry zucchini"))  # an unknown token is ignored
    assert got.keys() == want.keys()
    for d in want:
        assert got[d] == pytest.approx(want[d], rel=1e-12)
    assert all(0 < s <= 1 for s in got.values())


def test_rrf_fuses_by_rank_with_k_60():
    a = FunctionRetriever(lambda qs, k: [[("x", 9.0), ("y", 5.0)] for _ in qs])
    b = FunctionRetriever(lambda qs, k: [["y", "z"] for _ in qs])
    ranked = one(ReciprocalRankFusion([a, b]), "anything")
    assert [d for d, _ in ranked] == ["y", "x", "z"]
    assert dict(ranked)["y"] == pytest.approx(1 / 62 + 1 / 61)
    assert dict(ranked)["x"] == pytest.approx(1 / 61)


def test_rrf_fails_a_query_when_an_input_failed_on_it():
    good = FunctionRetriever(lambda qs, k: [["x"] for _ in qs])
    bad = FunctionRetriever(lambda qs, k: [QueryResult.failure(q.id, "timed out", retries=2) for q in qs])
    (res,) = ReciprocalRankFusion([good, bad]).retrieve([Query("q", "t")], 5)
    assert not res.ok and "timed out" in res.error and res.retries == 2
    with pytest.raises(ConfigError, match="at least two"):
        ReciprocalRankFusion([good])


def test_hybrid_bm25_tfidf_on_the_toy_corpus():
    fused = ReciprocalRankFusion([BM25Retriever(TOY, tokenizer=PLAIN), TfidfRetriever(TOY, tokenizer=PLAIN)])
    assert [d for d, _ in one(fused, "cherry date")][0] == "d3"


def test_rerank_stage_reorders_first_stage_candidates():
    first = FunctionRetriever(lambda qs, k: [["d1", "d2", "d3", "d4"][:k] for _ in qs])
    by_length = CallableReranker(lambda q, texts: [float(len(t)) for t in texts])
    r = RerankedRetriever(first, by_length, TOY, depth=3)
    assert [d for d, _ in one(r, "q", k=2)] == ["d3", "d1"]  # only the first 3 candidates are re-scored


def test_lexical_overlap_reranker_weights_query_terms_by_idf():
    first = FunctionRetriever(lambda qs, k: [["d1", "d2", "d3", "d4"] for _ in qs])
    r = RerankedRetriever(first, LexicalOverlapReranker(TOY, tokenizer=PLAIN), TOY)
    ranked = one(r, "banana elderberry")
    idf_banana, idf_elder = math.log(5 / 3) + 1, math.log(5 / 2) + 1
    total = idf_banana + idf_elder
    # d4 covers the rarer term; d2 and d1 tie and are ordered by doc id descending, like the evaluator
    assert [d for d, _ in ranked] == ["d4", "d2", "d1", "d3"]
    assert dict(ranked) == pytest.approx({"d4": idf_elder / total, "d2": idf_banana / total, "d1": idf_banana / total, "d3": 0.0})


def test_a_failing_reranker_fails_only_its_query():
    first = FunctionRetriever(lambda qs, k: [["d1", "d2"] for _ in qs])

    def picky(q, texts):
        if q == "boom":
            raise RuntimeError("model crashed")
        return [1.0, 2.0]

    r = RerankedRetriever(first, CallableReranker(picky), TOY)
    ok, bad = r.retrieve([Query("a", "fine"), Query("b", "boom")], 5)
    assert ok.ranked == (("d2", 2.0), ("d1", 1.0))
    assert bad.error == "query 'b': reranker failed: RuntimeError: model crashed"
    wrong = RerankedRetriever(first, CallableReranker(lambda q, t: [1.0]), TOY)
    assert "must return 2 finite scores" in wrong.retrieve([Query("c", "x")], 5)[0].error


def test_dense_retriever_with_an_injected_encoder():
    vocab = ["apple", "banana", "cherry", "date", "elderberry"]

    def encode(texts):  # bag of words: a stand-in for a sentence encoder
        return np.array([[t.split().count(w) for w in vocab] for t in texts], dtype=float)

    r = DenseRetriever(TOY, encode, batch_size=3)
    ranked = one(r, "cherry")
    assert ranked[0][0] == "d3" and ranked[0][1] == pytest.approx(3 / math.sqrt(10))
    assert len(one(r, "cherry", k=10)) == 4  # cosine 0 is kept: a dense retriever ranks everything


def test_corpus_shapes(small_corpus):
    c = as_corpus(small_corpus)
    assert c.doc_ids[0] == "travel-1" and c.texts[0].startswith("Travel policy Employees")
    assert as_corpus({"a": "x", 1: None}).texts == ["x", ""]
    with pytest.raises(InputError, match="appears more than once"):
        as_corpus(small_corpus.assign(doc_id="same"))
    with pytest.raises(InputError, match="no documents"):
        as_corpus({})
    with pytest.raises(InputError, match=r"missing column\(s\) \['text'\]"):
        as_corpus(small_corpus.drop(columns="text"))


def test_knowledge_base_snapshot_shaped_corpora(small_corpus):
    class Snapshot:  # the shape of evalops.knowledge's snapshot: a .docs frame and a has_text flag
        def __init__(self, docs, has_text=True):
            self.docs, self.has_text, self.source = docs, has_text, "kb@2024-06-01"

    assert as_corpus(Snapshot(small_corpus.assign(content_hash="h"))).doc_ids.tolist() == small_corpus.doc_id.tolist()
    with pytest.raises(InputError, match="kb@2024-06-01 holds ids and hashes but no text"):
        as_corpus(Snapshot(small_corpus, has_text=False))


def test_chinese_query_finds_its_chunk_in_a_mixed_corpus(small_corpus):
    for chinese in ("jieba", "bigram"):
        r = BM25Retriever(small_corpus, tokenizer=Tokenizer(chinese=chinese))
        assert one(r, "出差住宿标准是多少？")[0][0] == "zh-travel"
        assert one(r, "未拆封的商品怎么退款")[0][0] == "zh-refund"
    assert one(TfidfRetriever(small_corpus), "退款多久到账")[0][0] == "zh-refund"


def test_english_query_finds_the_error_code_chunk(small_corpus):
    r = BM25Retriever(small_corpus)
    assert one(r, "what does ORDER-2024 mean")[0][0] == "errors-1"
