"""Every library evalops imports is declared in pyproject.toml: in the base dependencies, or in the extra whose
``evalops.util.extras.require`` call imports it. Found by scanning the package's imports, not by a list kept by hand."""

from __future__ import annotations

import ast
import functools
import importlib.metadata as md
import re
import sys
import tomllib
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
PACKAGE = REPO / "evalops"
# Imported only by code behind an extra that is not part of the lock (so not installed here to look up).
NOT_INSTALLED = {"sentence_transformers": "sentence-transformers", "presidio_analyzer": "presidio-analyzer"}


def _norm(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def _requirement_name(requirement: str) -> str:
    return _norm(re.match(r"[A-Za-z0-9._-]+", requirement).group(0))


def _project() -> dict:
    return tomllib.loads((REPO / "pyproject.toml").read_text())["project"]


def _imports() -> dict[str, set[str]]:
    """Top-level module -> the files that import it (absolute imports of anything but evalops and the stdlib)."""
    found: dict[str, set[str]] = {}
    for path in PACKAGE.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            names = []
            if isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                names = [node.module]
            for name in names:
                top = name.split(".")[0]
                if top != "evalops" and top not in sys.stdlib_module_names:
                    found.setdefault(top, set()).add(str(path.relative_to(REPO)))
    return found


def _require_calls() -> list[tuple[str, str, str]]:
    """``(module, extra, file)`` of every ``require("module", "extra", ...)`` call in the package."""
    calls = []
    for path in PACKAGE.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if (isinstance(node, ast.Call) and getattr(node.func, "id", None) == "require" and len(node.args) >= 2
                    and all(isinstance(a, ast.Constant) and isinstance(a.value, str) for a in node.args[:2])):
                calls.append((node.args[0].value, node.args[1].value, str(path.relative_to(REPO))))
    return calls


@functools.cache
def _installed() -> dict[str, list[str]]:
    return md.packages_distributions()


def _distributions(module: str) -> set[str]:
    if module in NOT_INSTALLED:
        return {NOT_INSTALLED[module]}
    found = _installed().get(module)
    if not found:
        pytest.fail(f"{module} is imported by evalops but no installed distribution provides it")
    return {_norm(d) for d in found}


def _covered(distributions: set[str], requirements: list[str]) -> bool:
    """True when one of ``distributions`` is a declared requirement or a part of one that it requires (the
    ``airflow`` module comes from apache-airflow-core, which the declared apache-airflow requires)."""
    declared = {_requirement_name(r) for r in requirements}
    if distributions & declared:
        return True
    for name in declared:
        try:
            requires = md.requires(name) or []
        except md.PackageNotFoundError:
            continue
        parts = {_requirement_name(r) for r in requires if "extra ==" not in r}
        if {d for d in distributions & parts if d.startswith(name + "-")}:
            return True
    return False


def test_every_import_is_declared_in_the_base_or_an_extra():
    project = _project()
    extras = project["optional-dependencies"]
    everything = project["dependencies"] + [r for name, reqs in extras.items() if name not in ("dev", "docs")
                                            for r in reqs]
    missing = {module: sorted(files) for module, files in _imports().items()
               if not _covered(_distributions(module), everything)}
    assert not missing, f"imported but not declared in pyproject.toml: {missing}"


def test_each_required_extra_declares_the_library_it_is_required_for():
    extras = _project()["optional-dependencies"]
    calls = _require_calls()
    # (the report's charts are SVG drawn by evalops since issue 27: nothing requires the `reports` extra)
    assert {extra for _, extra, _ in calls} >= {"gx", "retrievers", "airflow", "postgres", "dense", "presidio"}
    wrong = [(module, extra, where) for module, extra, where in calls
             if extra not in extras or not _covered(_distributions(module.split(".")[0]), extras[extra])]
    assert not wrong, f"require() names an extra that does not install the module: {wrong}"


def test_libraries_of_an_extra_are_imported_only_through_require():
    """An extra's library imported at module level (or without ``require``) would be a traceback on the base
    install instead of the message naming the extra. The libraries of ``evalops.util.extras.LIBRARIES`` (the
    ``fast``, ``pipeline`` and ``dashboard`` extras) are the exception: the commands that load them check for
    them first (tests/cli/test_base_install.py runs the base commands without them)."""
    from evalops.util.extras import LIBRARIES

    project = _project()
    base = project["dependencies"]
    lazy = {module.split(".")[0] for module, _, _ in _require_calls()}
    for module, extra in LIBRARIES.items():
        assert not _covered(_distributions(module), base), f"{module} is a base dependency, not the {extra} extra's"
        assert _covered(_distributions(module), project["optional-dependencies"][extra]), (module, extra)
    for module, files in _imports().items():
        if _covered(_distributions(module), base) or module in lazy or module in LIBRARIES:
            continue
        # Only evalops.airflow imports Airflow (tests/dags/test_airflow_boundary.py); Airflow loads it.
        assert module == "airflow" and all(f.startswith("evalops/airflow/") for f in files), \
            f"{module} (an extra's library) imported without require() in {sorted(files)}"


def test_the_distribution_has_a_free_name_a_license_and_ranges_not_pins_in_its_extras():
    project = _project()
    assert project["name"] == "evalops-rag"
    assert project["license"] == "Apache-2.0" and project["license-files"] == ["LICENSE"]
    assert "Apache License" in (REPO / "LICENSE").read_text() and "Version 2.0" in (REPO / "LICENSE").read_text()
    build = tomllib.loads((REPO / "pyproject.toml").read_text())["build-system"]["requires"]
    assert any(re.fullmatch(r"setuptools>=(\d+)", r) and int(r.split(">=")[1]) >= 77 for r in build), build
    for extra, requirements in project["optional-dependencies"].items():
        if extra in ("dev", "docs"):
            continue
        pinned = [r for r in requirements if "==" in r]
        assert not pinned, f"extra {extra!r} pins {pinned}; a library gives ranges (the lock pins the tested set)"
    assert not any("psycopg" in r for r in project["dependencies"]), "PostgreSQL is the `postgres` extra"


def test_the_base_dependencies_are_the_light_ones_and_the_extras_of_the_pipeline_include_it():
    """The base install is numpy, scipy and small pure-Python libraries (tests/packaging/test_clean_install.py
    measures it); pandas, pyarrow, SQLAlchemy and the web stack come with ``pipeline`` (or ``fast``,
    ``dashboard``), which every extra that serves the pipeline's commands includes."""
    project = _project()
    base = {_requirement_name(r) for r in project["dependencies"]}
    assert base == {"numpy", "scipy", "pyyaml", "click", "rich", "markupsafe"}, base
    extras = project["optional-dependencies"]
    assert "evalops-rag[fast]" in extras["pipeline"] and "evalops-rag[pipeline]" in extras["dashboard"]
    assert "evalops-rag[dashboard]" in extras["airflow"]
    assert "evalops-rag[dashboard]" in extras["reports"]  # `[gx,retrievers,reports]`: every command
    for name, requirements in extras.items():
        if name not in ("fast", "pipeline", "dashboard", "airflow", "reports", "irmeasures", "docs", "dev"):
            assert "evalops-rag[pipeline]" in requirements, f"extra {name!r} does not include the pipeline"
