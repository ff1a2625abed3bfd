"""The lazy package fronts (``evalops.config``, ``pipeline``, ``goldset``, ``contracts``, ``airflow``) are typed.

Each front imports its submodules on first use (PEP 562), which a type checker cannot follow; an
``if TYPE_CHECKING:`` block beside it names every export with its real module. mypy checks this file
(``mypy.ini`` lists ``tests/typecheck``; ``tools/ratchet.py`` allows it no error): each ``assert_type`` below
fails if the name were ``Any`` to a checker. The tests keep each block honest at run time: it names exactly the
front's lazy exports, and each name is the object the front returns.
"""

from __future__ import annotations

import ast
import importlib
from pathlib import Path
from typing import TYPE_CHECKING, Any, assert_type

import pytest

if TYPE_CHECKING:
    # the functions through the fronts; the types they must return straight from their modules (through a
    # front, an untyped name and the expected type would both be Any, and assert_type would pass)
    import evalops.config.settings
    import evalops.contracts.report
    import evalops.goldset.model
    import evalops.pipeline.context
    import evalops.pipeline.specs
    from evalops.config import load_config
    from evalops.contracts import validate_gold_set
    from evalops.goldset import load_gold_set
    from evalops.pipeline import plan_run

FRONTS = ("evalops.config", "evalops.pipeline", "evalops.goldset", "evalops.contracts", "evalops.airflow")
# names a front defines itself rather than lazily
OWN_NAMES = {"evalops.goldset": {"QUERY_TYPES"}}


def _checked_only(cfg: evalops.config.settings.Config, run: evalops.pipeline.context.RunContext, folder: Path,
                  snapshot_id: str) -> None:
    """Never called: the statements are for mypy (each call's result has the declared type, not Any)."""
    assert_type(load_config(folder), evalops.config.settings.Config)
    assert_type(plan_run(cfg, run, snapshot_id, "v1", {}), list[evalops.pipeline.specs.VersionSpec])
    gold = load_gold_set(folder)
    assert_type(gold, evalops.goldset.model.GoldSet)
    assert_type(validate_gold_set(gold, None), evalops.contracts.report.ValidationReport)


def _type_checking_imports(package: str) -> dict[str, str]:
    """``{name: module}`` of the ``if TYPE_CHECKING:`` block of ``package``'s ``__init__``."""
    source = Path(importlib.import_module(package).__file__ or "").read_text(encoding="utf-8")
    names: dict[str, str] = {}
    for node in ast.parse(source).body:
        if isinstance(node, ast.If) and isinstance(node.test, ast.Name) and node.test.id == "TYPE_CHECKING":
            for stmt in node.body:
                assert isinstance(stmt, ast.ImportFrom) and stmt.module, ast.dump(stmt)
                for alias in stmt.names:
                    # `name as name`: an explicit re-export (a bare import would be private under --strict)
                    assert alias.asname == alias.name, f"{package}: write `{alias.name} as {alias.name}`"
                    names[alias.name] = stmt.module
    return names


@pytest.mark.parametrize("package", FRONTS)
def test_type_checking_block_names_every_lazy_export(package: str) -> None:
    front = importlib.import_module(package)
    declared = _type_checking_imports(package)
    assert set(declared) == set(front.__all__) - OWN_NAMES.get(package, set())
    for name, module in declared.items():
        if package == "evalops.airflow" and name == "evaluation_task_group":
            pytest.importorskip("airflow.sdk")
        real: Any = getattr(importlib.import_module(module), name)
        assert getattr(front, name) is real, f"{package}.{name} is not {module}.{name}"
