"""``evalops init`` keeps the paths the user gave (absolute stays absolute, relative becomes relative to the
project folder, symlinks unresolved), prints next steps that are true, and its project runs after it moved."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner

from evalops.cli import main
from tests.dags.conftest import INCLUDE


@pytest.fixture(autouse=True)
def _clean_environment(monkeypatch):
    for key in list(os.environ):
        if key.startswith("EVALOPS_") and key != "EVALOPS_SHARED_DATA":
            monkeypatch.delenv(key)


def cli(*args: str, cwd: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[int, str]:
    monkeypatch.chdir(cwd)
    monkeypatch.setenv("PWD", str(cwd))  # as a shell sets it
    result = CliRunner().invoke(main, list(args), catch_exceptions=False)
    return result.exit_code, result.output


def stored_paths(root: Path) -> tuple[str, str]:
    settings = yaml.safe_load((root / "evalops.yaml").read_text())
    return settings["gold_set"]["path"], settings["knowledge_base"]["path"]


def test_absolute_stays_absolute_and_relative_is_relative_to_the_project_through_the_symlink(tmp_path, monkeypatch):
    (tmp_path / "data").symlink_to(INCLUDE)  # a symlinked data folder, as ../shared/data may be
    code, out = cli("init", "proj", "--gold-set", "data/goldset", "--knowledge-base", str(INCLUDE / "knowledge_base"),
                    cwd=tmp_path, monkeypatch=monkeypatch)
    assert code == 0, out
    gold, kb = stored_paths(tmp_path / "proj")
    assert gold == "../data/goldset"  # not the symlink's target, not an absolute path
    assert kb == str(INCLUDE / "knowledge_base")  # absolute, as given
    # both were given: no hint to set them; the hint is there when they were not
    assert "set gold_set.path" not in out and "knowledge_base.path" not in out
    code, out = cli("init", "bare", cwd=tmp_path, monkeypatch=monkeypatch)
    assert code == 0 and "set gold_set.path and knowledge_base.path in" in out
    code, out = cli("init", "half", "--gold-set", "data/goldset", cwd=tmp_path, monkeypatch=monkeypatch)
    assert code == 0 and "set knowledge_base.path in" in out and "gold_set.path" not in out


def test_a_relative_path_is_taken_from_the_current_folder_inside_a_symlinked_one(tmp_path, monkeypatch):
    real = tmp_path / "real"
    (real / "work").mkdir(parents=True)
    (tmp_path / "link").symlink_to(real)
    (real / "data").symlink_to(INCLUDE)
    code, out = cli("init", "../proj", "--gold-set", "../data/goldset", cwd=tmp_path / "link" / "work",
                    monkeypatch=monkeypatch)
    assert code == 0, out
    assert stored_paths(real / "proj")[0] == "../data/goldset"
    assert f"evalops project in {tmp_path / 'link' / 'proj'}." in out  # the folder as the user named it


@pytest.mark.slow
def test_a_project_made_by_init_runs_after_it_moved(tmp_path, monkeypatch):
    tree = tmp_path / "tree"
    tree.mkdir()
    (tree / "sample").symlink_to(INCLUDE)
    code, out = cli("init", "proj", "--gold-set", "sample/goldset", "--knowledge-base", "sample/knowledge_base",
                    cwd=tree, monkeypatch=monkeypatch)
    assert code == 0, out
    code, out = cli("run", "--date", "2024-06-01", "-q", cwd=tree / "proj", monkeypatch=monkeypatch)
    assert code == 0 and out == "", out

    moved = tmp_path / "elsewhere" / "tree"
    moved.parent.mkdir()
    shutil.move(str(tree), str(moved))
    code, out = cli("run", "--date", "2024-06-02", cwd=moved / "proj", monkeypatch=monkeypatch)
    assert code == 0, out
    assert "nDCG@10" in out and "0.7321" in out
    assert f"report: {moved / 'proj' / '.evalops' / 'reports'}" in out
    # the warehouse moved with the project: both days are in it, under one fingerprint
    code, out = cli("history", "-m", "nDCG@10", "--format", "csv", cwd=moved / "proj", monkeypatch=monkeypatch)
    rows = [line.split(",") for line in out.splitlines()[1:]]
    assert code == 0 and len(rows) == 2 and len({r[7] for r in rows}) == 1, out


def test_the_readme_first_step_names_the_paths_init_wrote(tmp_path, monkeypatch):
    code, out = cli("init", "given", "--gold-set", str(INCLUDE / "goldset"), "--knowledge-base",
                    str(INCLUDE / "knowledge_base"), cwd=tmp_path, monkeypatch=monkeypatch)
    assert code == 0, out
    gold, kb = stored_paths(tmp_path / "given")
    readme = (tmp_path / "given" / "README.md").read_text()
    assert f"1. `evalops.yaml` points at your gold set (`{gold}`) and knowledge base (`{kb}`); edit" in readme
    assert "Point `evalops.yaml`" not in readme
    code, out = cli("init", "bare", cwd=tmp_path, monkeypatch=monkeypatch)
    assert code == 0, out
    readme = (tmp_path / "bare" / "README.md").read_text()
    assert ("1. Point `evalops.yaml` at your gold set (`gold_set.path`) and knowledge base (`knowledge_base.path`)."
            in readme)
    code, out = cli("init", "half", "--gold-set", str(INCLUDE / "goldset"), cwd=tmp_path, monkeypatch=monkeypatch)
    assert code == 0, out
    gold, _ = stored_paths(tmp_path / "half")
    readme = (tmp_path / "half" / "README.md").read_text()
    assert (f"1. Point `evalops.yaml` at your knowledge base (`knowledge_base.path`); your gold set (`{gold}`) is "
            "set already." in readme)
