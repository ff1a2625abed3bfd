"""The built-in dense encoder (wordllama's shipped static embeddings), its cache, and the search over it.

The encoder's vectors are checked against wordllama's own inference code (``WordLlamaInference.embed`` with
``norm=True``) over the same files; it runs in CI (the lock holds the ``wordllama`` extra) with network access
blocked.
"""

from __future__ import annotations

import socket
import sys

import numpy as np
import pytest

from evalops.errors import ConfigError
from evalops.retrievers import DenseRetriever, Query, build_retriever, retrieve_run
from evalops.retrievers.embedcache import EmbeddingCache
from evalops.retrievers.encoders import WordLlamaEncoder, wordllama_encoder, wordllama_files
from evalops.retrievers.registry import RetrieverEntry
from evalops.util.extras import MissingExtraError

TEXTS = [
    "Customers get a full refund within 30 days when the product is unopened.",
    "员工出差需要提前在差旅系统中申请，住宿标准为每晚不超过五百元。",
    "ORDER-2024 means the payment was declined.",
    "a",
]


def _library_vectors(texts, dim):
    from safetensors import safe_open
    from tokenizers import Tokenizer
    from wordllama.inference import WordLlamaInference

    weights, tokenizer = wordllama_files()
    with safe_open(str(weights), framework="np") as f:
        table = f.get_tensor("embedding.weight")[:, :dim]
    return WordLlamaInference(table, Tokenizer.from_file(str(tokenizer))).embed(texts, norm=True)


@pytest.mark.parametrize("dim", [64, 128, 256])
def test_vectors_are_wordllamas_own(dim):
    got = WordLlamaEncoder(dim).encode(TEXTS)
    assert got.shape == (len(TEXTS), dim) and got.dtype == np.float32
    np.testing.assert_allclose(got, _library_vectors(TEXTS, dim), rtol=0, atol=1e-6)


def test_empty_text_is_the_zero_vector_not_nan():
    got = WordLlamaEncoder(64).encode(["", "refund"])
    assert not got[0].any() and np.linalg.norm(got[1]) == pytest.approx(1.0, abs=1e-6)


def test_identity_names_the_weights_and_the_dimension():
    a, b = WordLlamaEncoder(64), WordLlamaEncoder(128)
    assert a.identity != b.identity and a.identity.startswith("wordllama/l2_supercat_256@") and "dim=64" in a.identity
    with pytest.raises(ConfigError, match="must be one of 64, 128, 256"):
        WordLlamaEncoder(100)


def test_the_encoder_runs_with_network_access_blocked(monkeypatch, small_corpus):
    def refuse(*args, **kwargs):
        raise OSError("network access attempted")

    monkeypatch.setattr(socket.socket, "connect", refuse)
    monkeypatch.setattr(socket.socket, "connect_ex", refuse)
    monkeypatch.setattr(socket, "create_connection", refuse)
    wordllama_encoder.cache_clear()  # load the files under the block, not from an earlier test
    entry = RetrieverEntry("vec", "1", "builtin", {"kind": "dense", "model": "wordllama"}, True, "t")
    retriever = build_retriever(entry, corpus=small_corpus)
    result = retrieve_run(retriever, [Query("en", "refund for an unopened product"), Query("zh", "差旅住宿标准")], k=3)
    assert not result.partial
    top = result.top_documents(1)
    assert top == {"en": ["refund-1"], "zh": ["zh-travel"]}


def test_a_querys_scores_do_not_depend_on_its_batch(small_corpus):
    enc = wordllama_encoder(64)
    queries = [Query(str(i), t) for i, t in enumerate(["refund", "hotel night", "error code", "退款", "support hours"])]
    whole = DenseRetriever(small_corpus, enc, batch_size=64).retrieve(queries, 5)
    alone = [DenseRetriever(small_corpus, enc, batch_size=1).retrieve([q], 5)[0] for q in queries]
    assert alone == whole  # exact: a sharded run scores every query as an unsharded one does


def test_document_vectors_beyond_the_memory_budget_are_refused(small_corpus):
    with pytest.raises(ConfigError, match=r"more than the memory budget of 1,000; raise the memory_budget"):
        DenseRetriever(small_corpus, wordllama_encoder(64), memory_budget=1000)


def test_score_documents_is_the_search_score(small_corpus):
    r = DenseRetriever(small_corpus, wordllama_encoder(64))
    (res,) = r.retrieve([Query("q", "hotel reimbursement")], 8)
    ids = [d for d, _ in res.ranked]
    np.testing.assert_allclose(r.score_documents("hotel reimbursement", ids), [s for _, s in res.ranked], atol=1e-6)
    with pytest.raises(ConfigError, match="not in the indexed corpus"):
        r.score_documents("x", ["nope"])


class CountingEncoder:
    identity = "counting/v1"

    def __init__(self):
        self.seen: list[str] = []

    def __call__(self, texts):
        self.seen += list(texts)
        return np.array([[len(t), t.count("a") + 1.0] for t in texts], dtype=np.float32)


def test_cache_reuses_vectors_by_snapshot_and_text(tmp_path):
    enc = CountingEncoder()
    docs = {"a": "alpha", "b": "beta", "c": "gamma"}
    first = DenseRetriever(docs, enc, cache=EmbeddingCache(tmp_path, "snap-1"))
    assert first.embedding_counts == {"embedded": 3, "cached": 0} and len(enc.seen) == 3
    again = DenseRetriever(docs, enc, cache=EmbeddingCache(tmp_path, "snap-1"))
    assert again.embedding_counts == {"embedded": 0, "cached": 3} and len(enc.seen) == 3
    np.testing.assert_array_equal(again._doc_vectors, first._doc_vectors)
    changed = DenseRetriever({**docs, "b": "beta two"}, enc, cache=EmbeddingCache(tmp_path, "snap-2"))
    assert changed.embedding_counts == {"embedded": 1, "cached": 2} and enc.seen[-1] == "beta two"

    class Other(CountingEncoder):
        identity = "counting/v2"

    other = Other()
    DenseRetriever(docs, other, cache=EmbeddingCache(tmp_path, "snap-1"))
    assert other.seen == ["alpha", "beta", "gamma"]  # another encoder never shares vectors


def test_a_torn_cache_file_is_embedded_again(tmp_path):
    enc = CountingEncoder()
    DenseRetriever({"a": "alpha"}, enc, cache=EmbeddingCache(tmp_path, "s"))
    (npz,) = tmp_path.glob("*/s.npz")
    npz.write_bytes(npz.read_bytes()[:20])
    r = DenseRetriever({"a": "alpha"}, enc, cache=EmbeddingCache(tmp_path, "s"))
    assert r.embedding_counts == {"embedded": 1, "cached": 0}


def test_an_encoder_without_identity_is_not_cached(tmp_path):
    r = DenseRetriever({"a": "alpha"}, lambda texts: np.ones((len(texts), 2)), cache=EmbeddingCache(tmp_path, "s"))
    assert r.embedding_counts == {"embedded": 1, "cached": 0} and not list(tmp_path.iterdir())


@pytest.mark.parametrize("missing", ["wordllama", "tokenizers", "safetensors"])
def test_without_the_wordllama_extra_the_encoder_names_it(monkeypatch, missing):
    monkeypatch.delitem(sys.modules, f"{missing}.numpy", raising=False)  # imported by an earlier test
    monkeypatch.setitem(sys.modules, missing, None)  # as if not installed
    with pytest.raises(MissingExtraError) as caught:
        WordLlamaEncoder(64)
    assert caught.value.extra == "wordllama" and caught.value.missing == missing
    assert "pip install 'evalops-rag[wordllama]'" in str(caught.value)
