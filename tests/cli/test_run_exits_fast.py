"""``evalops run`` started from the command line ends without the interpreter's shutdown (``exits_fast``):
the exit code, stdout, stderr, the report and the warehouse are what the ordinary exit gives; under click's
test runner (arguments passed in) the command returns as before and the calling process goes on."""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
from pathlib import Path

from click.testing import CliRunner

from evalops.cli import _common, main
from evalops.exitcodes import ExitCode

ROOT = Path(__file__).resolve().parents[2]
INCLUDE = ROOT / "include"
SETTINGS = f"""\
gold_set:
  path: {INCLUDE / "goldset"}
knowledge_base:
  path: {INCLUDE / "knowledge_base"}
registry: retrievers.yaml
measures: [nDCG@10, P@5]
log_sample_size: 0
"""


def _project(tmp_path: Path, settings: str = SETTINGS) -> Path:
    (tmp_path / "evalops.yaml").write_text(settings, encoding="utf-8")
    (tmp_path / "retrievers.yaml").write_text((INCLUDE / "retrievers.yaml").read_text(encoding="utf-8"),
                                              encoding="utf-8")
    return tmp_path


def _cli(project: Path, *args: str) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if not k.startswith("EVALOPS_")}
    env["PYTHONPATH"] = str(ROOT) + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    return subprocess.run([sys.executable, "-c", "import sys; from evalops.cli import main; sys.exit(main())", *args],
                          cwd=project, env=env, capture_output=True, text=True, timeout=600, check=False)


def test_a_run_from_the_command_line_keeps_its_output_files_and_exit_code(tmp_path):
    project = _project(tmp_path)
    done = _cli(project, "run", "--date", "2024-06-01", "--json", "--timings")
    assert done.returncode == 0, done.stderr[-3000:]
    result = json.loads(done.stdout)  # the whole JSON document reached the pipe
    assert Path(result["report"]).is_file()
    assert "timings (seconds):" in done.stderr and "total" in done.stderr  # stderr flushed too
    with sqlite3.connect(project / ".evalops" / "warehouse.db") as conn:  # committed, readable, not locked
        runs = conn.execute("SELECT count(*), min(status), max(status) FROM eval_runs").fetchone()
    assert runs[0] >= 1 and runs[1] == runs[2] == "succeeded", runs


def test_an_error_keeps_its_exit_code_and_message(tmp_path):
    project = _project(tmp_path, SETTINGS.replace("[nDCG@10, P@5]", "['nDCG@-1']"))
    done = _cli(project, "run", "--date", "2024-06-01")
    assert done.returncode == ExitCode.BAD_INPUT, done.stderr
    assert done.stderr.startswith("error: ") and "malformed measure 'nDCG@-1'" in done.stderr


def test_under_the_test_runner_the_command_returns(tmp_path, monkeypatch):
    project = _project(tmp_path, SETTINGS.replace("[nDCG@10, P@5]", "['nDCG@-1']"))
    for name in list(os.environ):
        if name.startswith("EVALOPS_"):
            monkeypatch.delenv(name)
    monkeypatch.chdir(project)
    result = CliRunner().invoke(main, ["run", "--date", "2024-06-01"])
    assert result.exit_code == ExitCode.BAD_INPUT  # this process is still here to read it
    assert _common.OWNS_PROCESS is False


def test_steps_freeze_the_survivors_only_in_a_process_of_its_own(monkeypatch):
    said: list[str] = []
    say = said.append
    assert _common.frozen_at_each_step(say) is say  # a caller's process: left alone
    monkeypatch.setattr(_common, "OWNS_PROCESS", True)
    frozen = []
    monkeypatch.setattr(_common.gc, "freeze", lambda: frozen.append(True))
    _common.frozen_at_each_step(say)("scoring x")
    assert said == ["scoring x"] and frozen == [True]


def test_a_thread_still_working_takes_the_ordinary_exit():
    import threading

    release = threading.Event()
    worker = threading.Thread(target=release.wait, daemon=False)
    worker.start()
    try:
        try:
            _common._exit_now(6)  # would end this process if it did not see the thread
        except SystemExit as exc:
            assert exc.code == 6
        else:  # pragma: no cover
            raise AssertionError("no SystemExit")
    finally:
        release.set()
        worker.join()
