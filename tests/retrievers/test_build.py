"""build_retriever: every adapter and built-in from registry entries, and the errors it reports."""

from __future__ import annotations

import importlib.util
import textwrap

import pytest

from evalops.errors import ConfigError
from evalops.retrievers import (
    BM25Retriever,
    HttpRetriever,
    Query,
    ReciprocalRankFusion,
    RerankedRetriever,
    RunFileRetriever,
    build_retriever,
    builtin_entry,
    load_registry,
    retrieve_run,
)

Q = [Query("q1", "refund for unopened product"), Query("q2", "差旅住宿标准")]


def registry(tmp_path, body: str):
    p = tmp_path / "retrievers.yaml"
    p.write_text("retrievers:\n" + textwrap.dedent(body))
    return load_registry(p)


def entry(name, version, adapter, params):
    return f"  - name: {name}\n    version: '{version}'\n    adapter: {adapter}\n    deployed: true\n    owner: t\n    params: {params}\n"


def test_builtins_and_references(tmp_path, small_corpus):
    reg = registry(
        tmp_path,
        entry("lex", "1", "builtin", "{kind: bm25, tokenizer: {chinese: bigram}}")
        + entry("hyb", "1", "builtin", "{kind: hybrid, rrf_k: 30, retrievers: [{ref: lex@1}, {kind: tfidf}]}")
        + entry("rr", "1", "builtin", "{kind: rerank, depth: 5, first: {ref: hyb@1}, reranker: {kind: overlap}}"),
    )
    hyb = build_retriever(reg.resolve("hyb@1"), corpus=small_corpus, registry=reg)
    assert isinstance(hyb, ReciprocalRankFusion) and hyb.rrf_k == 30
    assert isinstance(hyb.retrievers[0], BM25Retriever) and hyb.retrievers[0].tokenizer.chinese == "bigram"
    rr = build_retriever(reg.resolve("rr"), corpus=small_corpus, registry=reg)
    assert isinstance(rr, RerankedRetriever) and rr.depth == 5
    result = retrieve_run(rr, Q, k=3)
    assert result.run.to_dict()["q1"].keys() >= {"refund-1"}


def test_named_builtins_need_no_registry(small_corpus):
    r = build_retriever(builtin_entry("hybrid"), corpus=small_corpus)
    assert isinstance(r, ReciprocalRankFusion) and len(r.retrievers) == 2
    with pytest.raises(ConfigError, match="not a named built-in"):
        builtin_entry("splade")


def test_builtin_without_a_corpus_is_a_config_error_naming_the_entry(tmp_path):
    reg = registry(tmp_path, entry("lex", "1", "builtin", "{kind: bm25}"))
    with pytest.raises(ConfigError, match=r"retrievers.yaml:2: lex@1: bm25 needs the corpus"):
        build_retriever(reg.resolve("lex"))


def test_a_bad_value_found_while_building_names_the_entry(tmp_path, small_corpus):
    # (an out-of-range number is refused on loading already: tests/retrievers/test_param_ranges.py)
    reg = registry(tmp_path, entry("hyb", "1", "builtin", "{kind: hybrid, weights: [0, 0], retrievers: [{kind: bm25}, {kind: tfidf}]}"))
    with pytest.raises(ConfigError, match=r"retrievers.yaml:2: hyb@1: hybrid: weights must be 2 finite numbers >= 0, not all 0"):
        build_retriever(reg.resolve("hyb"), corpus=small_corpus)


def test_reference_cycles_and_unknown_references(tmp_path, small_corpus):
    reg = registry(
        tmp_path,
        entry("a", "1", "builtin", "{kind: hybrid, retrievers: [{ref: b@1}, {kind: bm25}]}")
        + entry("b", "1", "builtin", "{kind: hybrid, retrievers: [{ref: a@1}, {kind: bm25}]}")
        + entry("c", "1", "builtin", "{kind: hybrid, retrievers: [{ref: zz}, {kind: bm25}]}"),
    )
    with pytest.raises(ConfigError, match="reference cycle: a@1 -> b@1 -> a@1"):
        build_retriever(reg.resolve("a"), corpus=small_corpus, registry=reg)
    with pytest.raises(ConfigError, match="no retriever named 'zz'"):
        build_retriever(reg.resolve("c"), corpus=small_corpus, registry=reg)


def test_http_entry_with_auth(tmp_path, monkeypatch):
    reg = registry(
        tmp_path,
        entry("svc", "1", "http", "{url: 'http://127.0.0.1:9/s', timeout: 2, concurrency: 3, max_retries: 1, auth: {env: SVC_TOKEN}}"),
    )
    monkeypatch.delenv("SVC_TOKEN", raising=False)
    with pytest.raises(ConfigError, match=r"retrievers.yaml:2: svc@1: auth: environment variable SVC_TOKEN is not set"):
        build_retriever(reg.resolve("svc"))
    monkeypatch.setenv("SVC_TOKEN", "x")
    with build_retriever(reg.resolve("svc")) as r:
        assert isinstance(r, HttpRetriever) and (r.timeout, r.concurrency, r.retry.max_retries) == (2.0, 3, 1)


def test_python_entries(tmp_path, monkeypatch, small_corpus):
    (tmp_path / "team_search.py").write_text(
        textwrap.dedent(
            """
            def search(text, k):
                return [text[:3]]

            class Engine:
                def __init__(self, boost, corpus):
                    self.boost, self.n = boost, len(corpus)
                def retrieve(self, queries, k):
                    return [[(str(self.n), self.boost)] for q in queries]
            """
        )
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    reg = registry(
        tmp_path,
        entry("fn", "1", "python", "{entry_point: 'team_search:search', batch: false}")
        + entry("obj", "1", "python", "{entry_point: 'team_search:Engine', factory: true, with_corpus: true, options: {boost: 2.5}}")
        + entry("bad", "1", "python", "{entry_point: 'team_search:search', options: {a: 1}}"),
    )
    (res,) = build_retriever(reg.resolve("fn")).retrieve(Q[:1], 5)
    assert res.ranked == (("ref", None),)
    assert build_retriever(reg.resolve("obj"), corpus=small_corpus).retrieve(Q[:1], 5) == [[("8", 2.5)]]
    with pytest.raises(ConfigError, match="only apply with `factory: true`"):
        build_retriever(reg.resolve("bad"))


def test_run_file_paths_are_relative_to_the_registry_file(tmp_path):
    (tmp_path / "runs").mkdir()
    (tmp_path / "runs" / "v1.trec").write_text("q1 Q0 d1 1 2.0 t\n")
    reg = registry(tmp_path, entry("exported", "1", "run_file", "{path: runs/v1.trec, missing: empty}"))
    r = build_retriever(reg.resolve("exported"))
    assert isinstance(r, RunFileRetriever) and r.path == tmp_path / "runs" / "v1.trec"


def test_dense_never_downloads_a_missing_model(tmp_path, small_corpus):
    reg = registry(tmp_path, entry("dense", "1", "builtin", "{kind: dense, model: models/minilm}"))
    with pytest.raises(ConfigError, match="models/minilm does not exist; models are never downloaded"):
        build_retriever(reg.resolve("dense"), corpus=small_corpus)
    reg = registry(tmp_path, entry("dense", "1", "builtin", "{kind: dense, model: m, package: no_such_model_pkg}"))
    with pytest.raises(ConfigError, match="package 'no_such_model_pkg' holding the model is not installed"):
        build_retriever(reg.resolve("dense"), corpus=small_corpus)


@pytest.mark.skipif(importlib.util.find_spec("sentence_transformers") is not None, reason="sentence-transformers is installed")
def test_dense_without_the_extra_says_how_to_install_it(tmp_path, small_corpus):
    (tmp_path / "models" / "minilm").mkdir(parents=True)
    reg = registry(tmp_path, entry("dense", "1", "builtin", "{kind: dense, model: models/minilm}"))
    from evalops.util.extras import MissingExtraError

    with pytest.raises(MissingExtraError, match=r"install `evalops-rag\[dense\]` to use the dense retriever"):
        build_retriever(reg.resolve("dense"), corpus=small_corpus)


@pytest.mark.skipif(importlib.util.find_spec("sentence_transformers") is None, reason="needs the dense extra (sentence-transformers, torch)")
def test_dense_sentence_transformer_from_a_local_folder(tmp_path, small_corpus):
    """Builds a tiny random-weight BERT locally (nothing downloaded) and retrieves with it."""
    from sentence_transformers import SentenceTransformer, models
    from transformers import BertConfig, BertModel, BertTokenizerFast

    vocab = tmp_path / "vocab.txt"
    words = sorted({w for t in small_corpus.text for w in t.lower().split()})
    vocab.write_text("\n".join(["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", *words]))
    model_dir = tmp_path / "models" / "tiny"
    bert_dir = tmp_path / "bert"
    BertModel(BertConfig(vocab_size=len(words) + 5, hidden_size=32, num_hidden_layers=1, num_attention_heads=2, intermediate_size=64)).save_pretrained(bert_dir)
    BertTokenizerFast(vocab_file=str(vocab)).save_pretrained(bert_dir)
    word = models.Transformer(str(bert_dir))
    SentenceTransformer(modules=[word, models.Pooling(word.get_word_embedding_dimension())]).save(str(model_dir))
    reg = registry(tmp_path, entry("dense", "1", "builtin", "{kind: dense, model: models/tiny}"))
    result = retrieve_run(build_retriever(reg.resolve("dense"), corpus=small_corpus), Q, k=3)
    assert not result.partial and len(result.run) == 6


@pytest.mark.parametrize("shuffle", [False, True], ids=["grouped", "shuffled"])
def test_a_run_file_larger_than_the_memory_budget_is_streamed_with_the_same_rankings(tmp_path, shared_data, shuffle):
    import random

    lines = (shared_data / "scifact" / "runs" / "bm25.trec").read_text().splitlines(keepends=True)
    if shuffle:
        random.Random(3).shuffle(lines)
    (tmp_path / "run.trec").write_text("".join(lines))
    reg = registry(tmp_path, entry("exported", "1", "run_file", "{path: run.trec}"))
    in_memory = build_retriever(reg.resolve("exported"))
    streamed = build_retriever(reg.resolve("exported"), memory_budget=200_000)
    assert not in_memory.streamed and streamed.streamed and streamed.memory_budget == 200_000
    assert streamed.name == in_memory.name
    queries = [Query(q, "") for q in sorted({line.split()[0] for line in lines})] + [Query("absent", "")]
    assert streamed.retrieve(queries, 100) == in_memory.retrieve(queries, 100)


def test_a_corpus_given_as_a_function_is_read_only_by_a_retriever_that_needs_it_and_once(tmp_path, small_corpus):
    """The pipeline passes the snapshot's ``corpus`` method: a run file never reads the knowledge base's texts."""
    (tmp_path / "run.trec").write_text("q1 Q0 d1 1 2.0 x\n")
    reg = registry(tmp_path, entry("exported", "1", "run_file", "{path: run.trec}")
                   + entry("rr", "1", "builtin", "{kind: rerank, depth: 5, first: {kind: bm25}, reranker: {kind: overlap}}"))
    calls = []

    def corpus():
        calls.append(1)
        return small_corpus

    assert isinstance(build_retriever(reg.resolve("exported"), corpus=corpus, registry=reg), RunFileRetriever)
    assert calls == []
    lazy = build_retriever(reg.resolve("rr"), corpus=corpus, registry=reg)
    assert calls == [1]  # the first stage, the reranker and the rerank step share one reading
    eager = build_retriever(reg.resolve("rr"), corpus=small_corpus, registry=reg)
    assert retrieve_run(lazy, Q, k=3).run.to_dict() == retrieve_run(eager, Q, k=3).run.to_dict()


def test_every_adapter_and_builtin_kind_the_schema_accepts_has_one_builder():
    from evalops.retrievers.build import ADAPTER_BUILDERS, BUILTIN_BUILDERS
    from evalops.retrievers.schema import ADAPTERS, BUILTIN_KINDS

    assert tuple(ADAPTER_BUILDERS) == ADAPTERS
    assert tuple(BUILTIN_BUILDERS) == BUILTIN_KINDS
    assert all(callable(b) for b in [*ADAPTER_BUILDERS.values(), *BUILTIN_BUILDERS.values()])


def test_an_entry_built_in_code_with_an_unknown_adapter_or_kind_gets_the_registry_file_error():
    from evalops.retrievers.schema import RetrieverEntry

    grpc = RetrieverEntry("kb", "1", "grpc", {}, True, "o", source="code.py:3")
    with pytest.raises(ConfigError, match=r"^code.py:3: kb@1: unknown adapter 'grpc'; use one of http, python, "):
        build_retriever(grpc)
    splade = RetrieverEntry("kb", "1", "builtin", {"kind": "splade"}, True, "o", source="code.py:4")
    with pytest.raises(ConfigError, match=r"^code.py:4: kb@1: unknown builtin kind 'splade'"):
        build_retriever(splade)
