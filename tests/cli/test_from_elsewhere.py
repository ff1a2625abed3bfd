"""A newcomer runs commands from another folder with --project: every command printed as the next step
carries it, and a lookup that finds nothing names the warehouse and the project it looked in (it used to
exit 7 without saying where, and `promote` created an empty warehouse in the current folder)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from click.testing import CliRunner

from evalops.cli import main
from evalops.exitcodes import ExitCode

INCLUDE = Path(__file__).resolve().parents[2] / "include"


@pytest.fixture
def places(tmp_path, monkeypatch):
    for name in list(os.environ):
        if name.startswith("EVALOPS_"):
            monkeypatch.delenv(name)
    project, elsewhere = tmp_path / "my eval", tmp_path / "elsewhere"
    project.mkdir()
    elsewhere.mkdir()
    (project / "evalops.yaml").write_text(
        f"gold_set:\n  path: {INCLUDE / 'goldset'}\nknowledge_base:\n  path: {INCLUDE / 'knowledge_base'}\n"
        "measures: [nDCG@10]\nlog_sample_size: 0\n", encoding="utf-8")
    (project / "retrievers.yaml").write_text(
        "retrievers:\n  - {name: bm25, version: '1.0', adapter: builtin, deployed: true, owner: me, "
        "params: {kind: bm25}}\n", encoding="utf-8")
    monkeypatch.chdir(elsewhere)
    return project, elsewhere


def test_the_printed_next_step_carries_the_project_and_a_lookup_names_where_it_looked(places):
    project, elsewhere = places
    result = CliRunner().invoke(main, ["run", "--project", str(project), "--date", "2024-06-01"])
    assert result.exit_code == ExitCode.SUCCESS, result.output
    assert f"`evalops promote bm25 1.0 --project '{project}' --reason 'first baseline'`" in result.output

    result = CliRunner().invoke(main, ["promote", "bm25", "2.0", "--reason", "x", "--project", str(project)])
    assert result.exit_code == ExitCode.WAREHOUSE_ERROR, result.output
    assert "bm25@2.0 has no succeeded gold-set run to promote (looked in the warehouse " \
           f"sqlite:///{project / '.evalops' / 'warehouse.db'} of the project {project})" in result.output

    result = CliRunner().invoke(main, ["promote", "bm25", "1.0", "--reason", "x", "--project", str(project)])
    assert result.exit_code == ExitCode.SUCCESS, result.output


def test_promote_without_a_project_or_warehouse_names_where_it_looked_and_creates_nothing(places):
    _, elsewhere = places
    result = CliRunner().invoke(main, ["promote", "bm25", "1.0", "--reason", "x"])
    assert result.exit_code == ExitCode.BAD_INPUT, result.output
    assert f"no warehouse at {elsewhere / '.evalops' / 'warehouse.db'} (the default under the current folder; no " \
           "project here: pass --project DIR)" in result.output
    assert list(elsewhere.iterdir()) == []
