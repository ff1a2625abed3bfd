"""The registry file's schema: the entry type, the accepted ``params`` per adapter, and their checks.

Every check raises a ``ConfigError`` that starts with ``file:line:`` (lines come from the YAML node marks).
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from evalops.config.env import check_url_scheme
from evalops.errors import ConfigError, InputError
from evalops.retrievers.runfile import check_run_file
from evalops.util.limits import DEFAULT_MEMORY_BUDGET
from evalops.util.secrets import mask_value
from evalops.util.yamlfile import Marked

__all__ = ["ADAPTERS", "BUILTIN_KINDS", "PARAMS", "RetrieverEntry", "parse_entry"]

ADAPTERS = ("http", "python", "langchain", "llamaindex", "run_file", "builtin")

# Parameter name -> (type, required). Types: str, int, number, bool, mapping, list, component(s).
_TOKENIZER = {"stem": ("bool", False), "stopwords": ("bool", False), "chinese": ("str", False)}
_AUTH = {"env": ("str", False), "conn_id": ("str", False), "header": ("str", False), "scheme": ("str", False)}
_RERANKER = {"kind": ("str", False), "entry_point": ("str", False), "retriever": ("component", False)}
_ENTRY_POINT = {"entry_point": ("str", True), "factory": ("bool", False), "options": ("mapping", False),
                "with_corpus": ("bool", False)}
PARAMS: dict[str, dict[str, tuple[str, bool]]] = {
    "http": {
        "url": ("str", True),
        "timeout": ("number", False),
        "stall_timeout": ("number", False),
        "concurrency": ("int", False),
        "max_response_bytes": ("int", False),
        "max_retries": ("int", False),
        "backoff": ("number", False),
        "backoff_max": ("number", False),
        "auth": ("mapping", False),
        "body": ("mapping", False),
    },
    "python": {**_ENTRY_POINT, "batch": ("bool", False)},
    # A LangChain or LlamaIndex retriever object (evalops.retrievers.frameworks).
    "langchain": {**_ENTRY_POINT, "id_key": ("str", False), "score_key": ("str", False)},
    "llamaindex": {**_ENTRY_POINT, "id_key": ("str", False)},
    "run_file": {"path": ("str", True), "missing": ("str", False)},
    "builtin:bm25": {
        "kind": ("str", True),
        "k1": ("number", False),
        "b": ("number", False),
        "method": ("str", False),
        "tokenizer": ("mapping", False),
        "index_fraction": ("number", False),
    },
    "builtin:tfidf": {"kind": ("str", True), "tokenizer": ("mapping", False), "index_fraction": ("number", False)},
    "builtin:hybrid": {
        "kind": ("str", True),
        "retrievers": ("components", True),
        "method": ("str", False),
        "weights": ("list", False),
        "rrf_k": ("number", False),
        "depth": ("int", False),
    },
    "builtin:rerank": {
        "kind": ("str", True),
        "first": ("component", True),
        "reranker": ("mapping", True),
        "depth": ("int", False),
    },
    "builtin:dense": {
        "kind": ("str", True),
        "model": ("str", True),
        "dim": ("int", False),
        "package": ("str", False),
        "device": ("str", False),
        "batch_size": ("int", False),
    },
}


@dataclass(frozen=True)
class _Range:
    """The values a numeric parameter may take. NaN and infinities never pass: a NaN k1 made BM25 return
    nothing for every query, which a run then scored as 0 instead of failing."""

    low: float
    high: float = math.inf
    low_open: bool = False  # ``low`` itself is refused
    why: str = ""

    def admits(self, value: float) -> bool:
        if not math.isfinite(value) or value > self.high:
            return False
        return value > self.low if self.low_open else value >= self.low

    def __str__(self) -> str:
        low = f"> {self.low:g}" if self.low_open else f">= {self.low:g}"
        shown = low if self.high == math.inf else f"between {self.low:g} and {self.high:g}"
        if self.low_open and self.high != math.inf:
            shown = f"in ({self.low:g}, {self.high:g}]"
        return f"a finite number {shown}" + (f" ({self.why})" if self.why else "")


_AT_LEAST_1 = _Range(1)
_FRACTION = _Range(0, 1, low_open=True, why="the share of the corpus indexed; 1 for a real retriever")
# Numeric parameter -> allowed range, per adapter (keys as in PARAMS). Every numeric parameter has one.
RANGES: dict[str, dict[str, _Range]] = {
    "http": {"timeout": _Range(0, low_open=True, why="seconds per attempt"),
             "stall_timeout": _Range(0, low_open=True, why="seconds without a byte"),
             "concurrency": _AT_LEAST_1, "max_response_bytes": _Range(1024, why="bytes of one response body"),
             "max_retries": _Range(0), "backoff": _Range(0, why="seconds"),
             "backoff_max": _Range(0, why="seconds")},
    "python": {},
    "langchain": {},
    "llamaindex": {},
    "run_file": {},
    "builtin:bm25": {"k1": _Range(0, why="term-frequency saturation; 0.9 by default"),
                     "b": _Range(0, 1, why="length normalisation; 0.4 by default"),
                     "index_fraction": _FRACTION},
    "builtin:tfidf": {"index_fraction": _FRACTION},
    "builtin:hybrid": {"rrf_k": _Range(0, low_open=True, why="60 by default"), "depth": _AT_LEAST_1},
    "builtin:rerank": {"depth": _AT_LEAST_1},
    "builtin:dense": {"dim": _AT_LEAST_1, "batch_size": _AT_LEAST_1},
}
BUILTIN_KINDS = tuple(k.split(":", 1)[1] for k in PARAMS if k.startswith("builtin:"))
_ENTRY_KEYS = {"name", "version", "adapter", "deployed", "owner", "params"}
# optional: ``chunking``, the chunk manifest of the chunking the version retrieves from (evalops.chunking)
_OPTIONAL_KEYS = {"chunking"}
_NAME = re.compile(r"^[A-Za-z0-9._-]+$")


@dataclass(frozen=True)
class RetrieverEntry:
    """One registered retriever version. ``source`` is ``file:line``; ``base_dir`` resolves relative paths."""

    name: str
    version: str
    adapter: str
    params: Mapping[str, Any]
    deployed: bool
    owner: str
    source: str = "<memory>"
    base_dir: Path = field(default_factory=Path.cwd)
    chunking: str | None = None  # the chunk manifest of the version's chunking (relative to base_dir)

    @property
    def key(self) -> str:
        return f"{self.name}@{self.version}"

    @property
    def chunking_path(self) -> Path | None:
        """The declared chunk manifest (``chunking:``), resolved against the registry file's folder."""
        if not self.chunking:
            return None
        path = Path(self.chunking).expanduser()
        return path if path.is_absolute() else self.base_dir / path

    @property
    def run_path(self) -> Path | None:
        """A ``run_file`` entry's run file, resolved against the registry file's folder (None otherwise)."""
        if self.adapter != "run_file" or "path" not in self.params:
            return None
        path = Path(str(self.params["path"])).expanduser()
        return path if path.is_absolute() else self.base_dir / path

    def check_files(self, memory_budget: int = DEFAULT_MEMORY_BUDGET) -> None:
        """Refuse an entry whose run file does not exist or is malformed (a ``ConfigError`` naming the
        registry file and line or the run file and line, the key and what to fix); called before a run
        writes anything, so a bad run file is bad input, not a version that failed half-way. The file is read
        as scoring reads it (within ``memory_budget``), and nothing of it is kept."""
        manifest = self.chunking_path
        if manifest is not None and not manifest.is_file():
            raise ConfigError(f"{self.source}: retriever {self.key}: chunking {manifest} does not exist; write the "
                              "chunk manifest there (`evalops chunking locate` makes one from chunk texts), fix the "
                              "path (relative paths start at the registry's folder), or remove the key")
        path = self.run_path
        if path is None:
            return
        if not path.is_file():
            raise ConfigError(f"{self.source}: retriever {self.key}: params.path {path} does not exist; write the "
                              "run file there, fix the path (relative paths start at the registry's folder), or "
                              "set deployed: false")
        try:
            check_run_file(path, memory_budget)
        except InputError as exc:
            raise ConfigError(f"{exc}; fix the run file, or set deployed: false on retriever {self.key} "
                              f"({self.source})") from None

    def to_record(self, *, masked: bool = True) -> dict[str, Any]:
        """The entry as plain data. ``masked`` (the default, for anything written or shown) replaces every
        secret in ``params`` with ``***`` (:mod:`evalops.util.secrets`: secret-named fields, URL credentials,
        key-named query parameters)."""
        params = _plain(self.params)
        return {
            "name": self.name,
            "version": self.version,
            "adapter": self.adapter,
            "deployed": self.deployed,
            "owner": self.owner,
            "params": mask_value(params) if masked else params,
            "source": self.source,
            **({"chunking": self.chunking} if self.chunking else {}),
        }


def _plain(value: Any) -> Any:
    if isinstance(value, Mapping):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_plain(v) for v in value]
    return value


def _type_ok(value: Any, kind: str) -> bool:
    if kind == "str":
        return isinstance(value, str)
    if kind == "int":
        return isinstance(value, int) and not isinstance(value, bool)
    if kind == "number":
        return isinstance(value, (int, float)) and not isinstance(value, bool)
    if kind == "bool":
        return isinstance(value, bool)
    if kind in ("mapping", "component"):
        return isinstance(value, Mapping)
    if kind in ("components", "list"):
        return isinstance(value, list)
    raise AssertionError(kind)  # pragma: no cover - the table above is closed


def _check(m: Any, spec: dict[str, tuple[str, bool]], what: str, where: str, line: int,
           ranges: Mapping[str, _Range] | None = None) -> None:
    if not isinstance(m, Mapping):
        raise ConfigError(f"{where}:{line}: {what} must be a mapping, got {type(m).__name__}")
    lines = m.line_of if isinstance(m, Marked) else (lambda _k: line)
    for key in m:
        if key not in spec:
            raise ConfigError(f"{where}:{lines(key)}: {what}: unknown key {key!r}; allowed: {', '.join(sorted(spec))}")
    for key, (kind, required) in spec.items():
        if key not in m:
            if required:
                raise ConfigError(f"{where}:{line}: {what}: missing required key {key!r}")
            continue
        if not _type_ok(m[key], kind):
            shown = "a list of retrievers" if kind == "components" else "a mapping" if kind == "component" else f"a {kind}"
            raise ConfigError(f"{where}:{lines(key)}: {what}: {key!r} must be {shown}, got {m[key]!r}")
        allowed = (ranges or {}).get(key)
        if allowed is not None and not allowed.admits(m[key]):
            raise ConfigError(f"{where}:{lines(key)}: {what}: {key} is {m[key]!r}; it must be {allowed}. Fix the "
                              "value in the file or remove it to use the default")


def _param_line(m: Any, key: str, default: int) -> int:
    return m.line_of(key) if isinstance(m, Marked) else default


def _line(m: Any, default: int) -> int:
    return m.line if isinstance(m, Marked) and m.line else default


def _check_component(c: Any, where: str, line: int) -> None:
    """A hybrid/rerank input: ``{ref: name@version}`` (another registry entry) or an inline builtin spec."""
    if isinstance(c, Mapping) and "ref" in c:
        _check(c, {"ref": ("str", True)}, "component", where, _line(c, line))
        return
    _check_builtin(c, where, _line(c, line))


def _check_builtin(p: Any, where: str, line: int) -> None:
    if not isinstance(p, Mapping) or "kind" not in p:
        raise ConfigError(f"{where}:{line}: a builtin retriever needs `kind`, one of {', '.join(BUILTIN_KINDS)}")
    kind = p["kind"]
    if kind not in BUILTIN_KINDS:
        raise ConfigError(f"{where}:{_line(p, line)}: unknown builtin kind {kind!r}; use one of {', '.join(BUILTIN_KINDS)}")
    _check(p, PARAMS[f"builtin:{kind}"], f"builtin {kind}", where, _line(p, line), RANGES[f"builtin:{kind}"])
    lines = p.line_of if isinstance(p, Marked) else (lambda _k: line)
    if "tokenizer" in p:
        _check(p["tokenizer"], _TOKENIZER, "tokenizer", where, lines("tokenizer"))
    if kind == "hybrid":
        if len(p["retrievers"]) < 2:
            raise ConfigError(f"{where}:{lines('retrievers')}: hybrid needs at least two retrievers to fuse")
        for c in p["retrievers"]:
            _check_component(c, where, lines("retrievers"))
        if p.get("method", "rrf") not in ("rrf", "linear"):
            raise ConfigError(f"{where}:{lines('method')}: hybrid method {p['method']!r}: use rrf or linear")
        if "weights" in p and (len(p["weights"]) != len(p["retrievers"]) or not all(
                _type_ok(w, "number") and math.isfinite(w) and w >= 0 for w in p["weights"])):
            raise ConfigError(f"{where}:{lines('weights')}: hybrid weights must be {len(p['retrievers'])} numbers "
                              f">= 0 (finite), one per retriever, got {p['weights']!r}")
    if kind == "dense" and "dim" in p:
        if p["model"] != "wordllama":
            raise ConfigError(f"{where}:{lines('dim')}: dense `dim` applies to model: wordllama only (a "
                              "sentence-transformers model has its own dimension)")
        if p["dim"] not in (64, 128, 256):
            raise ConfigError(f"{where}:{lines('dim')}: wordllama's dim must be 64, 128 or 256, got {p['dim']!r}")
    if kind == "rerank":
        _check_component(p["first"], where, lines("first"))
        _check(p["reranker"], _RERANKER, "reranker", where, lines("reranker"))
        if sum(key in p["reranker"] for key in _RERANKER) != 1:
            raise ConfigError(f"{where}:{lines('reranker')}: reranker needs exactly one of `kind: overlap`, "
                              "`entry_point` or `retriever` (a dense, bm25 or tfidf spec, or {ref: name@version})")
        if "retriever" in p["reranker"]:
            _check_component(p["reranker"]["retriever"], where, lines("reranker"))


def _check_params(adapter: str, params: Any, where: str, pline: int) -> None:
    if adapter == "builtin":
        _check_builtin(params, where, _line(params, pline))
        return
    _check(params, PARAMS[adapter], f"{adapter} params", where, _line(params, pline), RANGES[adapter])
    if "auth" in params:
        _check(params["auth"], _AUTH, "auth", where, _line(params["auth"], pline))
    if adapter == "http":
        try:
            check_url_scheme(params["url"])
        except ValueError as exc:
            raise ConfigError(f"{where}:{_param_line(params, 'url', pline)}: params.url: {exc}") from None


def parse_entry(m: Any, path: Path, line: int) -> RetrieverEntry:
    """Check one entry of ``path`` (declared near ``line``) and build it."""
    where = str(path)
    if not isinstance(m, Mapping):
        raise ConfigError(f"{where}:{line}: each retriever must be a mapping with {', '.join(sorted(_ENTRY_KEYS))}")
    line = _line(m, line)
    lines = m.line_of if isinstance(m, Marked) else (lambda _k: line)
    for key in m:
        if key not in _ENTRY_KEYS | _OPTIONAL_KEYS:
            raise ConfigError(f"{where}:{lines(key)}: unknown key {key!r}; allowed: "
                              f"{', '.join(sorted(_ENTRY_KEYS | _OPTIONAL_KEYS))}")
    for key in ("name", "version", "adapter", "deployed", "owner"):
        if key not in m:
            raise ConfigError(f"{where}:{line}: retriever is missing {key!r}")
    name, version = m["name"], m["version"]
    if not isinstance(name, str) or not _NAME.match(name):
        raise ConfigError(f"{where}:{lines('name')}: name {name!r} must use only letters, digits, '.', '_' and '-'")
    if isinstance(version, float):
        raise ConfigError(f"{where}:{lines('version')}: version {version!r} was read as a number; quote it, e.g. \"{version}\"")
    if isinstance(version, bool) or not isinstance(version, (str, int)) or not _NAME.match(str(version)):
        raise ConfigError(f"{where}:{lines('version')}: version {version!r} must be a string of letters, digits, '.', '_', '-'")
    if m["adapter"] not in ADAPTERS:
        raise ConfigError(f"{where}:{lines('adapter')}: unknown adapter {m['adapter']!r}; use one of {', '.join(ADAPTERS)}")
    if not isinstance(m["deployed"], bool):
        raise ConfigError(f"{where}:{lines('deployed')}: deployed must be true or false, got {m['deployed']!r}")
    if not isinstance(m["owner"], str) or not m["owner"].strip():
        raise ConfigError(f"{where}:{lines('owner')}: owner must be a non-empty string")
    chunking = m.get("chunking")
    if chunking is not None and (not isinstance(chunking, str) or not chunking.strip()):
        raise ConfigError(f"{where}:{lines('chunking')}: retriever {name}@{version}: chunking must be the path of a "
                          f"chunk manifest (JSON Lines of chunk_id, doc_id, start, end), got {chunking!r}")
    params = m.get("params") or Marked()
    try:
        _check_params(m["adapter"], params, where, lines("params"))
    except ConfigError as exc:  # name the entry: "file:line: retriever name@version: ..."
        place, sep, rest = str(exc).partition(": ")
        raise ConfigError(f"{place}{sep}retriever {name}@{version}: {rest}" if sep else str(exc)) from None
    return RetrieverEntry(name, str(version), m["adapter"], params, m["deployed"], m["owner"], f"{where}:{line}", path.parent,
                          chunking)
