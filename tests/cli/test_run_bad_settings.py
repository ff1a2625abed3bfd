"""``evalops run`` refuses wrong settings and registry entries when it loads them, before any work: exit 3,
a message naming the file, the line and the key, and no warehouse, work folder or report written."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

from evalops.cli import main
from evalops.exitcodes import ExitCode

INCLUDE = Path(__file__).resolve().parents[2] / "include"

GOOD = f"""\
gold_set:
  path: {INCLUDE / "goldset"}
knowledge_base:
  path: {INCLUDE / "knowledge_base"}
measures: [nDCG@10, P@5]
regression:
  alpha: 0.05
"""
HTTP_ENTRY = """\
retrievers:
  - name: search
    version: "1"
    adapter: {adapter}
    deployed: true
    owner: me
    params:
      {param}
"""


def _project(tmp_path: Path, settings: str, registry: str | None = None) -> Path:
    (tmp_path / "evalops.yaml").write_text(settings, encoding="utf-8")
    if registry is None:
        shutil.copy(INCLUDE / "retrievers.yaml", tmp_path / "retrievers.yaml")
    else:
        (tmp_path / "retrievers.yaml").write_text(registry, encoding="utf-8")
    return tmp_path


def _run(project: Path, monkeypatch) -> tuple[int, str]:
    for name in list(__import__("os").environ):
        if name.startswith("EVALOPS_"):
            monkeypatch.delenv(name)
    monkeypatch.chdir(project)
    result = CliRunner().invoke(main, ["run", "--date", "2024-06-01"])
    return result.exit_code, result.output


@pytest.mark.parametrize(("settings", "where", "says"), [
    (GOOD.replace("[nDCG@10, P@5]", "['nDCG@-1']"), "evalops.yaml:5", "measures: malformed measure 'nDCG@-1'"),
    (GOOD.replace("[nDCG@10, P@5]", "[nDCG@10, 'P@" + "9" * 100_000 + "']"), "evalops.yaml:5", "cutoff has"),
    (GOOD.replace("alpha: 0.05", "alpha: 1.5"), "evalops.yaml:7", "regression.alpha"),
    (GOOD + "k: 1000000000000\n", "evalops.yaml:8", "k: Input should be less than or equal to 100000"),
    (GOOD + "measures: [P@10]\n", "evalops.yaml:8", "key 'measures' is repeated (first on line 5)"),
    (GOOD + "judge:\n  kind: openai\n", "evalops.yaml:8", "judge: kind openai needs base_url"),
    (GOOD + "judge:\n  kind: openai\n  base_url: file:///etc/passwd\n", "evalops.yaml:10",
     "judge.base_url: 'file:///etc/passwd' is not an http:// or https:// URL"),
], ids=["measure", "huge-cutoff", "alpha", "k", "duplicate-key", "judge-without-url", "judge-url-scheme"])
def test_a_bad_setting_fails_the_run_before_any_work(tmp_path, monkeypatch, settings, where, says):
    project = _project(tmp_path, settings)
    code, output = _run(project, monkeypatch)
    assert code == ExitCode.BAD_INPUT, output
    assert output.startswith(f"error: {project / where}: ") and says in output, output[:400]
    assert "Traceback" not in output and len(output) < 2000
    assert sorted(p.name for p in project.iterdir()) == ["evalops.yaml", "retrievers.yaml"]  # nothing scored


@pytest.mark.parametrize(("adapter", "param", "line", "says"), [
    ("http", "url: file:///etc/passwd", 8, "params.url: 'file:///etc/passwd' is not an http:// or https:// URL"),
    ("http", "url: ftp://example.com/search", 8, "is not an http:// or https:// URL"),
    ("builtin", "kind: nosuch", 8, "unknown builtin kind 'nosuch'"),
], ids=["file-url", "ftp-url", "unknown-builtin"])
def test_a_bad_registry_entry_fails_the_run_before_any_work(tmp_path, monkeypatch, adapter, param, line, says):
    project = _project(tmp_path, GOOD, HTTP_ENTRY.format(adapter=adapter, param=param))
    code, output = _run(project, monkeypatch)
    assert code == ExitCode.BAD_INPUT, output
    assert output.startswith(f"error: {project / 'retrievers.yaml'}:{line}: ") and says in output, output
    assert sorted(p.name for p in project.iterdir()) == ["evalops.yaml", "retrievers.yaml"]


@pytest.mark.parametrize(("command", "date", "says"), [
    ("run", "", "Invalid value for '--date': is empty"),
    ("run", "0001-01-01", "0001-01-01 is outside 1900-01-01 .. 9999-12-30"),
    ("run", "2024-13-01", "'2024-13-01' is not a day; use YYYY-MM-DD"),
    ("gate", "", "Invalid value for '--date': is empty"),
    ("gate", "9" * 100_000, "is not a day; use YYYY-MM-DD"),
])
def test_a_bad_date_is_a_usage_error_before_the_project_is_read(tmp_path, monkeypatch, command, date, says):
    monkeypatch.chdir(tmp_path)  # no project here: the parser refuses the date before looking for one
    result = CliRunner().invoke(main, [command, "--date", date])
    assert result.exit_code == ExitCode.USAGE, result.output
    assert says in result.output and "Traceback" not in result.output and len(result.output) < 1000
