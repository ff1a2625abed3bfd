"""evalops.retrievers.preflight: what a deployed version needs (an extra's library, a run file) is checked
before a run writes anything, and `evalops validate` checks it too."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from evalops.cli import main
from evalops.errors import ConfigError
from evalops.exitcodes import ExitCode
from evalops.retrievers import load_registry
from evalops.retrievers.preflight import check_entries
from evalops.util.extras import MissingExtraError

INCLUDE = Path(__file__).resolve().parents[2] / "include"
BM25 = """\
  - name: lexical
    version: "1"
    adapter: builtin
    deployed: true
    owner: me
    params: {kind: bm25}
"""
RUN_FILE = """\
  - name: mine
    version: "run"
    adapter: run_file
    deployed: true
    owner: me
    params: {path: runs/mine.trec}
"""
HYBRID = """\
  - name: fused
    version: "1"
    adapter: builtin
    deployed: true
    owner: me
    params:
      kind: hybrid
      retrievers: [{kind: tfidf, tokenizer: {stem: false, chinese: bigram}}, {ref: mine@run}]
"""


def _registry(tmp_path: Path, *entries: str):
    path = tmp_path / "retrievers.yaml"
    path.write_text("retrievers:\n" + "".join(entries), encoding="utf-8")
    return load_registry(path)


@pytest.fixture
def without(monkeypatch):
    def hide(*modules: str) -> None:
        for name in modules:
            monkeypatch.setitem(sys.modules, name, None)  # as if not installed

    return hide


def test_a_missing_extra_names_the_extra_and_the_entry(tmp_path, without):
    registry = _registry(tmp_path, BM25)
    check_entries(registry.deployed(), registry)  # installed here
    without("bm25s")
    with pytest.raises(MissingExtraError, match=r"install `evalops-rag\[retrievers\]` to use the built-in BM25 "
                                                r"retriever \(.*retrievers.yaml:2: lexical@1\) \(bm25s is not installed\)"):
        check_entries(registry.deployed(), registry)


def test_the_tokenizer_s_libraries_are_needed_unless_switched_off(tmp_path, without):
    without("Stemmer", "jieba")
    (tmp_path / "runs").mkdir()
    (tmp_path / "runs" / "mine.trec").write_text("q1 Q0 d1 1 1.0 t\n")
    registry = _registry(tmp_path, RUN_FILE, HYBRID)
    check_entries(registry.deployed(), registry)  # stem: false, chinese: bigram
    plain = _registry(tmp_path, BM25.replace("kind: bm25", "kind: tfidf"))
    with pytest.raises(MissingExtraError, match="Stemmer is not installed"):
        check_entries(plain.deployed(), plain)


def test_a_run_file_that_is_missing_is_refused_through_a_reference(tmp_path):
    registry = _registry(tmp_path, RUN_FILE.replace("deployed: true", "deployed: false"), HYBRID)
    with pytest.raises(ConfigError, match=r"retrievers.yaml:\d+: retriever mine@run: params.path .*mine.trec does not "
                                          "exist"):
        check_entries(registry.deployed(), registry)


def _project(tmp_path: Path, monkeypatch, entries: str) -> Path:
    for name in list(os.environ):
        if name.startswith("EVALOPS_"):
            monkeypatch.delenv(name)
    (tmp_path / "evalops.yaml").write_text(
        f"gold_set:\n  path: {INCLUDE / 'goldset'}\nknowledge_base:\n  path: {INCLUDE / 'knowledge_base'}\n"
        "measures: [nDCG@10]\nlog_sample_size: 0\n", encoding="utf-8")
    (tmp_path / "retrievers.yaml").write_text("retrievers:\n" + entries, encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    return tmp_path


@pytest.mark.parametrize("command", [["run"], ["gate", "--junit-xml", "junit.xml"]])
def test_run_stops_on_a_missing_extra_before_anything_is_stored(tmp_path, monkeypatch, without, command):
    project = _project(tmp_path, monkeypatch, BM25)
    without("bm25s", "Stemmer", "jieba")
    result = CliRunner().invoke(main, [*command, "--date", "2024-06-01"])
    assert result.exit_code == ExitCode.BAD_INPUT, result.output
    assert "pip install 'evalops-rag[retrievers]'" in result.output and "Traceback" not in result.output
    assert not (project / ".evalops").exists()  # no warehouse, no alert, no work folder


def test_validate_and_run_refuse_a_deployed_run_file_that_does_not_exist(tmp_path, monkeypatch):
    project = _project(tmp_path, monkeypatch, RUN_FILE)
    for command in (["validate", "--no-docs"], ["run", "--date", "2024-06-01"]):
        result = CliRunner().invoke(main, command)
        assert result.exit_code == ExitCode.BAD_INPUT, (command, result.output)
        assert f"retrievers.yaml:2: retriever mine@run: params.path {project / 'runs' / 'mine.trec'} does not exist" \
               in result.output
    assert not (project / ".evalops").exists()


def test_the_built_in_dense_encoder_needs_the_wordllama_extra(tmp_path, without):
    dense = BM25.replace("kind: bm25", "kind: dense, model: wordllama, dim: 64")
    registry = _registry(tmp_path, dense)
    check_entries(registry.deployed(), registry)  # installed here (the lock holds the extra)
    for missing in ("wordllama", "tokenizers", "safetensors"):
        with pytest.MonkeyPatch.context() as patch:
            patch.setitem(sys.modules, missing, None)
            with pytest.raises(MissingExtraError) as caught:
                check_entries(registry.deployed(), registry)
        message = str(caught.value)
        assert caught.value.extra == "wordllama" and f"({missing} is not installed)" in message, message
        assert "to use the built-in dense encoder (model: wordllama)" in message
        assert "pip install 'evalops-rag[wordllama]'" in message
