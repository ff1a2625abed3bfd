"""What a registry entry needs before it can be built, checked without building it.

A run used to find out while scoring that a built-in BM25 lacked the ``retrievers`` extra, or that a run
file was not there: after the warehouse, the snapshot and an alert had been written. :func:`check_entries`
walks each entry as :mod:`evalops.retrievers.build` would (hybrid and rerank components, ``{ref: ...}``
references) and checks, without importing anything heavy:

* the libraries of the extras it uses (``importlib.util.find_spec``): BM25 (``bm25s``), the tokenizer's
  stemmer (``Stemmer``, unless ``stem: false``) and Chinese segmenter (``jieba``, unless ``chinese`` is not
  ``jieba``), the built-in dense encoder (``wordllama``, ``tokenizers``, ``safetensors``: the ``wordllama`` extra), a
  sentence-transformers model (``dense``);
* the run files it reads: present and readable as runs (:meth:`RetrieverEntry.check_files`).

The first problem raises: a :class:`~evalops.util.extras.MissingExtraError` naming the extra and its install line,
or a :class:`~evalops.errors.ConfigError` naming the registry file and line, the entry and the path.
"""

from __future__ import annotations

import importlib.util
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from evalops.errors import ConfigError
from evalops.util.extras import MissingExtraError
from evalops.util.limits import DEFAULT_MEMORY_BUDGET

__all__ = ["check_entries"]


def _installed(module: str, extra: str, purpose: str) -> None:
    try:
        found = importlib.util.find_spec(module) is not None
    except (ImportError, ValueError):  # a broken parent package, or a module without a spec
        found = False
    if not found:
        raise MissingExtraError(extra, purpose, module)


def _tokenizer(spec: Mapping[str, Any] | None) -> None:
    spec = dict(spec or {})
    if spec.get("stem", True):
        _installed("Stemmer", "retrievers", "stem English words (or set tokenizer: {stem: false})")
    if spec.get("chinese", "jieba") == "jieba":
        _installed("jieba", "retrievers", "segment Chinese text with jieba (or set tokenizer: {chinese: bigram})")


class _Walk:
    def __init__(self, registry: Any, memory_budget: int):
        self.registry = registry
        self.memory_budget = memory_budget
        self.seen: set[str] = set()

    def entry(self, entry: Any) -> None:
        if entry.key in self.seen:  # a cycle is the builder's error to name
            return
        self.seen.add(entry.key)
        if entry.adapter == "run_file":  # its message names the registry's file and line, the key and the fix
            entry.check_files(self.memory_budget)
            return
        try:
            if entry.adapter == "builtin":
                self.builtin(entry.params, entry.base_dir)
        except MissingExtraError as exc:
            raise MissingExtraError(exc.extra, f"{exc.purpose} ({entry.source}: {entry.key})", exc.missing) from None
        except ConfigError as exc:
            raise ConfigError(f"{entry.source}: {entry.key}: {exc}") from None

    def component(self, spec: Mapping[str, Any], base_dir: Path) -> None:
        if "ref" in spec:
            if self.registry is not None:
                self.entry(self.registry.resolve(spec["ref"]))
            return
        self.builtin(spec, base_dir)

    def builtin(self, p: Mapping[str, Any], base_dir: Path) -> None:
        kind = p.get("kind")
        if kind == "bm25":
            _installed("bm25s", "retrievers", "use the built-in BM25 retriever")
            _tokenizer(p.get("tokenizer"))
        elif kind == "tfidf":
            _tokenizer(p.get("tokenizer"))
        elif kind == "hybrid":
            for component in p.get("retrievers") or ():
                self.component(component, base_dir)
        elif kind == "rerank":
            reranker = p.get("reranker") or {}
            if "retriever" in reranker:
                self.component(reranker["retriever"], base_dir)
            elif reranker.get("kind") == "overlap":
                _tokenizer(None)
            if "first" in p:
                self.component(p["first"], base_dir)
        elif kind == "dense" and p.get("model") == "wordllama":
            for module in ("wordllama", "tokenizers", "safetensors"):
                _installed(module, "wordllama", "use the built-in dense encoder (model: wordllama)")
        elif kind == "dense":
            _installed("sentence_transformers", "dense", "use the dense retriever")


def check_entries(entries: Iterable[Any], registry: Any = None, *,
                  memory_budget: int = DEFAULT_MEMORY_BUDGET) -> None:
    """Check that every entry of ``entries`` (:class:`~evalops.retrievers.registry.RetrieverEntry`) can be
    built here: its extras installed and its run files readable (module docstring). ``registry`` resolves
    the ``{ref: name@version}`` components; a run file is read within ``memory_budget`` (and the table kept
    for the scoring that follows, :func:`evalops.retrievers.runfile.check_run_file`)."""
    walk = _Walk(registry, memory_budget)
    for entry in entries:
        walk.entry(entry)
