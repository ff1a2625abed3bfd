"""LangChain and LlamaIndex retrievers as registry entries (``adapter: langchain`` / ``llamaindex``), built from
the corpus by the user's factory over each framework's in-memory vector store with a deterministic hashed
bag-of-words embedding (no model, no network). Each test skips when its extra is not installed."""

from __future__ import annotations

import textwrap

import pytest

from evalops.errors import ConfigError
from evalops.retrievers import Query, build_retriever
from evalops.retrievers.frameworks import langchain_retriever, llamaindex_retriever
from tests.retrievers.test_build import entry, registry

Q = [Query("q1", "refund for unopened product"), Query("q2", "hotel rooms per night")]

_EMBED = """
import hashlib, math, re

def embed(text, dim=64):
    v = [0.0] * dim
    for word in re.findall(r"[a-z0-9]+", text.lower()):
        v[int(hashlib.sha1(word.encode()).hexdigest(), 16) % dim] += 1.0
    norm = math.sqrt(sum(x * x for x in v)) or 1.0
    return [x / norm for x in v]
"""

_LANGCHAIN = _EMBED + """
from langchain_core.documents import Document
from langchain_core.embeddings import Embeddings
from langchain_core.vectorstores import InMemoryVectorStore

class Words(Embeddings):
    def embed_documents(self, texts):
        return [embed(t) for t in texts]
    def embed_query(self, text):
        return embed(text)

def make(corpus, k=3, key="doc_id"):
    store = InMemoryVectorStore(Words())
    store.add_documents([Document(page_content=f"{r.title} {r.text}", metadata={key: r.doc_id, "chunk": 0})
                         for r in corpus.itertuples()])
    return store.as_retriever(search_kwargs={"k": k})

class Scored:
    # a retriever that puts its score in the metadata
    def invoke(self, text):
        return [Document(page_content="a", metadata={"doc_id": "refund-1", "s": 0.9}),
                Document(page_content="b", metadata={"doc_id": "refund-2", "s": 0.4})]

not_a_retriever = 42
"""

_LLAMAINDEX = _EMBED + """
from llama_index.core import VectorStoreIndex
from llama_index.core.embeddings import BaseEmbedding
from llama_index.core.schema import TextNode

class Words(BaseEmbedding):
    def _get_text_embedding(self, text):
        return embed(text)
    def _get_query_embedding(self, query):
        return embed(query)
    async def _aget_query_embedding(self, query):
        return embed(query)

def make(corpus, k=3, chunks=1):
    nodes = [TextNode(text=f"{r.title} {r.text}", metadata={"doc_id": r.doc_id})
             for r in corpus.itertuples() for _ in range(chunks)]
    return VectorStoreIndex(nodes, embed_model=Words()).as_retriever(similarity_top_k=k)
"""


@pytest.fixture
def user_module(tmp_path, monkeypatch):
    def write(name: str, source: str) -> None:
        (tmp_path / f"{name}.py").write_text(textwrap.dedent(source))

    monkeypatch.syspath_prepend(str(tmp_path))
    return write


def test_langchain_in_memory_vector_store(tmp_path, user_module, small_corpus):
    pytest.importorskip("langchain_core")
    user_module("team_lc", _LANGCHAIN)
    reg = registry(
        tmp_path,
        entry("lc", "1", "langchain", "{entry_point: 'team_lc:make', factory: true, with_corpus: true, "
                                      "id_key: doc_id, options: {k: 3}}")
        + entry("scored", "1", "langchain", "{entry_point: 'team_lc:Scored', factory: true, score_key: s, id_key: doc_id}")
        + entry("wrongkey", "1", "langchain", "{entry_point: 'team_lc:make', factory: true, with_corpus: true, "
                                            "options: {key: source}}")
        + entry("bad", "1", "langchain", "{entry_point: 'team_lc:not_a_retriever'}"),
    )
    refund, hotel = build_retriever(reg.resolve("lc"), corpus=small_corpus).retrieve(Q, 2)
    assert refund.ok and refund.ranked[0] == ("refund-1", None) and len(refund.ranked) == 2  # cut to k
    assert hotel.ranked[0] == ("travel-2", None)
    (scored,) = build_retriever(reg.resolve("scored")).retrieve(Q[:1], 5)
    assert scored.ranked == (("refund-1", 0.9), ("refund-2", 0.4))
    (missing,) = build_retriever(reg.resolve("wrongkey"), corpus=small_corpus).retrieve(Q[:1], 5)
    assert not missing.ok and "rank 1: the document has no metadata key 'id'" in missing.error
    with pytest.raises(ConfigError, match="retrievers.yaml:.*bad@1: .*int with no invoke\\(query\\) method"):
        build_retriever(reg.resolve("bad"))


def test_llamaindex_vector_store_index(tmp_path, user_module, small_corpus):
    pytest.importorskip("llama_index.core")
    user_module("team_li", _LLAMAINDEX)
    reg = registry(
        tmp_path,
        entry("li", "1", "llamaindex", "{entry_point: 'team_li:make', factory: true, with_corpus: true, "
                                       "id_key: doc_id}")
        + entry("chunks", "1", "llamaindex", "{entry_point: 'team_li:make', factory: true, with_corpus: true, "
                                             "id_key: doc_id, options: {chunks: 2}}"),
    )
    refund, hotel = build_retriever(reg.resolve("li"), corpus=small_corpus).retrieve(Q, 3)
    assert refund.ok and refund.ranked[0][0] == "refund-1" and hotel.ranked[0][0] == "travel-2"
    scores = [s for _, s in refund.ranked]
    assert all(isinstance(s, float) for s in scores) and scores == sorted(scores, reverse=True)
    (twice,) = build_retriever(reg.resolve("chunks"), corpus=small_corpus).retrieve(Q[:1], 3)
    assert not twice.ok and "listed twice" in twice.error  # two chunks of one document are not two documents


def test_duck_typed_objects_without_the_frameworks():
    """The adapters read the objects by their attributes only (neither package is imported by evalops)."""

    class Node:
        def __init__(self, doc_id):
            self.metadata = {"id": doc_id}

    class Hit:
        def __init__(self, doc_id, score):
            self.node, self.score = Node(doc_id), score

    class LlamaLike:
        def retrieve(self, text):
            return [Hit("a", 2.0), Hit(7, 1.0)]

    class LangLike:
        def invoke(self, text):
            return [Node("a"), Node(True)]

    (res,) = llamaindex_retriever(LlamaLike(), name="x").retrieve(Q[:1], 5)
    assert res.ranked == (("a", 2.0), ("7", 1.0))
    (res,) = langchain_retriever(LangLike(), name="y").retrieve(Q[:1], 5)
    assert not res.ok and "rank 2: metadata 'id' must be a string or an integer, got bool" in res.error


def test_a_missing_framework_names_its_extra(tmp_path, monkeypatch):
    from evalops.util.extras import MissingExtraError

    monkeypatch.setitem(__import__("sys").modules, "langchain_core", None)  # as if not installed
    reg = registry(tmp_path, entry("lc", "1", "langchain", "{entry_point: 'os:getcwd'}"))
    with pytest.raises(MissingExtraError, match=r"install `evalops-rag\[langchain\]` to use a LangChain retriever"):
        build_retriever(reg.resolve("lc"))
