"""Each extra on its own, as ``pip install 'evalops-rag[EXTRA]'`` gives it: the built wheel with that extra in a
fresh venv (the lock's versions as constraints, as the other venvs of tests/packaging), whose installed
distributions all have what they require (``uv pip check``, the same check as ``pip check``), which imports the
extra's libraries and, for an extra that includes ``pipeline``, creates a project (``evalops init``)."""

from __future__ import annotations

import shutil
import tomllib

import pytest

from tests.packaging.conftest import REPO, make_venv, uv

pytestmark = pytest.mark.slow

# What each extra is installed for, imported in its venv.
IMPORTS = {
    "fast": "import pyarrow.csv",
    "pipeline": "import pandas, sqlalchemy, alembic, pydantic_settings, jinja2, nh3, upath, evalops.warehouse",
    "dashboard": "import fastapi, uvicorn, evalops.dashboard.app",
    "airflow": "import airflow, evalops.airflow.provider",
    "gx": "import great_expectations",
    "postgres": "import psycopg",
    "retrievers": "import bm25s, Stemmer, jieba",
    "reports": "import evalops.reports.render",
    "langchain": "import langchain_core",
    "llamaindex": "import llama_index.core",
    "irmeasures": "import ir_measures",
    "wordllama": "import wordllama, tokenizers, safetensors",
}
# Not installed here: they bring torch (sentence-transformers) or Presidio, which the lock leaves out
# (tests/packaging/test_locked_extras.py); the documentation and the test suite's extras are not a user's.
NOT_INSTALLED = {"dense", "presidio", "docs", "dev"}


def _extras() -> dict[str, list[str]]:
    return tomllib.loads((REPO / "pyproject.toml").read_text())["project"]["optional-dependencies"]


def test_every_extra_is_installed_here_or_said_why_not():
    assert set(_extras()) == set(IMPORTS) | NOT_INSTALLED


@pytest.mark.parametrize("extra", sorted(IMPORTS))
def test_the_wheel_with_one_extra_has_what_it_requires_and_runs(extra, artefacts, tmp_path):
    venv = make_venv(tmp_path / "venv", artefacts.wheel, (extra,))
    try:
        done = venv.run(uv(), "pip", "check", "--python", venv.bin / "python", cwd=tmp_path)
        assert done.returncode == 0, f"{extra}: {done.stdout}{done.stderr}"
        done = venv.run("python", "-c", IMPORTS[extra], cwd=tmp_path)
        assert done.returncode == 0, f"{extra}: {done.stderr[-3000:]}"
        done = venv.run("evalops", "init", "proj", cwd=tmp_path)
        if extra in ("fast", "irmeasures"):  # the base install and a library: the pipeline's commands say so
            assert done.returncode == 3 and "install `evalops-rag[pipeline]`" in done.stderr, done.stderr
        else:
            assert done.returncode == 0, f"{extra}: {done.stdout}{done.stderr[-3000:]}"
            assert (tmp_path / "proj" / "evalops.yaml").is_file()
    finally:
        shutil.rmtree(venv.root, ignore_errors=True)
