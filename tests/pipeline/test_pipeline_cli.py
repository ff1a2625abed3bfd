from __future__ import annotations

import os

import pytest
from click.testing import CliRunner

from evalops.cli import main
from evalops.exitcodes import ExitCode


def _project(tmp_path):
    (tmp_path / "evalops.yaml").write_text("gold_set: {path: goldset}\nknowledge_base: {path: corpus.jsonl}\n")
    return tmp_path


def test_report_prints_the_newest_markdown_report_from_any_folder_of_the_project(tmp_path, monkeypatch):
    _project(tmp_path)
    for age, (name, text) in enumerate((("retrieval_eval_b", "# new\n"), ("retrieval_eval_a", "# old\n"))):
        folder = tmp_path / ".evalops" / "reports" / name
        folder.mkdir(parents=True)
        (folder / "report.md").write_text(text)
        (folder / "report.html").write_text("<html></html>")
        os.utime(folder, (1_700_000_000 - age * 60, 1_700_000_000 - age * 60))
    monkeypatch.chdir(tmp_path / ".evalops" / "reports")
    runner = CliRunner()
    newest = runner.invoke(main, ["report"])
    assert newest.exit_code == 0 and newest.output == "# new\n"
    named = runner.invoke(main, ["report", "retrieval_eval/a", "--html"])
    assert named.exit_code == 0 and named.output.strip().endswith("retrieval_eval_a/report.html")
    monkeypatch.chdir(tmp_path.parent)
    outside = runner.invoke(main, ["report", "--project", str(tmp_path)])
    assert outside.exit_code == 0 and outside.output == "# new\n"


def test_report_finds_a_run_by_its_run_id_alone_and_names_the_reports_it_has(tmp_path, monkeypatch):
    monkeypatch.chdir(_project(tmp_path))
    for name, text in (("cli_cli__2024-06-01", "# day one\n"), ("cli_cli__2024-06-02", "# day two\n")):
        folder = tmp_path / ".evalops" / "reports" / name
        folder.mkdir(parents=True)
        (folder / "report.md").write_text(text)
    runner = CliRunner()
    by_id = runner.invoke(main, ["report", "cli__2024-06-01"])  # the run id `gate` prints
    assert by_id.exit_code == 0 and by_id.output == "# day one\n"
    assert runner.invoke(main, ["report", "cli/cli__2024-06-02"]).output == "# day two\n"
    missing = runner.invoke(main, ["report", "cli__2024-07-01"])
    assert missing.exit_code == ExitCode.BAD_INPUT
    assert "no report for cli__2024-07-01" in missing.output and "cli_cli__2024-06-02" in missing.output
    other = tmp_path / ".evalops" / "reports" / "retrieval_eval_cli__2024-06-01"
    other.mkdir()
    (other / "report.md").write_text("# dag\n")
    both = runner.invoke(main, ["report", "cli__2024-06-01"])
    assert both.exit_code == ExitCode.BAD_INPUT and "several reports for run id cli__2024-06-01" in both.output


def test_report_without_reports_is_a_clear_error(tmp_path, monkeypatch):
    monkeypatch.chdir(_project(tmp_path))
    result = CliRunner().invoke(main, ["report"])
    assert result.exit_code == ExitCode.BAD_INPUT and "no report yet" in result.output


def test_outside_a_project_commands_say_how_to_make_one(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    for args in (["run", "--date", "2024-06-01"], ["report"], ["history"]):
        result = CliRunner().invoke(main, args)
        assert result.exit_code == ExitCode.BAD_INPUT and "no evalops project here" in result.output, (
            args, result.output)
        assert "evalops init" in result.output
    result = CliRunner().invoke(main, ["run", "--project", str(tmp_path / "nowhere")])
    assert result.exit_code != 0 and "not an evalops project" in result.output


def test_run_rejects_a_bad_date(tmp_path, monkeypatch):
    monkeypatch.chdir(_project(tmp_path))
    result = CliRunner().invoke(main, ["run", "--date", "yesterday"])
    assert result.exit_code == ExitCode.USAGE and "yesterday" in result.output and "YYYY-MM-DD" in result.output


def test_the_demo_project_is_the_checkout_whatever_the_folder(tmp_path, monkeypatch, repo_root):
    from evalops.project import demo_project

    monkeypatch.chdir(_project(tmp_path))
    assert demo_project() == repo_root


def test_what_a_run_writes_is_in_the_gitignore_init_writes(tmp_path):
    """The annotation queue, the reports and the work folder all sit under a folder `.gitignore` lists."""
    from pathlib import Path

    from evalops.config import load_config
    from evalops.judges.generate import queue_path

    root = tmp_path / "mine"
    assert CliRunner().invoke(main, ["init", str(root)]).exit_code == 0
    ignored = [root / line.rstrip("/") for line in (root / ".gitignore").read_text().splitlines() if line.endswith("/")]
    cfg = load_config(root, environ={})
    for path in (queue_path(cfg), Path(cfg.report_dir), Path(cfg.work_dir)):
        assert any(folder in path.parents for folder in ignored), path
    # and the gate's default JUnit file, written where the gate runs
    from evalops.cli.gate import gate as gate_command

    [junit] = [o.default for o in gate_command.params if o.name == "junit_xml"]
    assert str(junit) in (root / ".gitignore").read_text().splitlines()


def test_init_writes_a_project_and_refuses_to_overwrite_it(tmp_path):
    runner = CliRunner()
    result = runner.invoke(main, ["init", str(tmp_path / "mine"), "--gold-set", "data", "--knowledge-base",
                                  "data/corpus.jsonl"])
    assert result.exit_code == 0, result.output
    root = tmp_path / "mine"
    for rel in ("evalops.yaml", "retrievers.yaml", ".gitignore", "README.md", "dags/retrieval_eval.py",
                "dags/promote_baseline.py", "dags/knowledge_base_producer.py"):
        assert (root / rel).is_file(), rel
    assert "include" not in (root / "evalops.yaml").read_text() + (root / "retrievers.yaml").read_text()
    assert "handbook" not in (root / "retrievers.yaml").read_text()
    dag = (root / "dags" / "retrieval_eval.py").read_text()
    assert "from evalops.airflow.dags.retrieval_eval import retrieval_eval" in dag and len(dag.splitlines()) < 8
    again = runner.invoke(main, ["init", str(root)])
    assert again.exit_code != 0 and "exists already" in again.output

    from evalops.retrievers import load_registry

    registry = load_registry(root / "retrievers.yaml")
    assert sorted({e.adapter for e in registry}) == ["builtin", "http", "python", "run_file"]
    assert [e.key for e in registry.deployed()] == ["bm25@1.0"]


def _tiny_project(root):
    import json

    (root / "gold").mkdir()
    (root / "gold" / "queries.jsonl").write_text("".join(json.dumps({"_id": f"q{i}", "text": f"question {i}"}) + "\n"
                                                         for i in range(60)))  # the gold-set contract asks for 50 queries at least
    (root / "gold" / "qrels.tsv").write_text("query-id\tcorpus-id\tscore\n" + "".join(f"q{i}\td{i}\t1\n" for i in range(60)))
    (root / "corpus.jsonl").write_text("".join(json.dumps({"_id": f"d{i}", "title": "", "text": f"document {i}"}) + "\n"
                                               for i in range(60)))
    (root / "run.trec").write_text("".join(f"q{i} Q0 d{(i + j) % 60} {j + 1} {10 - j} t\n"
                                           for i in range(60) for j in range(4)))
    (root / "retrievers.yaml").write_text("retrievers:\n  - {name: s, version: '1', adapter: run_file, deployed: true, "
                                          f"owner: me, params: {{path: '{root / 'run.trec'}'}}}}\n")
    (root / "evalops.yaml").write_text("gold_set: {path: gold}\nknowledge_base: {path: corpus.jsonl}\n"
                                       "registry: retrievers.yaml\nmeasures: [nDCG@10]\nlog_sample_size: 0\n")
    return root


@pytest.mark.slow
def test_run_timings_print_every_step_and_the_total_on_stderr(tmp_path):
    result = CliRunner().invoke(main, ["run", "--project", str(_tiny_project(tmp_path)), "--date", "2024-06-01",
                                       "--timings", "-q"])
    assert result.exit_code == 0, result.output
    assert result.stdout == ""  # -q: nothing on stdout; the timings go to stderr
    lines = result.stderr.splitlines()
    start = lines.index(next(line for line in lines if line.startswith("timings (seconds):")))
    steps = [line.split("  ")[1].strip() if line.startswith("  ") else line for line in lines[start + 2:]]
    for step in ("starting: settings, registry check", "migrating the warehouse", "snapshotting the knowledge base",
                 "validating the gold set", "planning the run", "scoring", "comparing", "deciding and alerting",
                 "writing the report", "printing the results", "total"):
        assert any(s.startswith(step) for s in steps), (step, steps)
    for line in lines[start + 2:]:  # two numbers per row: wall and CPU seconds
        wall, cpu = line.split()[-2:]
        assert float(wall) >= 0 and float(cpu) >= 0
