"""Airflow is imported by ``evalops.airflow`` only: every other module reaches Airflow through it (the
secret reader loads ``evalops.airflow.connections`` by name), so hosting evalops elsewhere, or moving to
another Airflow version, touches one package."""

from __future__ import annotations

import re
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[2] / "evalops"
# The same pattern as `grep -rlE '^\s*(from|import) airflow' evalops --include=*.py`.
AIRFLOW_IMPORT = re.compile(r"^\s*(from|import) airflow\b", re.MULTILINE)


def files_importing_airflow(package: Path = PACKAGE) -> list[str]:
    return sorted(str(p.relative_to(package.parent)) for p in package.rglob("*.py")
                  if AIRFLOW_IMPORT.search(p.read_text(encoding="utf-8")))


def test_only_evalops_airflow_imports_airflow():
    found = files_importing_airflow()
    assert found, "the pattern matches nothing: it no longer finds the Airflow package's own imports"
    outside = [f for f in found if not f.startswith("evalops/airflow/")]
    assert not outside, f"these modules import Airflow outside evalops/airflow/: {outside}"


def test_the_pattern_finds_an_indented_import(tmp_path):
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "late.py").write_text("def f():\n    from airflow.sdk import Connection\n")
    (tmp_path / "pkg" / "named.py").write_text("NAME = 'airflow'\nimport airflowish\n")
    assert files_importing_airflow(tmp_path / "pkg") == ["pkg/late.py"]
