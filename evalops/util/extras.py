"""The optional parts of evalops (the extras of its distribution) and the one way to import them.

The distribution is ``evalops-rag`` (``evalops`` on PyPI is an unrelated project); the import package is
``evalops``. A library an extra brings is imported where it is used, through :func:`require`: when it is not
installed, the user gets an input error naming the extra to install (exit 3), never a traceback.
"""

from __future__ import annotations

import importlib
import importlib.util
import sys
from types import ModuleType

from evalops.errors import InputError

__all__ = ["DISTRIBUTION", "EXTRAS", "LIBRARIES", "MissingExtraError", "install_hint", "missing_library",
           "require", "require_extra", "translate"]

DISTRIBUTION = "evalops-rag"

#: extra -> what it adds (docs/install.md lists the same).
EXTRAS = {
    "fast": "Arrow's readers for large and zstd-compressed files (pyarrow)",
    "pipeline": "every command but evaluate, compare and power: the warehouse, runs, validation, reports",
    "dashboard": "the history dashboard served by `evalops dashboard` (FastAPI, uvicorn)",
    "airflow": "the DAGs, the Airflow provider and Airflow connections",
    "gx": "data contracts validated with Great Expectations",
    "retrievers": "the built-in lexical retrievers (BM25, the tokenizer)",
    "reports": "reports and the dashboard that shows them (the pipeline and the dashboard's app)",
    "postgres": "a PostgreSQL warehouse",
    "langchain": "LangChain retrievers as registry entries (langchain-core)",
    "llamaindex": "LlamaIndex retrievers as registry entries (llama-index-core)",
    "irmeasures": "measures without a native kernel, computed by ir_measures (the fallback)",
    "wordllama": "the built-in dense encoder (model: wordllama: its static embeddings, tokenizers, safetensors)",
    "dense": "the dense retriever over your own model (sentence-transformers)",
    "presidio": "Presidio's pattern recognizers in the query-log scrubber",
}


#: The libraries of the extras the base install leaves out that evalops imports at module level (the commands
#: check for them before they load: :func:`require_extra`), each with its extra. An extra includes the ones in
#: :data:`INCLUDES`.
LIBRARIES = {
    "pyarrow": "fast",
    "pandas": "pipeline", "sqlalchemy": "pipeline", "alembic": "pipeline", "httpx": "pipeline",
    "httpcore": "pipeline", "pydantic": "pipeline", "pydantic_settings": "pipeline", "jinja2": "pipeline",
    "nh3": "pipeline", "upath": "pipeline",
    "fastapi": "dashboard", "uvicorn": "dashboard",
}
INCLUDES = {"pipeline": ("fast",), "dashboard": ("pipeline",)}


class MissingExtraError(InputError):
    """A feature needs a library that an extra of the distribution installs, and it is not installed."""

    def __init__(self, extra: str, purpose: str, missing: str):
        self.extra = extra
        self.purpose = purpose
        self.missing = missing
        super().__init__(f"install `{DISTRIBUTION}[{extra}]` to {purpose} ({missing} is not installed): "
                         f"{install_hint(extra)}")


def install_hint(*extras: str) -> str:
    """The install line for ``extras`` (as docs and messages print it)."""
    return f"pip install '{DISTRIBUTION}[{','.join(extras)}]'" if extras else f"pip install {DISTRIBUTION}"


def require(module: str, extra: str, purpose: str) -> ModuleType:
    """Import ``module`` (which the extra ``extra`` installs) for ``purpose`` ("validate with Great
    Expectations"); :class:`MissingExtraError` when it (or a package it needs) is not installed."""
    if extra not in EXTRAS:
        raise ValueError(f"unknown extra {extra!r}")
    try:
        return importlib.import_module(module)
    except ModuleNotFoundError as exc:
        if exc.name is None or "." in exc.name:
            raise  # a part of an installed package is missing: a broken install, not a missing extra
        raise MissingExtraError(extra, purpose, exc.name) from None


def _installed(module: str) -> bool:
    if module in sys.modules:
        return sys.modules[module] is not None
    return importlib.util.find_spec(module) is not None


def missing_library(extra: str) -> str | None:
    """The first library of ``extra`` (or of an extra it includes) in :data:`LIBRARIES` that is not installed,
    found without importing anything; None when all are."""
    for included in INCLUDES.get(extra, ()):
        found = missing_library(included)
        if found is not None:
            return found
    return next((m for m, e in LIBRARIES.items() if e == extra and not _installed(m)), None)


def require_extra(extra: str, purpose: str) -> None:
    """:class:`MissingExtraError` when a library of ``extra`` is not installed (before importing any of it)."""
    if extra not in EXTRAS:
        raise ValueError(f"unknown extra {extra!r}")
    missing = missing_library(extra)
    if missing is not None:
        raise MissingExtraError(extra, purpose, missing)


def translate(exc: ModuleNotFoundError, purpose: str) -> MissingExtraError | None:
    """The :class:`MissingExtraError` for a library of :data:`LIBRARIES` that an import did not find (``exc``),
    or None for any other module (a broken install or a bug)."""
    name = exc.name or ""
    if "." in name or name not in LIBRARIES:
        return None
    return MissingExtraError(LIBRARIES[name], purpose, name)
