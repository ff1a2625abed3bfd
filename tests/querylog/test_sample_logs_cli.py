"""`evalops sample-logs`."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from click.testing import CliRunner

from evalops.cli import main
from evalops.exitcodes import ExitCode

pytestmark = pytest.mark.slow


def invoke(*args: str):
    return CliRunner().invoke(main, ["sample-logs", *args])


def test_sample_logs_writes_a_reproducible_sample(log_dir: Path, tmp_path: Path) -> None:
    args = ["--date", "2025-03-05", "--logs", str(log_dir), "--version", "handbook-search@1.0", "--version", "handbook-search@2.0-hybrid",
            "--size", "120", "--no-docs"]
    first = invoke(*args, "-o", str(tmp_path / "a"))
    assert first.exit_code == 0, first.output
    assert "query log contract passed" in first.output
    distinct = int(re.search(r"(\d+) distinct queries \(fixed size 120\)", first.output).group(1))
    assert 120 <= distinct <= 130
    second = invoke(*args, "-o", str(tmp_path / "b"), "--format", "json")
    assert second.exit_code == 0
    manifest = json.loads(second.output)
    assert manifest["sampled_queries"] == distinct <= manifest["sampled_units"] and manifest["logical_date"] == "2025-03-05"
    for name in ("sample.jsonl", "queries.jsonl", "weak_qrels.tsv", "annotation_queue.csv", "manifest.json"):
        assert (tmp_path / "a" / name).read_bytes() == (tmp_path / "b" / name).read_bytes(), name


def test_invalid_window_is_bad_input_and_writes_nothing(log_dir: Path, tmp_path: Path) -> None:
    result = invoke("--date", "2025-03-05", "--logs", str(log_dir), "--version", "handbook-search@1.0", "-o", str(tmp_path / "out"), "--no-docs")
    assert result.exit_code == ExitCode.BAD_INPUT
    assert "known retriever versions" in result.output
    assert not (tmp_path / "out").exists()


def test_usage_errors(log_dir: Path, tmp_path: Path) -> None:
    result = invoke("--date", "2025-03-05", "--version", "v", "-o", str(tmp_path))
    assert result.exit_code == ExitCode.USAGE and "exactly one of --logs" in result.output
    result = invoke("--date", "2025-01-01", "--logs", str(log_dir), "--version", "v", "-o", str(tmp_path))
    assert result.exit_code == ExitCode.BAD_INPUT and "no log partition" in result.output
