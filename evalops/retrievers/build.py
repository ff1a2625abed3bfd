"""Turn a registry entry into a working retriever.

``build_retriever(entry, corpus=..., registry=...)``. The built-ins (and a python factory with
``with_corpus: true``) need the corpus; hybrid and rerank inputs written as ``{ref: name@version}`` need the
registry. A problem found while building (a missing credential, a bad value, an unknown reference) is a
``ConfigError`` prefixed with the entry's ``file:line`` and ``name@version``.

Each adapter is built by the function that :data:`ADAPTER_BUILDERS` maps its name to, and each built-in
kind by :data:`BUILTIN_BUILDERS`: a new adapter is one function and one row (beside its ``params`` in
:mod:`evalops.retrievers.schema`, which tests/retrievers/test_build.py holds to the same names).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from pathlib import Path
from types import MappingProxyType
from typing import Any

from evalops.errors import ConfigError
from evalops.retrievers.auth import AuthHeader
from evalops.retrievers.base import Retriever
from evalops.retrievers.bm25 import BM25Retriever
from evalops.retrievers.dense import DenseRetriever, load_sentence_transformer, resolve_model_dir
from evalops.retrievers.encoders import wordllama_encoder
from evalops.retrievers.frameworks import langchain_retriever, llamaindex_retriever
from evalops.retrievers.function import FunctionRetriever, load_entry_point
from evalops.retrievers.fusion import ReciprocalRankFusion
from evalops.retrievers.http import HttpRetriever
from evalops.retrievers.registry import Registry, RetrieverEntry
from evalops.retrievers.rerank import CallableReranker, LexicalOverlapReranker, RerankedRetriever, RetrieverReranker
from evalops.retrievers.runfile import RunFileRetriever
from evalops.retrievers.text import Tokenizer
from evalops.retrievers.tfidf import TfidfRetriever
from evalops.transport import RetryPolicy
from evalops.util.extras import require
from evalops.util.limits import DEFAULT_MEMORY_BUDGET

__all__ = ["ADAPTER_BUILDERS", "BUILTIN_BUILDERS", "build_retriever"]


def _path(value: str, base_dir: Path) -> Path:
    p = Path(value)
    return p if p.is_absolute() else base_dir / p


def _tokenizer(spec: Mapping[str, Any] | None):
    return Tokenizer(**dict(spec or {}))


class _Builder:
    def __init__(self, corpus: Any, registry: Registry | None, memory_budget: int, embedding_cache: Any = None):
        self.corpus = corpus
        self.registry = registry
        self.memory_budget = memory_budget
        self.embedding_cache = embedding_cache
        self.stack: list[str] = []

    def need_corpus(self, what: str) -> Any:
        if self.corpus is None:
            raise ConfigError(f"{what} needs the corpus (a knowledge-base snapshot or a BEIR corpus)")
        if callable(self.corpus):  # given as a function: read only by a retriever that needs it, and once
            self.corpus = self.corpus()
        return self.corpus

    def entry(self, e: RetrieverEntry) -> Retriever:
        if e.key in self.stack:
            raise ConfigError(f"reference cycle: {' -> '.join([*self.stack, e.key])}")
        self.stack.append(e.key)
        try:
            build = ADAPTER_BUILDERS.get(e.adapter)
            if build is None:
                raise ConfigError(f"unknown adapter {e.adapter!r}; use one of {', '.join(ADAPTER_BUILDERS)}")
            return build(self, e.params, e.base_dir)
        except ConfigError as exc:
            if str(exc).startswith(e.source):
                raise
            raise ConfigError(f"{e.source}: {e.key}: {exc}") from None
        finally:
            self.stack.pop()

    def component(self, spec: Mapping[str, Any], base_dir: Path) -> Retriever:
        if "ref" in spec:
            if self.registry is None:
                raise ConfigError(f"reference {spec['ref']!r} needs the registry")
            return self.entry(self.registry.resolve(spec["ref"]))
        return self._builtin(spec, base_dir)

    def _http(self, p: Mapping[str, Any], base_dir: Path) -> Retriever:
        retry_keys = {"max_retries", "backoff", "backoff_max"}
        retry = RetryPolicy(**{k: p[k] for k in retry_keys if k in p})
        auth = AuthHeader(**dict(p["auth"])) if "auth" in p else None
        other = {k: p[k] for k in ("timeout", "stall_timeout", "concurrency", "body", "max_response_bytes") if k in p}
        return HttpRetriever(p["url"], retry=retry, auth=auth, **other)

    def _entry_object(self, p: Mapping[str, Any]) -> Any:
        """The entry point's object, or what its factory returns (``factory: true``)."""
        obj = load_entry_point(p["entry_point"])
        if p.get("factory", False):
            kwargs = dict(p.get("options") or {})
            if p.get("with_corpus", False):
                kwargs["corpus"] = self.need_corpus(f"python factory {p['entry_point']}")
            obj = obj(**kwargs)
        elif "options" in p or "with_corpus" in p:
            raise ConfigError("`options` and `with_corpus` only apply with `factory: true`")
        return obj

    def _python(self, p: Mapping[str, Any], base_dir: Path) -> Retriever:
        obj = self._entry_object(p)
        if hasattr(obj, "retrieve"):
            return obj
        return FunctionRetriever(obj, batch=p.get("batch", True), name=p["entry_point"])

    def _langchain(self, p: Mapping[str, Any], base_dir: Path) -> Retriever:
        require("langchain_core", "langchain", "use a LangChain retriever")
        keys = {k: p[k] for k in ("id_key", "score_key") if k in p}
        return langchain_retriever(self._entry_object(p), name=p["entry_point"], **keys)

    def _llamaindex(self, p: Mapping[str, Any], base_dir: Path) -> Retriever:
        require("llama_index.core", "llamaindex", "use a LlamaIndex retriever")
        keys = {k: p[k] for k in ("id_key",) if k in p}
        return llamaindex_retriever(self._entry_object(p), name=p["entry_point"], **keys)

    def _run_file(self, p: Mapping[str, Any], base_dir: Path) -> Retriever:
        return RunFileRetriever(_path(p["path"], base_dir), missing=p.get("missing", "fail"),
                                memory_budget=self.memory_budget)

    def _builtin(self, p: Mapping[str, Any], base_dir: Path) -> Retriever:
        build = BUILTIN_BUILDERS.get(p["kind"])
        if build is None:
            raise ConfigError(f"unknown builtin kind {p['kind']!r}")
        return build(self, p, base_dir)

    def _bm25(self, p: Mapping[str, Any], base_dir: Path) -> Retriever:
        opts = {k: p[k] for k in ("k1", "b", "method", "index_fraction") if k in p}
        return BM25Retriever(self.need_corpus("bm25"), tokenizer=_tokenizer(p.get("tokenizer")), **opts)

    def _tfidf(self, p: Mapping[str, Any], base_dir: Path) -> Retriever:
        opts = {k: p[k] for k in ("index_fraction",) if k in p}
        return TfidfRetriever(self.need_corpus("tfidf"), tokenizer=_tokenizer(p.get("tokenizer")), **opts)

    def _hybrid(self, p: Mapping[str, Any], base_dir: Path) -> Retriever:
        inputs = [self.component(c, base_dir) for c in p["retrievers"]]
        return ReciprocalRankFusion(inputs, **{k: p[k] for k in ("rrf_k", "depth", "method", "weights") if k in p})

    def _rerank(self, p: Mapping[str, Any], base_dir: Path) -> Retriever:
        spec = p["reranker"]
        if "retriever" in spec:
            reranker: Any = RetrieverReranker(self.component(spec["retriever"], base_dir))
        elif "entry_point" in spec:
            reranker = CallableReranker(load_entry_point(spec["entry_point"]))
        elif spec["kind"] == "overlap":
            reranker = LexicalOverlapReranker(self.need_corpus("overlap reranker"))
        else:
            raise ConfigError(f"unknown reranker kind {spec['kind']!r}; use `overlap`, an `entry_point` or a "
                              "`retriever`")
        first = self.component(p["first"], base_dir)
        depth = {"depth": p["depth"]} if "depth" in p else {}
        return RerankedRetriever(first, reranker, self.need_corpus("rerank"), **depth)

    def _dense(self, p: Mapping[str, Any], base_dir: Path) -> Retriever:
        if p["model"] == "wordllama":
            encode: Any = wordllama_encoder(p.get("dim", 256))
        else:
            model_dir = resolve_model_dir(p["model"], p.get("package"), base_dir)
            encode = load_sentence_transformer(model_dir, device=p.get("device", "cpu"))
        return DenseRetriever(self.need_corpus("dense"), encode, cache=self.embedding_cache,
                              memory_budget=self.memory_budget,
                              **({"batch_size": p["batch_size"]} if "batch_size" in p else {}))


# (builder, the entry's params, the registry file's folder) -> the retriever
AdapterBuilder = Callable[[_Builder, Mapping[str, Any], Path], Retriever]

#: adapter name (a registry entry's ``adapter:``) -> the function that builds it
ADAPTER_BUILDERS: Mapping[str, AdapterBuilder] = MappingProxyType({
    "http": _Builder._http,
    "python": _Builder._python,
    "langchain": _Builder._langchain,
    "llamaindex": _Builder._llamaindex,
    "run_file": _Builder._run_file,
    "builtin": _Builder._builtin,
})
#: built-in kind (``params.kind`` of the ``builtin`` adapter) -> the function that builds it
BUILTIN_BUILDERS: Mapping[str, AdapterBuilder] = MappingProxyType({
    "bm25": _Builder._bm25,
    "tfidf": _Builder._tfidf,
    "hybrid": _Builder._hybrid,
    "rerank": _Builder._rerank,
    "dense": _Builder._dense,
})


def build_retriever(entry: RetrieverEntry, *, corpus: Any = None, registry: Registry | None = None,
                    memory_budget: int = DEFAULT_MEMORY_BUDGET, embedding_cache: Any = None) -> Retriever:
    """A retriever for ``entry`` (see the module docstring). ``memory_budget``: bytes a run file may take
    while it is read (the ``memory_budget`` setting; a larger one is streamed by query blocks), and the bound
    of a dense search's score block. ``embedding_cache``: an :class:`~evalops.retrievers.embedcache.EmbeddingCache`
    for the corpus's snapshot; dense document vectors are read from it and written to it. ``corpus`` may be
    a function returning it, called only when a retriever needs the corpus (a run file does not)."""
    return _Builder(corpus, registry, memory_budget, embedding_cache).entry(entry)
