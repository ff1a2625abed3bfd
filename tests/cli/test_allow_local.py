"""An empty warehouse URL (a fork's pull request cannot read the CI secret) stops `evalops gate` and
`evalops run` with exit 3 before anything is written; `--allow-local` uses the project's local warehouse
knowingly, and says so."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from click.testing import CliRunner

from evalops.cli import main
from evalops.exitcodes import ExitCode

INCLUDE = Path(__file__).resolve().parents[2] / "include"
SETTINGS = f"""\
gold_set:
  path: {INCLUDE / "goldset"}
knowledge_base:
  path: {INCLUDE / "knowledge_base"}
measures: [nDCG@10]
log_sample_size: 0
"""
REGISTRY = """\
retrievers:
  - name: search
    version: "1"
    adapter: builtin
    deployed: true
    owner: me
    params: {kind: bm25}
"""


@pytest.fixture
def project(tmp_path, monkeypatch):
    for name in list(os.environ):
        if name.startswith("EVALOPS_"):
            monkeypatch.delenv(name)
    (tmp_path / "evalops.yaml").write_text(SETTINGS, encoding="utf-8")
    (tmp_path / "retrievers.yaml").write_text(REGISTRY, encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("EVALOPS_WAREHOUSE_URL", "")
    return tmp_path


@pytest.mark.parametrize("command", [["gate", "--junit-xml", "junit.xml"], ["run"]])
def test_an_empty_warehouse_url_stops_before_anything_is_written(project, command):
    result = CliRunner().invoke(main, [*command, "--date", "2024-06-01"])
    assert result.exit_code == ExitCode.BAD_INPUT, result.output
    assert "error: environment variable EVALOPS_WAREHOUSE_URL: warehouse_url is set but empty" in result.output
    assert "--allow-local" in result.output and "Traceback" not in result.output
    assert not (project / ".evalops").exists()  # no warehouse, work folder or report


def test_allow_local_runs_on_the_project_s_warehouse_and_says_so(project):
    result = CliRunner().invoke(main, ["gate", "--date", "2024-06-01", "--allow-local", "--junit-xml", "j.xml"])
    assert result.exit_code == ExitCode.SUCCESS, result.output
    assert "note: warehouse_url is empty (environment variable EVALOPS_WAREHOUSE_URL): using the local warehouse " \
           f"{project / '.evalops' / 'warehouse.db'} (--allow-local)" in result.output
    assert (project / ".evalops" / "warehouse.db").is_file()
