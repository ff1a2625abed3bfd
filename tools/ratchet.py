"""The type-check and lint ratchet: mypy's and ruff's findings, counted per file, may only shrink.

``typecheck-ratchet.json`` (at the root) records, for each tool, how many findings each file still has. A run
counts them again and fails when a file has more than recorded, or when a file that is not recorded has any
(new code starts clean). A file whose count went down passes, and the run says so: record the lower number with
``--update`` so that it cannot grow back.

    python tools/ratchet.py            # check (what `make test` runs before pytest)
    python tools/ratchet.py --update   # record lower counts; refuses to record a higher one
    python tools/ratchet.py --update --accept-growth   # after a new rule or stub package: record what is found

The tools read their settings from ``mypy.ini`` and ``ruff.toml``; the interpreter running this script must have
both installed (the ``dev`` extra).
"""

from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
RATCHET_FILE = ROOT / "typecheck-ratchet.json"
TOOLS = ("mypy", "ruff")

# `path:line: error: message  [code]` (mypy's one-line format; notes are not findings)
_MYPY_LINE = re.compile(r"^(?P<path>[^:\n]+\.pyi?):(?P<line>\d+): error: (?P<text>.*)$")

Counts = dict[str, dict[str, int]]  # tool -> file (relative, POSIX) -> findings


@dataclass(frozen=True)
class Finding:
    tool: str
    path: str
    line: int
    text: str


@dataclass(frozen=True)
class Change:
    """One file whose count differs from the recorded one."""

    tool: str
    path: str
    recorded: int
    found: int

    @property
    def grew(self) -> bool:
        return self.found > self.recorded


def run_mypy(root: Path, args: Sequence[str] = ()) -> list[Finding]:
    """mypy's errors over the files its config names (``mypy.ini`` in ``root``)."""
    cmd = [sys.executable, "-m", "mypy", "--no-pretty", "--no-error-summary", "--show-error-codes",
           "--hide-error-context", "--no-color-output", *args]
    proc = subprocess.run(cmd, cwd=root, capture_output=True, text=True, check=False)
    if proc.returncode not in (0, 1):  # 2: mypy itself failed (bad config, a crash)
        raise SystemExit(f"mypy failed to run (exit {proc.returncode}):\n{proc.stdout}{proc.stderr}")
    findings = []
    for line in proc.stdout.splitlines():
        m = _MYPY_LINE.match(line)
        if m:
            findings.append(Finding("mypy", _relative(m["path"], root), int(m["line"]), m["text"]))
    if proc.returncode == 1 and not findings:
        raise SystemExit(f"mypy failed but printed no error this script can read:\n{proc.stdout}{proc.stderr}")
    return findings


def run_ruff(root: Path, args: Sequence[str] = (".",)) -> list[Finding]:
    """ruff's findings (``ruff.toml`` in ``root``)."""
    cmd = [sys.executable, "-m", "ruff", "check", "--output-format", "json", "--no-cache", *args]
    proc = subprocess.run(cmd, cwd=root, capture_output=True, text=True, check=False)
    if proc.returncode not in (0, 1):
        raise SystemExit(f"ruff failed to run (exit {proc.returncode}):\n{proc.stdout}{proc.stderr}")
    return [Finding("ruff", _relative(item["filename"], root), int(item["location"]["row"]),
                    f"{item['code']} {item['message']}") for item in json.loads(proc.stdout or "[]")]


def _relative(path: str, root: Path) -> str:
    p = Path(path)
    if p.is_absolute():
        p = p.resolve().relative_to(root.resolve())
    return p.as_posix()


def count(findings: Sequence[Finding]) -> Counts:
    counts: Counts = {tool: {} for tool in TOOLS}
    for (tool, path), n in sorted(Counter((f.tool, f.path) for f in findings).items()):
        counts.setdefault(tool, {})[path] = n
    return counts


def compare(recorded: Mapping[str, Mapping[str, int]], found: Mapping[str, Mapping[str, int]]) -> list[Change]:
    """Every file whose count differs from the record (a file missing from the record has 0)."""
    changes = []
    for tool in sorted(set(recorded) | set(found)):
        was, now = recorded.get(tool, {}), found.get(tool, {})
        for path in sorted(set(was) | set(now)):
            if was.get(path, 0) != now.get(path, 0):
                changes.append(Change(tool, path, was.get(path, 0), now.get(path, 0)))
    return changes


def load(path: Path = RATCHET_FILE) -> Counts:
    if not path.exists():
        return {tool: {} for tool in TOOLS}
    data = json.loads(path.read_text(encoding="utf-8"))
    return {tool: {str(k): int(v) for k, v in data.get(tool, {}).items()} for tool in TOOLS}


def save(counts: Mapping[str, Mapping[str, int]], path: Path = RATCHET_FILE) -> None:
    data = {tool: {p: n for p, n in sorted(counts.get(tool, {}).items()) if n} for tool in TOOLS}
    path.write_text(json.dumps(data, indent=1, sort_keys=True) + "\n", encoding="utf-8")


def report(changes: Sequence[Change], findings: Sequence[Finding]) -> str:
    """What grew (with the findings of those files) and what shrank, and what to do about each."""
    lines = []
    grew = [c for c in changes if c.grew]
    shrank = [c for c in changes if not c.grew]
    for c in grew:
        lines.append(f"{c.tool}: {c.path}: {c.found} findings, {c.recorded} allowed")
        for f in findings:
            if f.tool == c.tool and f.path == c.path:
                lines.append(f"    {f.path}:{f.line}: {f.text}")
    if grew:
        lines.append("Fix the findings above (new code starts with none). To see them yourself: "
                     "`python -m mypy` and `python -m ruff check .` (settings in mypy.ini and ruff.toml).")
    if shrank:
        lines.append(f"{len(shrank)} file(s) now have fewer findings than recorded:")
        lines.extend(f"    {c.tool}: {c.path}: {c.recorded} -> {c.found}" for c in shrank)
        lines.append("Record the lower counts so they cannot grow back: python tools/ratchet.py --update")
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--update", action="store_true", help="record the counts found (only if none grew)")
    parser.add_argument("--accept-growth", action="store_true",
                        help="with --update: record the counts even where they grew (a new rule, a new stub package)")
    parser.add_argument("--ratchet-file", type=Path, default=RATCHET_FILE)
    parser.add_argument("--root", type=Path, default=ROOT, help="where mypy.ini and ruff.toml are")
    opts = parser.parse_args(argv)

    findings = [*run_mypy(opts.root), *run_ruff(opts.root)]
    found = count(findings)
    changes = compare(load(opts.ratchet_file), found)
    text = report(changes, findings)
    if text:
        print(text)
    if any(c.grew for c in changes) and not (opts.update and opts.accept_growth):
        print(f"ratchet: FAILED ({sum(c.grew for c in changes)} file(s) have more findings than "
              f"{opts.ratchet_file.name} allows)")
        return 1
    if opts.update:
        save(found, opts.ratchet_file)
        print(f"ratchet: recorded {opts.ratchet_file.name}")
    totals = ", ".join(f"{tool} {sum(found.get(tool, {}).values())}" for tool in TOOLS)
    print(f"ratchet: ok ({totals} findings, none above the record)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
