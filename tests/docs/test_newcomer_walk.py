"""The README's tour and the own-data walk, run as a newcomer runs them, in a temporary folder, checking
what each command prints (not only its exit code, which ``test_doc_examples`` checks): scores after
``evaluate``, decisions after ``compare``, each version's measures after ``run``, a measure column in
``history -m``. The commands are read from the pages themselves, so the pages and this test cannot drift.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest
from click.testing import CliRunner

from evalops.cli import main
from tests.docs.test_doc_examples import REPO, _split, read_blocks, shell_commands

pytestmark = pytest.mark.slow


def _commands(page: str, start: str | None = None, end: str | None = None) -> list[list[str]]:
    """The ``evalops`` commands of the page's shell blocks (between the markers when given), as words."""
    text = (REPO / page).read_text(encoding="utf-8")
    if start is not None:
        text = text[text.index(start):text.index(end)]
    commands = []
    for block in read_blocks(text, page):
        if block.lang in ("bash", "sh", "shell"):
            for command in shell_commands(block.text, prompts_only=False):
                words = _split(command)[1]
                if words and words[0] == "evalops":
                    commands.append(words[1:])
    return commands


TOUR = _commands("README.md", "<!-- --8<-- [start:tour] -->", "<!-- --8<-- [end:tour] -->")
OWN_DATA = _commands("docs/own-data.md", "## A project of your own", "## Data contracts")


def _expect(args: list[str], out: str, folder: Path) -> None:
    """What a newcomer must see after each command."""
    command = args[0]
    if command == "evaluate":
        for name in [a for prev, a in zip(args, args[1:]) if prev == "-m"]:
            assert re.search(rf"^ {re.escape(name)} +│ 0\.\d{{4}} │", out, re.M), (name, out)  # as asked (MRR)
    elif command == "compare":
        assert "decision" in out.lower() and re.search(r"[-+]0\.\d{4}", out), out
    elif command == "power":
        assert "90" in out, out
    elif command == "init":
        assert "wrote evalops.yaml" in out and "set gold_set.path" not in out, out
    elif command == "validate":
        assert "gold set contract passed" in out and "knowledge base contract passed" in out, out
    elif command == "run":
        assert "gold set gold" in out, out
        header = next(line for line in out.splitlines() if "measure" in line)
        assert all(h in header for h in ("version", "measure", "mean", "delta", "decision interval", "decision"))
        assert re.search(r"bm25 1\.0 +│ nDCG@10 +│ 0\.6762 │", out), out
        assert "no baseline yet" in out and "no alerts" in out and "report: " in out, out
        # the step carries the --project the walk gave, so it works when copied from the same folder
        given = "".join(f" --project {a}" for prev, a in zip(args, args[1:]) if prev == "--project")
        assert f"bm25 has no baseline yet: promote one (`evalops promote bm25 1.0{given} --reason" in out, out
    elif command == "history" and ("-m" in args or "--measure" in args):
        header = out.splitlines()[0]
        assert "retriever" in header and "measure" in header and "mean" in header, out
        assert re.search(r"│ bm25 +│ 1\.0 .*│ nDCG@10 +│ 300 │ 0\.6762 │", out), out
    elif command == "history":
        assert "bm25" in out and "succeeded" in out, out
        assert all(m in out.splitlines()[0] for m in ("nDCG@10", "RR@10", "R@100")), out  # each run's means
        assert "0.6762" in out, out
    elif command == "report":
        assert out.startswith("# evalops run report") and "nDCG@10" in out, out
    elif command == "promote":
        assert "bm25: baseline is now 1.0" in out, out
    elif command == "dashboard":
        export = Path(args[args.index("--export") + 1])
        assert (folder / export / "index.html").is_file(), out
    else:
        raise AssertionError(f"no expectation for `evalops {' '.join(args)}`; add one")


@pytest.mark.parametrize("page, commands", [("README.md", TOUR), ("docs/own-data.md", OWN_DATA)],
                         ids=["readme-tour", "own-data-walk"])
def test_each_command_of_the_walk_prints_what_the_newcomer_needs(page, commands, tmp_path, shared_data, monkeypatch):
    assert any(c[0] == "run" for c in commands) and any(c[0] == "init" for c in commands)
    checkout = tmp_path / "checkout"  # the walk runs from a checkout beside ../shared
    checkout.mkdir()
    (tmp_path / "shared").symlink_to(shared_data.parent, target_is_directory=True)
    for key in list(os.environ):
        if key.startswith(("EVALOPS_", "AIRFLOW_CONN_EVALOPS")) and key != "EVALOPS_SHARED_DATA":
            monkeypatch.delenv(key)
    monkeypatch.chdir(checkout)
    monkeypatch.setenv("PWD", str(checkout))
    for args in commands:
        result = CliRunner().invoke(main, args, catch_exceptions=False)
        assert result.exit_code == 0, (page, args, result.output)
        _expect(args, result.stdout, checkout)
    # everything the walk wrote is in the folders the checkout's .gitignore lists
    ignored = {line.strip().strip("/") for line in (REPO / ".gitignore").read_text().splitlines()}
    assert {p.name for p in checkout.iterdir()} <= ignored, sorted(p.name for p in checkout.iterdir())
