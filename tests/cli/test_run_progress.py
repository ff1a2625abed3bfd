"""``evalops run`` and ``gate`` show their steps on stderr: plain lines when stderr is not a terminal (a CI
log), one live line on a terminal, nothing with ``-q``; stdout keeps only the result."""

from __future__ import annotations

import pytest
from click.testing import CliRunner

from evalops.cli import main
from tests.cli.test_gate import DAY1, DAY2, _registry, project_env

pytestmark = pytest.mark.slow

STEPS = ("  migrating the warehouse ...", "  validating the gold set ...", "  scoring handbook-search@1.0 gold (1/1) ...",
         "  comparing handbook-search@1.0 gold (1/1) ...", "  deciding and alerting ...", "  writing the report ...")


def test_piped_the_steps_are_plain_lines_on_stderr(tmp_path):
    result = CliRunner().invoke(main, ["run", "--date", DAY1], env=project_env(tmp_path))
    assert result.exit_code == 0, result.output
    lines = result.stderr.splitlines()
    assert [line for line in lines if line in STEPS] == list(STEPS)  # each step once, in order
    assert not any(step.strip(" .") in result.stdout for step in STEPS)
    assert result.stdout.startswith("gold set gold")


def test_the_versions_are_counted(tmp_path):
    env = project_env(tmp_path)
    env["EVALOPS_REGISTRY"] = _registry(tmp_path / "two.yaml", {"1.0", "2.0-hybrid"})
    result = CliRunner().invoke(main, ["gate", "--date", DAY2, "--junit-xml", str(tmp_path / "j.xml")], env=env)
    assert result.exit_code == 0, result.output
    assert "  scoring handbook-search@1.0 gold (1/2) ..." in result.stderr.splitlines()
    assert "  scoring handbook-search@2.0-hybrid gold (2/2) ..." in result.stderr.splitlines()
    assert "  comparing handbook-search@2.0-hybrid gold (2/2) ..." in result.stderr.splitlines()


def test_quiet_shows_no_step(tmp_path):
    result = CliRunner().invoke(main, ["run", "--date", DAY1, "-q"], env=project_env(tmp_path))
    assert result.exit_code == 0, result.output
    assert result.stdout == "" and not any(step in result.stderr for step in STEPS)


def test_on_a_terminal_the_steps_are_one_live_line(tmp_path, monkeypatch):
    """No plain line per step on a terminal (rich's transient line replaces each step with the next)."""
    from evalops.cli import _common

    shown = []

    class Line:  # rich's Progress, recorded: what the live line showed
        def __init__(self, *columns, **kwargs):
            self.console = type("C", (), {"print": lambda _self, text, **kw: shown.append(("note", text))})()

        def __enter__(self):
            return self

        def __exit__(self, *exc):
            return False

        def add_task(self, description, total=None):
            shown.append(("line", description))
            return 0

        def update(self, task, description):
            shown.append(("line", description))

    monkeypatch.setattr(_common, "stderr_is_terminal", lambda: True)
    monkeypatch.setattr(_common, "_live", Line)
    result = CliRunner().invoke(main, ["run", "--date", DAY1], env=project_env(tmp_path))
    assert result.exit_code == 0, result.output
    assert not any(step in result.stderr for step in STEPS)
    lines = [text for kind, text in shown if kind == "line"]
    assert lines[0] == "evalops run" and "evalops run: scoring handbook-search@1.0 gold (1/1)" in lines
    assert lines[-1] == "evalops run: writing the report"
