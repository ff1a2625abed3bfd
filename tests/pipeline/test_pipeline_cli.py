from __future__ import annotations

import os

from click.testing import CliRunner

from evalops.cli import main
from evalops.exitcodes import ExitCode


def test_report_prints_the_newest_markdown_report(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    for age, (name, text) in enumerate((("retrieval_eval_b", "# new\n"), ("retrieval_eval_a", "# old\n"))):
        folder = tmp_path / ".evalops" / "reports" / name
        folder.mkdir(parents=True)
        (folder / "report.md").write_text(text)
        (folder / "report.html").write_text("<html></html>")
        os.utime(folder, (1_700_000_000 - age * 60, 1_700_000_000 - age * 60))
    runner = CliRunner()
    newest = runner.invoke(main, ["report"])
    assert newest.exit_code == 0 and newest.output == "# new\n"
    named = runner.invoke(main, ["report", "retrieval_eval/a", "--html"])
    assert named.exit_code == 0 and named.output.strip().endswith("retrieval_eval_a/report.html")


def test_report_without_reports_is_a_clear_error(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    result = CliRunner().invoke(main, ["report"])
    assert result.exit_code == ExitCode.BAD_INPUT and "no report yet" in result.output


def test_run_rejects_a_bad_date(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    result = CliRunner().invoke(main, ["run", "--date", "yesterday"])
    assert result.exit_code == ExitCode.BAD_INPUT and "not a date; use YYYY-MM-DD" in result.output


def test_demo_outside_the_project_folder_is_a_clear_error(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    result = CliRunner().invoke(main, ["demo"])
    assert result.exit_code == ExitCode.BAD_INPUT and "run the demo from the project folder" in result.output
