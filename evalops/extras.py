"""The optional parts of evalops (the extras of its distribution) and the one way to import them.

The distribution is ``evalops-rag`` (``evalops`` on PyPI is an unrelated project); the import package is
``evalops``. A library an extra brings is imported where it is used, through :func:`require`: when it is not
installed, the user gets an input error naming the extra to install (exit 3), never a traceback.
"""

from __future__ import annotations

import importlib
from types import ModuleType

from evalops.errors import InputError

__all__ = ["DISTRIBUTION", "EXTRAS", "MissingExtraError", "install_hint", "require"]

DISTRIBUTION = "evalops-rag"

#: extra -> what it adds (docs/install.md lists the same).
EXTRAS = {
    "airflow": "the DAGs, the Airflow provider and Airflow connections",
    "gx": "data contracts validated with Great Expectations",
    "retrievers": "the built-in lexical retrievers (BM25, the tokenizer)",
    "reports": "charts in reports",
    "postgres": "a PostgreSQL warehouse",
    "langchain": "LangChain retrievers as registry entries (langchain-core)",
    "llamaindex": "LlamaIndex retrievers as registry entries (llama-index-core)",
    "irmeasures": "measures without a native kernel, computed by ir_measures (the fallback)",
    "wordllama": "the built-in dense encoder (model: wordllama: its static embeddings, tokenizers, safetensors)",
    "dense": "the dense retriever over your own model (sentence-transformers)",
    "presidio": "Presidio's pattern recognizers in the query-log scrubber",
}


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
