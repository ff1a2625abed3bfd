"""`evalops validate`: exit 0 valid, 3 (bad input) invalid, with the summary printed."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

from evalops.cli import main
from evalops.exitcodes import ExitCode

pytestmark = pytest.mark.slow


def run(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(main, ["validate", *args])
    return result.exit_code, result.output


def test_default_is_the_projects_gold_set(repo_root: Path, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.chdir(repo_root / "include")  # any folder of the project finds it
    code, out = run("--docs-dir", str(tmp_path / "docs"))
    assert code == 0, out
    assert "knowledge base contract passed" in out and "gold set contract passed" in out
    assert (tmp_path / "docs" / "index.html").is_file()


def test_a_plain_beir_folder_validates_without_flags(shared_data: Path) -> None:
    code, out = run(str(shared_data / "scifact"), "--no-docs")
    assert code == 0, out
    assert "not applicable: each query type present (no query types)" in out
    code, out = run(str(shared_data / "scifact"), "--no-docs", "--default-type", "semantic",
                    "--require-type", "semantic", "--no-answer-share", "0", "0.3")
    assert code == 0, out
    code, out = run(str(shared_data / "scifact"), "--no-docs", "--default-type", "semantic")
    assert code == ExitCode.BAD_INPUT and "each query type present" in out


def test_outside_a_project_it_says_how_to_make_one(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("EVALOPS_HOME", raising=False)
    code, out = run()
    assert code != 0 and "no evalops project here" in out and "evalops init" in out


def test_stale_judgment_is_bad_input_and_names_it(repo_root: Path, tmp_path: Path) -> None:
    folder = tmp_path / "gold"
    shutil.copytree(repo_root / "include" / "goldset", folder, symlinks=False)
    corpus = folder / "corpus.jsonl"
    lines = [line for line in corpus.read_text(encoding="utf-8").splitlines() if '"_id":"err-ORDER-2024"' not in line]
    corpus.unlink()
    corpus.write_text("\n".join(lines) + "\n", encoding="utf-8")
    code, out = run(str(folder), "--no-docs")
    assert code == ExitCode.BAD_INPUT
    assert "every judged doc exists in the knowledge-base snapshot" in out and "'err-ORDER-2024'" in out


def test_json_output(repo_root: Path) -> None:
    code, out = run(str(repo_root / "include" / "goldset"), "--no-docs", "--format", "json", "--min-queries", "100")
    assert code == ExitCode.BAD_INPUT
    payload = json.loads(out)
    assert payload["ok"] is False
    gold = payload["reports"][1]
    assert [f["rule"] for f in gold["failures"]] == ["minimum number of queries"]
    assert gold["failures"][0]["observed"] == 86
    assert len(payload["gold_set_version"]) == 16


def test_missing_corpus_is_a_usage_error(tmp_path: Path) -> None:
    (tmp_path / "qrels.tsv").write_text("query-id\tcorpus-id\tscore\n")
    code, out = run(str(tmp_path))
    assert code == ExitCode.USAGE and "--corpus" in out
