"""The wheel and the sdist hold every file of the package: each module, and each file the code opens at run time
(dashboard templates and stylesheets, report templates, judge prompts, migrations, the DAG modules)."""

from __future__ import annotations

import email
import re
import zipfile
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]

pytestmark = pytest.mark.slow

# What the code opens by path at run time; each kind must be found in the tree (so the list stays true) and in
# both artefacts.
RUNTIME_FILES = {
    "dashboard templates": r"evalops/dashboard/templates/.+\.html",
    "dashboard stylesheets": r"evalops/dashboard/static/.+\.css",
    "report templates": r"evalops/reports/templates/.+\.j2",
    "judge prompts": r"evalops/judges/prompts/.+\.yaml",
    "migrations": r"evalops/warehouse/migrations/(env\.py|script\.py\.mako|versions/.+\.py)",
    "DAG modules": r"evalops/airflow/dags/.+\.py",
    "Airflow provider": r"evalops/airflow/.+\.py",
}


def _package_files() -> set[str]:
    """The files of ``evalops/`` in the checkout (no caches)."""
    return {str(p.relative_to(REPO)) for p in (REPO / "evalops").rglob("*")
            if p.is_file() and "__pycache__" not in p.parts and p.suffix != ".pyc"}


def test_the_wheel_and_the_sdist_hold_every_file_of_the_package(artefacts):
    tree = _package_files()
    for kind, pattern in RUNTIME_FILES.items():
        assert any(re.fullmatch(pattern, f) for f in tree), f"no {kind} in the tree: update RUNTIME_FILES"
    wheel, sdist = artefacts.wheel_names(), artefacts.sdist_names()
    missing_wheel = sorted(tree - wheel)
    missing_sdist = sorted(tree - sdist)
    assert not missing_wheel, f"not in the wheel: {missing_wheel}"
    assert not missing_sdist, f"not in the sdist: {missing_sdist}"
    assert {"LICENSE", "README.md", "pyproject.toml"} <= sdist


def test_the_wheel_says_its_name_license_and_entry_points(artefacts):
    with zipfile.ZipFile(artefacts.wheel) as zf:
        info = next(n for n in zf.namelist() if n.endswith(".dist-info/METADATA")).rsplit("/", 1)[0]
        meta = email.message_from_bytes(zf.read(f"{info}/METADATA"))
        entry_points = zf.read(f"{info}/entry_points.txt").decode()
        assert "Apache License" in zf.read(f"{info}/licenses/LICENSE").decode()
    assert meta["Name"] == "evalops-rag" and meta["License-Expression"] == "Apache-2.0"
    assert set(meta.get_all("Provides-Extra")) >= {"airflow", "gx", "postgres", "retrievers", "reports"}
    assert not any(r.startswith("psycopg") and "extra ==" not in r for r in meta.get_all("Requires-Dist"))
    assert "evalops = evalops.cli:main" in entry_points
    assert "[apache_airflow_provider]" in entry_points and "evalops.airflow.provider:get_provider_info" in entry_points
    assert "[airflow.plugins]" in entry_points
