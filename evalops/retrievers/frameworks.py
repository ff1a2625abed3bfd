"""Retrievers built with LangChain or LlamaIndex, as registry entries (``adapter: langchain`` / ``llamaindex``).

The entry point (``package.module:attribute``, or a factory with ``factory: true`` and ``options``) is the
user's retriever object, asked one query at a time:

* LangChain: ``retriever.invoke(query_text)`` returns ``Document`` objects (any ``BaseRetriever``, e.g.
  ``vector_store.as_retriever()``). They carry no score unless ``score_key`` names a metadata key holding one.
* LlamaIndex: ``retriever.retrieve(query_text)`` returns ``NodeWithScore`` objects (any ``BaseRetriever``,
  e.g. ``index.as_retriever()``); their ``score`` is kept.

A document's id is ``metadata[id_key]`` (``id_key`` is ``"id"`` unless the entry says otherwise) as a string,
the id the gold set judges. A document without it fails its query with a message naming the rank and the
key; so does the same document twice (a chunked index returning two chunks of one document), as for every
retriever (:mod:`evalops.retrievers.base`). The framework's own ``k`` (``search_kwargs``,
``similarity_top_k``) must be at least the run's: answers are cut to ``k``, never padded. Neither package is
imported here: the user's module imports it, and the objects are read by duck typing.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from evalops.errors import ConfigError
from evalops.retrievers.function import FunctionRetriever

__all__ = ["langchain_retriever", "llamaindex_retriever"]

DEFAULT_ID_KEY = "id"


def _doc_id(metadata: Any, id_key: str, pos: int) -> str:
    if not isinstance(metadata, Mapping) or metadata.get(id_key) is None:
        raise ValueError(f"rank {pos}: the document has no metadata key {id_key!r} (set `id_key` to the key "
                         "that holds the id the gold set judges)")
    value = metadata[id_key]
    if isinstance(value, bool) or not isinstance(value, (str, int)):
        raise ValueError(f"rank {pos}: metadata {id_key!r} must be a string or an integer, got {type(value).__name__}")
    return str(value)


def _method(obj: Any, method: str, framework: str, name: str) -> Callable[[str], Any]:
    bound = getattr(obj, method, None)
    if not callable(bound):
        raise ConfigError(f"{framework}: {name} is a {type(obj).__name__} with no {method}(query) method; the entry "
                          f"point must name a {framework} retriever (or, with `factory: true`, a function making one)")
    return bound


def langchain_retriever(obj: Any, *, name: str, id_key: str = DEFAULT_ID_KEY,
                        score_key: str | None = None) -> FunctionRetriever:
    """``obj`` (a LangChain retriever) as an evalops retriever (see the module docstring)."""
    invoke = _method(obj, "invoke", "langchain", name)

    def search(text: str, k: int) -> list[tuple[str, float | None]]:
        ranked = []
        for pos, doc in enumerate(invoke(text)[:k], start=1):
            metadata = getattr(doc, "metadata", None)
            score = None
            if score_key is not None:
                if not isinstance(metadata, Mapping) or score_key not in metadata:
                    raise ValueError(f"rank {pos}: the document has no metadata key {score_key!r} (`score_key`)")
                score = metadata[score_key]
            ranked.append((_doc_id(metadata, id_key, pos), score))
        return ranked

    return FunctionRetriever(search, batch=False, name=f"langchain:{name}")


def llamaindex_retriever(obj: Any, *, name: str, id_key: str = DEFAULT_ID_KEY) -> FunctionRetriever:
    """``obj`` (a LlamaIndex retriever) as an evalops retriever (see the module docstring)."""
    retrieve = _method(obj, "retrieve", "llamaindex", name)

    def search(text: str, k: int) -> list[tuple[str, float | None]]:
        ranked = []
        for pos, hit in enumerate(retrieve(text)[:k], start=1):
            node = getattr(hit, "node", hit)
            ranked.append((_doc_id(getattr(node, "metadata", None), id_key, pos), getattr(hit, "score", None)))
        return ranked

    return FunctionRetriever(search, batch=False, name=f"llamaindex:{name}")
