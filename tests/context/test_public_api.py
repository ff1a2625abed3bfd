"""The context package's public API is what __all__ says, and importing it stays cheap."""

from __future__ import annotations

import pkgutil
import subprocess
import sys

import evalops.context


def test_all_names_exist_and_nothing_public_is_undeclared():
    for name in evalops.context.__all__:
        assert hasattr(evalops.context, name), name
    public = {n for n in dir(evalops.context) if not n.startswith("_")}
    submodules = {m.name for m in pkgutil.iter_modules(evalops.context.__path__)}
    assert public - set(evalops.context.__all__) - submodules == set()


def test_importing_context_does_not_import_heavy_libraries():
    code = (
        "import sys, evalops.context; "
        "print(sorted(m for m in ('pandas', 'scipy', 'pyarrow', 'airflow', 'sqlalchemy') if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"
