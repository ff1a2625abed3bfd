"""`evalops snapshot`: id, diff, manifest, optional validation."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from evalops.cli import main
from evalops.exitcodes import ExitCode


def test_snapshot_diff_and_manifest(repo_root: Path, tmp_path: Path) -> None:
    corpus = repo_root / "include" / "knowledge_base" / "corpus.jsonl"
    runner = CliRunner()
    result = runner.invoke(main, ["snapshot", str(corpus), "--save-manifest", str(tmp_path / "m.json")])
    assert result.exit_code == 0, result.output
    assert "213 documents" in result.output and (tmp_path / "m.json").is_file()
    edited = tmp_path / "corpus.jsonl"
    lines = corpus.read_text(encoding="utf-8").splitlines()
    edited.write_text("\n".join(lines[1:]) + "\n", encoding="utf-8")
    result = runner.invoke(main, ["snapshot", str(edited), "--diff", str(tmp_path / "m.json"), "--format", "json"])
    assert result.exit_code == 0, result.output
    payload = json.loads(result.output)
    assert payload["diff"]["removed"] == ["travel-01"] and payload["diff"]["added"] == []


@pytest.mark.slow
def test_snapshot_validate_flag(tmp_path: Path) -> None:
    (tmp_path / "corpus.jsonl").write_text('{"_id": "a", "text": "  "}\n')
    result = CliRunner().invoke(main, ["snapshot", str(tmp_path), "--validate", "--no-docs"])
    assert result.exit_code == ExitCode.BAD_INPUT
    assert "non-empty document text" in result.output


def test_missing_source_is_a_clear_error(tmp_path: Path) -> None:
    result = CliRunner().invoke(main, ["snapshot", str(tmp_path / "nope")])
    assert result.exit_code == ExitCode.BAD_INPUT and "no such file" in result.output
