"""docs/cli.md's GitHub Actions example: the YAML parses, and it is the workflow the page describes.

The main branch runs ``evalops run`` and promotes; a pull request only compares, in pull-request mode, with
no secret but the (read-only) warehouse URL. Every ``evalops`` line of its ``run:`` steps goes through the
command line's own parser (click's ``make_context``: options, choices and callbacks, without running the
command), so a renamed or removed flag fails here.
"""

from __future__ import annotations

import re
import shlex
from pathlib import Path

import click
import yaml

from evalops.cli import main

PAGE = Path(__file__).resolve().parents[2] / "docs" / "cli.md"


def _workflow() -> dict:
    text = PAGE.read_text(encoding="utf-8")
    section = text[text.index("\n## GitHub Actions\n"):]
    block = re.search(r"```yaml\n(.*?)\n```", section, re.S)
    assert block, "no yaml block under ## GitHub Actions"
    return yaml.safe_load(block[1])


def _evalops_lines(job: dict) -> list[list[str]]:
    lines = []
    for step in job["steps"]:
        for line in str(step.get("run", "")).splitlines():
            words = shlex.split(line, comments=True)
            if words and words[0] == "evalops":
                lines.append(words[1:])
    return lines


def _parse(args: list[str]) -> tuple[str, dict]:
    """The sub-command and its parameters as the command line reads them (nothing runs)."""
    with main.make_context("evalops", list(args), resilient_parsing=False) as ctx:
        name, command, rest = main.resolve_command(ctx, list(args))
        assert command is not None, args
        with command.make_context(name, rest, parent=ctx) as sub:
            return name, sub.params


def test_the_example_parses_and_each_evalops_line_is_a_valid_command_line():
    workflow = _workflow()
    triggers = workflow.get("on", workflow.get(True))  # YAML 1.1 reads a bare `on` as true
    assert set(triggers) == {"push", "pull_request"} and triggers["push"]["branches"] == ["main"]
    jobs = workflow["jobs"]
    parsed = {name: [_parse(words) for words in _evalops_lines(job)] for name, job in jobs.items()}
    assert parsed["main"] and parsed["pull-request"], parsed

    # the main branch stores its run, then promotes
    assert [name for name, _ in parsed["main"]] == ["run", "promote"]
    run = parsed["main"][0][1]
    assert run["fail_on_regression"] and not run["pull_request"] and run["junit_xml"] is not None
    assert parsed["main"][1][1]["reason"]
    assert jobs["main"]["if"] == "github.event_name == 'push'"

    # a pull request only compares, in pull-request mode, and keeps its summary
    assert [name for name, _ in parsed["pull-request"]] == ["gate"]
    gate = parsed["pull-request"][0][1]
    assert gate["pull_request"] and gate["summary_md"] == Path("gate.md") and gate["junit_xml"] is not None
    assert not gate["allow_local"]  # a fork's empty URL must fail closed (exit 3), not gate on nothing
    assert jobs["pull-request"]["if"] == "github.event_name == 'pull_request'"
    secrets = [value for value in jobs["pull-request"]["env"].values() if "secrets." in str(value)]
    assert list(jobs["pull-request"]["env"]) == ["EVALOPS_WAREHOUSE_URL"] and len(secrets) == 1
    uploads = [s for s in jobs["pull-request"]["steps"] if "upload-artifact" in str(s.get("uses", ""))]
    assert uploads and "gate.md" in uploads[0]["with"]["path"] and ".evalops/pr/" in uploads[0]["with"]["path"]


def test_a_flag_that_does_not_exist_is_caught():
    """The check itself: an unknown option is click's usage error, not a pass."""
    try:
        _parse(["gate", "--pull-requests"])
    except click.UsageError as exc:
        assert "--pull-requests" in str(exc)
    else:
        raise AssertionError("an unknown flag parsed")
