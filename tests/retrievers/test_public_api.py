"""The public API is declared explicitly and importing it stays cheap (like httpx's exported-members test)."""

from __future__ import annotations

import subprocess
import sys

import evalops.retrievers as retrievers


def test_all_names_exist_and_every_public_class_or_function_is_exported():
    assert sorted(retrievers.__all__) == sorted(set(retrievers.__all__))
    for name in retrievers.__all__:
        assert hasattr(retrievers, name), name
    public = {n for n, v in vars(retrievers).items() if not n.startswith("_") and callable(v)}
    assert public <= set(retrievers.__all__)


def test_import_does_not_load_heavy_or_optional_libraries():
    code = (
        "import sys, evalops.retrievers; "
        "print(sorted(m for m in ('httpx','bm25s','jieba','Stemmer','scipy','pandas','airflow','sentence_transformers') "
        "if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=60)
    assert out.stdout.strip() == "[]"
