"""The registry of retriever versions: ``include/retrievers.yaml`` plus the user's own file.

File layout (every key of an entry is required except ``params``; unknown keys are errors)::

    retrievers:
      - name: handbook-search        # letters, digits, '.', '_', '-'
        version: "1.0"               # a string (quote it) or an integer
        adapter: builtin             # http | python | run_file | builtin
        deployed: true               # scored by the daily run
        owner: search-platform
        params: {kind: bm25, k1: 0.9, b: 0.4}

Files are read in order; an entry in a later file replaces the entry with the same name and version from an
earlier one (the user's file overrides the project's). The same name and version twice in one file is an
error. Relative paths in ``params`` are relative to the file that declares them. Every problem is a
``ConfigError`` that starts with ``file:line:``. The accepted ``params`` per adapter are in
``evalops.retrievers.schema.PARAMS``.
"""

from __future__ import annotations

import os
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

from evalops.config import find_project
from evalops.errors import ConfigError
from evalops.retrievers.schema import ADAPTERS, BUILTIN_KINDS, PARAMS, RetrieverEntry, parse_entry
from evalops.util.yamlfile import Marked, load_marked

__all__ = [
    "ADAPTERS",
    "BUILTIN_KINDS",
    "NAMED_BUILTINS",
    "PARAMS",
    "Registry",
    "RetrieverEntry",
    "builtin_entry",
    "default_registry_paths",
    "load_default_registry",
    "load_registry",
]


def _read_file(path: Path) -> list[RetrieverEntry]:
    doc = load_marked(path)
    if not isinstance(doc, Mapping) or not isinstance(doc.get("retrievers"), list):
        raise ConfigError(f"{path}:1: expected a top-level `retrievers:` list")
    extra = [k for k in doc if k != "retrievers"]
    if extra:
        raise ConfigError(f"{path}:{doc.line_of(extra[0]) if isinstance(doc, Marked) else 1}: unknown top-level key {extra[0]!r}")
    entries: list[RetrieverEntry] = []
    seen: dict[str, str] = {}
    top_line = doc.line_of("retrievers") if isinstance(doc, Marked) else 1
    for m in doc["retrievers"]:
        e = parse_entry(m, path, top_line)
        if e.key in seen:
            raise ConfigError(f"{e.source}: {e.key} is declared twice in this file (first at {seen[e.key]})")
        seen[e.key] = e.source
        entries.append(e)
    return entries


class Registry:
    """Registered retriever versions, in file order."""

    def __init__(self, entries: Sequence[RetrieverEntry] = ()):
        self._entries: dict[str, RetrieverEntry] = {}
        for e in entries:
            self._entries[e.key] = e

    def __iter__(self) -> Iterator[RetrieverEntry]:
        return iter(self._entries.values())

    def __len__(self) -> int:
        return len(self._entries)

    def __contains__(self, spec: object) -> bool:
        try:
            self.resolve(str(spec))
        except ConfigError:
            return False
        return True

    def deployed(self) -> list[RetrieverEntry]:
        return [e for e in self if e.deployed]

    def names(self) -> list[str]:
        return sorted({e.name for e in self})

    def get(self, name: str, version: str | None = None) -> RetrieverEntry:
        """The entry ``name@version``. Without a version: the deployed one, or the only one; else an error."""
        versions = [e for e in self if e.name == name]
        if not versions:
            raise ConfigError(f"no retriever named {name!r} in the registry; known: {', '.join(self.names()) or 'none'}")
        if version is not None:
            for e in versions:
                if e.version == str(version):
                    return e
            raise ConfigError(f"{name!r} has no version {version!r}; known: {', '.join(e.version for e in versions)}")
        deployed = [e for e in versions if e.deployed]
        picks = deployed if deployed else versions
        if len(picks) == 1:
            return picks[0]
        raise ConfigError(
            f"{name!r} has several {'deployed ' if deployed else ''}versions ({', '.join(e.version for e in picks)}); "
            f"name one as {name}@VERSION"
        )

    def resolve(self, spec: str) -> RetrieverEntry:
        """``name@version`` or ``name`` (see :meth:`get`)."""
        name, _, version = spec.partition("@")
        return self.get(name, version or None)


def load_registry(*paths: str | os.PathLike[str]) -> Registry:
    """Read registry files in order; a later file's entry replaces an earlier one with the same key."""
    entries: list[RetrieverEntry] = []
    for p in paths:
        entries.extend(_read_file(Path(p)))
    return Registry(entries)


def default_registry_paths(user: str | os.PathLike[str] | None = None) -> list[Path]:
    """The registry files of the project around the working directory (its ``registry`` and overlay
    settings), then ``user``. Outside a project, only ``user``."""
    from evalops.config import load_config

    paths: list[Path] = []
    home = find_project()
    if home is not None:
        paths.extend(p for p in load_config(home).registry_files() if p.is_file())
    if user:
        paths.append(Path(user))
    return paths


def load_default_registry(user: str | os.PathLike[str] | None = None) -> Registry:
    return load_registry(*default_registry_paths(user))


# Built-ins usable by name without a registry entry, with their default parameters.
NAMED_BUILTINS: dict[str, dict[str, Any]] = {
    "bm25": {"kind": "bm25"},
    "tfidf": {"kind": "tfidf"},
    "hybrid": {"kind": "hybrid", "retrievers": [{"kind": "bm25"}, {"kind": "tfidf"}]},
    "bm25-rerank": {"kind": "rerank", "first": {"kind": "bm25"}, "reranker": {"kind": "overlap"}},
    "dense": {"kind": "dense", "model": "wordllama"},
    "dense-hybrid": {"kind": "hybrid", "retrievers": [{"kind": "bm25"}, {"kind": "dense", "model": "wordllama"}]},
}


def builtin_entry(name: str) -> RetrieverEntry:
    """An unregistered built-in (``evalops retrieve bm25 ...``): one of ``NAMED_BUILTINS``."""
    if name not in NAMED_BUILTINS:
        raise ConfigError(f"{name!r} is not a named built-in; use one of {', '.join(NAMED_BUILTINS)}")
    return RetrieverEntry(name, "builtin", "builtin", NAMED_BUILTINS[name], False, "evalops", "built-in")
