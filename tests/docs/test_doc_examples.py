"""Every Python and ``evalops`` example in the README and in the documentation site runs.

The pages are read in the order a reader meets them: README.md, then the pages of ``mkdocs.yml``'s nav
(``docs/``). What counts as an example (fenced blocks, in that order):

* a ``python`` block: executed as a script, each in a fresh namespace (so it must import and define what
  it uses); a ``test_*`` function it defines is called too (the pytest-helper example);
* a ``bash`` / ``sh`` / ``shell`` / ``console`` block, or one without a language whose lines start with
  ``$ ``: every line (``\\`` continues it; ``$ `` prompts and ``# comments`` are dropped) whose command is
  ``evalops`` runs through the CLI, with any leading ``NAME=value`` assignments as its environment, and
  must exit 0; ``python SCRIPT ...`` lines run too (with this interpreter). Other commands (make, curl,
  docker, pip) are not run. In a block without a language, only the ``$ `` lines are commands;
* a ``yaml`` block holding a GitHub Actions workflow (``jobs:``): the ``evalops`` lines of its ``run:``
  steps, as for a shell block.

Usage syntax (``[--option]``, ``QRELS``) belongs in ``text`` blocks, which are not run.

A block is annotated by an HTML comment on the line before its opening fence (invisible on GitHub):

* ``<!-- docs-test: skip: needs Docker -->`` or ``<!-- docs-test: skip: needs a running API server -->``:
  not run. These are the only exemptions;
* ``<!-- docs-test: exit 3 -->``: the block's ``evalops`` commands must exit with that code (a documented
  failure).

All examples share one sandbox folder, in that order, so a later example sees what an earlier one
wrote (the gate's run is what ``history`` and ``promote`` read). The sandbox is the demo's project (this
repository's ``evalops.yaml``) and holds ``include/`` (the sample data), ``../shared`` (the real collections), ``rechunked/`` (the sample gold set with the
judged chunk ``err-ORDER-2024`` removed from its knowledge base, for the failing ``validate``) and
``kb.db`` (the sample knowledge base as a SQLite table ``chunks(id, body)``).
"""

from __future__ import annotations

import os
import re
import shlex
import shutil
import sqlite3
import subprocess
import sys
import traceback
from dataclasses import dataclass, field
from pathlib import Path

import pytest
import yaml

REPO = Path(__file__).resolve().parents[2]


def _nav_pages(node) -> list[str]:
    """The markdown files of a mkdocs nav, in reading order."""
    if isinstance(node, str):
        return [node] if node.endswith(".md") else []
    if isinstance(node, dict):
        return [page for value in node.values() for page in _nav_pages(value)]
    if isinstance(node, list):
        return [page for item in node for page in _nav_pages(item)]
    return []


def documented_pages() -> list[Path]:
    """README.md, then every page of the site's nav (the API pages hold no examples but are read too)."""
    site = yaml.safe_load((REPO / "mkdocs.yml").read_text(encoding="utf-8"))
    docs_dir = REPO / site.get("docs_dir", "docs")
    return [REPO / "README.md", *(docs_dir / page for page in _nav_pages(site["nav"]))]

FENCE = re.compile(r"^(?P<fence>`{3,}|~{3,})\s*(?P<lang>[\w+-]*)")
MARKER = re.compile(r"^<!--\s*docs-test:\s*(?P<directive>.*?)\s*-->$")
SHELL_LANGS = {"bash", "sh", "shell", "console", "zsh"}
SKIP_REASONS = ("needs Docker", "needs a running API server")
SHELL_SYNTAX = re.compile(r"[|;&<>`]|\$\(")

pytestmark = pytest.mark.slow


@dataclass
class Block:
    line: int  # of the opening fence
    lang: str
    text: str
    directive: str | None
    file: str = "README.md"  # relative to the repository

    @property
    def id(self) -> str:
        return f"{self.file}:{self.line}:{self.lang or 'plain'}"


@dataclass
class Outcome:
    ran: list[str] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)


def read_blocks(text: str, file: str = "README.md") -> list[Block]:
    """The fenced blocks of a markdown text, with the docs-test directive of the line above each."""
    lines = text.splitlines()
    blocks, i = [], 0
    while i < len(lines):
        match = FENCE.match(lines[i].strip())
        if not match or lines[i].startswith("    "):
            i += 1
            continue
        fence, lang, start = match["fence"], match["lang"].lower(), i
        body = []
        i += 1
        while i < len(lines) and not (lines[i].strip().startswith(fence[0] * len(fence))
                                      and not lines[i].strip().strip(fence[0])):
            body.append(lines[i])
            i += 1
        i += 1  # the closing fence (or the end of the file)
        prev = start - 1
        while prev >= 0 and not lines[prev].strip():
            prev -= 1
        marker = MARKER.match(lines[prev].strip()) if prev >= 0 else None
        blocks.append(Block(start + 1, lang, "\n".join(body), marker["directive"] if marker else None, file))
    return blocks


def shell_commands(text: str, prompts_only: bool) -> list[str]:
    """The command lines of a shell block: continuations joined, prompts stripped."""
    commands, pending = [], ""
    for raw in text.splitlines():
        line = raw.rstrip()
        if not pending:
            if line.startswith("$ "):
                line = line[2:]
            elif prompts_only:
                continue
        if line.endswith("\\"):
            pending += line[:-1] + " "
            continue
        commands.append((pending + line).strip())
        pending = ""
    if pending:
        commands.append(pending.strip())
    return [c for c in commands if c and not c.startswith("#")]


def workflow_commands(text: str) -> list[str]:
    try:
        workflow = yaml.safe_load(text)
    except yaml.YAMLError:
        return []
    if not isinstance(workflow, dict) or "jobs" not in workflow:
        return []
    commands = []
    for job in (workflow["jobs"] or {}).values():
        for step in job.get("steps", []):
            if isinstance(step, dict) and isinstance(step.get("run"), str):
                commands += shell_commands(step["run"], prompts_only=False)
    return commands


def _split(command: str) -> tuple[dict[str, str], list[str]]:
    words = shlex.split(command, comments=True)
    env = {}
    while words and re.fullmatch(r"[A-Z_][A-Z0-9_]*=.*", words[0]):
        name, _, value = words.pop(0).partition("=")
        env[name] = value
    return env, words


def _run_evalops(args: list[str], env: dict[str, str], expected: int, outcome: Outcome, where: str) -> None:
    from click.testing import CliRunner

    from evalops.cli import main

    result = CliRunner().invoke(main, args, env=env, catch_exceptions=True)
    outcome.ran.append(shlex.join(["evalops", *args]))
    if result.exit_code != expected:
        detail = result.output[-2000:]
        if result.exception is not None and not isinstance(result.exception, SystemExit):
            detail += "".join(traceback.format_exception(result.exception))[-2000:]
        outcome.problems.append(f"{where}: `evalops {shlex.join(args)}` exited {result.exit_code}, "
                                f"expected {expected}:\n{detail}")


def run_commands(commands: list[str], expected: int, outcome: Outcome, where: str, sandbox: Path) -> None:
    for command in commands:
        env, words = _split(command)
        if not words or words[0] not in ("evalops", "python", "python3"):
            continue
        if SHELL_SYNTAX.search(command.split("#")[0]):
            outcome.problems.append(f"{where}: `{command}` uses shell syntax; keep an example to one command")
            continue
        if words[0] == "evalops":
            _run_evalops(words[1:], env, expected, outcome, where)
        else:
            done = subprocess.run([sys.executable, *words[1:]], cwd=sandbox, env={**os.environ, **env},
                                  capture_output=True, text=True, timeout=300)
            outcome.ran.append(command)
            if done.returncode != 0:
                outcome.problems.append(f"{where}: `{command}` exited {done.returncode}:\n{done.stderr[-2000:]}")


def run_python(block: Block, outcome: Outcome) -> None:
    from evalops.metrics import registry

    namespace: dict[str, object] = {"__name__": "doc_example"}
    measures = dict(registry._TABLE)  # an example that registers a measure leaves the registry as it found it
    try:
        code = "\n" * (block.line) + block.text  # tracebacks name the page's own line numbers
        exec(compile(code, block.file, "exec"), namespace)  # noqa: S102 - the documentation's own examples
        for name, value in list(namespace.items()):
            if name.startswith("test_") and callable(value):
                value()
                outcome.ran.append(f"{name}()")
        outcome.ran.append("python block")
    except Exception:  # noqa: BLE001 - reported with the example's own line numbers
        outcome.problems.append(f"{block.id}: the example raised:\n{traceback.format_exc()[-3000:]}")
    finally:
        registry._TABLE.clear()
        registry._TABLE.update(measures)


def _sandbox(root: Path, shared_data: Path) -> Path:
    project = root / "project"
    project.mkdir()
    (project / "include").symlink_to(REPO / "include", target_is_directory=True)
    shutil.copy(REPO / "evalops.yaml", project / "evalops.yaml")  # the sandbox is the demo's project
    (root / "shared").symlink_to(shared_data.parent, target_is_directory=True)
    rechunked = project / "rechunked"
    shutil.copytree(REPO / "include" / "goldset", rechunked, symlinks=False)
    corpus = rechunked / "corpus.jsonl"
    kept = [line for line in corpus.read_text(encoding="utf-8").splitlines() if '"_id":"err-ORDER-2024"' not in line]
    corpus.unlink()
    corpus.write_text("\n".join(kept) + "\n", encoding="utf-8")
    import json

    with sqlite3.connect(project / "kb.db") as db:
        db.execute("CREATE TABLE chunks (id TEXT PRIMARY KEY, body TEXT NOT NULL)")
        for line in (REPO / "include" / "knowledge_base" / "corpus.jsonl").read_text(encoding="utf-8").splitlines():
            doc = json.loads(line)
            db.execute("INSERT INTO chunks VALUES (?, ?)", (doc["_id"], doc.get("text", "")))
    return project


BLOCKS = [block for page in documented_pages()
          for block in read_blocks(page.read_text(encoding="utf-8"), str(page.relative_to(REPO)))]


def _runnable(commands: list[str]) -> bool:
    for command in commands:
        try:
            words = _split(command)[1]
        except ValueError:
            continue
        if words and words[0] in ("evalops", "python", "python3"):
            return True
    return False


def _kind(block: Block) -> str | None:
    """python, shell, transcript or workflow; None for a block that holds no evalops or Python example."""
    if block.lang in ("python", "py"):
        return "python"
    if block.lang in SHELL_LANGS and _runnable(shell_commands(block.text, prompts_only=False)):
        return "shell"
    if not block.lang and _runnable(shell_commands(block.text, prompts_only=True)):
        return "transcript"
    if block.lang in ("yaml", "yml") and _runnable(workflow_commands(block.text)):
        return "workflow"
    return None


EXAMPLES = [b for b in BLOCKS if _kind(b)]


@pytest.fixture(scope="module")
def outcomes(tmp_path_factory, shared_data):
    """Run every example once, in reading order, in one sandbox; the outcome of each block by id."""
    project = _sandbox(tmp_path_factory.mktemp("docs"), shared_data)
    cleared = {k: None for k in os.environ if k.startswith(("EVALOPS_", "AIRFLOW_CONN_EVALOPS"))}
    cleared.pop("EVALOPS_SHARED_DATA", None)
    results: dict[str, Outcome] = {}
    previous = Path.cwd()
    saved = {k: os.environ.pop(k) for k in cleared}
    os.chdir(project)
    try:
        for block in EXAMPLES:
            outcome = results[block.id] = Outcome()
            directive = block.directive or ""
            if directive.startswith("skip"):
                continue
            expected = int(directive.split()[1]) if directive.startswith("exit") else 0
            kind = _kind(block)
            if kind == "python":
                run_python(block, outcome)
            else:
                commands = (workflow_commands(block.text) if kind == "workflow"
                            else shell_commands(block.text, prompts_only=kind == "transcript"))
                run_commands(commands, expected, outcome, block.id, project)
    finally:
        os.chdir(previous)
        os.environ.update(saved)
    return results


@pytest.mark.parametrize("block", EXAMPLES, ids=[b.id for b in EXAMPLES])
def test_doc_example_runs(block, outcomes):
    directive = block.directive or ""
    if directive.startswith("skip"):
        reason = directive.partition(":")[2].strip()
        assert reason in SKIP_REASONS, (
            f"{block.id}: only examples that need Docker or a running API server are exempt "
            f"(<!-- docs-test: skip: {SKIP_REASONS[0]} --> or ... {SKIP_REASONS[1]}); got {directive!r}")
        pytest.skip(f"exempt: {reason}")
    outcome = outcomes[block.id]
    assert not outcome.problems, "\n\n".join(outcome.problems)
    assert outcome.ran, f"{block.id}: nothing in this block ran"


def test_directives_are_known():
    for block in BLOCKS:
        directive = block.directive
        if directive is not None:
            assert re.fullmatch(r"skip: .+|exit \d+", directive), f"{block.id}: unknown directive {directive!r}"


def test_the_extraction_itself():
    text = "\n".join([
        "<!-- docs-test: exit 3 -->", "", "```bash", "A=1 evalops x \\", "  --y 2   # note", "make demo", "```",
        "```", "$ evalops z", "output line", "```", "```text", "evalops QRELS [--x]", "```",
    ])
    first, second, third = read_blocks(text)
    assert (first.line, first.lang, first.directive) == (3, "bash", "exit 3")
    assert shell_commands(first.text, prompts_only=False) == ["A=1 evalops x    --y 2   # note", "make demo"]
    assert _split("A=1 evalops x   --y 2   # note") == ({"A": "1"}, ["evalops", "x", "--y", "2"])
    assert shell_commands(second.text, prompts_only=True) == ["evalops z"] and second.directive is None
    assert _kind(third) is None and _kind(Block(1, "bash", "make demo\ncurl x", None)) is None
    assert first.id == "README.md:3:bash" and read_blocks(text, "docs/cli.md")[0].id == "docs/cli.md:3:bash"


def test_every_page_of_the_site_is_read():
    pages = documented_pages()
    assert pages[0].name == "README.md" and all(page.is_file() for page in pages), pages
    nav_free = {p.relative_to(REPO).as_posix() for p in (REPO / "docs").rglob("*.md")} - {
        p.relative_to(REPO).as_posix() for p in pages}
    assert not nav_free, f"pages outside mkdocs.yml's nav are neither built nor tested: {sorted(nav_free)}"
    assert len({b.file for b in EXAMPLES}) > 5  # the examples are spread over the pages, not only the README
