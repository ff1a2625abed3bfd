"""Every settings YAML goes through one bounded reader: an alias bomb, a recursive alias, a file that is not
a regular file (``/dev/zero``, a FIFO) or one over the size limit is a ``ConfigError`` naming the file; a
normal file, aliases included, still loads."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

from evalops.cli import main
from evalops.config import load_config, parse_time_settings
from evalops.config.env import DEFAULT_TASK_TIMEOUT
from evalops.errors import ConfigError
from evalops.exitcodes import ExitCode
from evalops.retrievers import load_registry
from evalops.util import yamlfile

INCLUDE = Path(__file__).resolve().parents[2] / "include"


def bomb(levels: int = 9, indent: str = "") -> str:
    """A 'billion laughs' document: 9 levels of 9 aliases, about 9**9 values once expanded."""
    lines = [f'{indent}l0: &l0 ["lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol"]']
    for i in range(1, levels):
        refs = ", ".join([f"*l{i - 1}"] * 9)
        lines.append(f"{indent}l{i}: &l{i} [{refs}]")
    return "\n".join(lines) + "\n"


def test_an_alias_bomb_in_the_settings_is_refused(tmp_path) -> None:
    (tmp_path / "evalops.yaml").write_text("measures: [nDCG@10]\nanchors:\n" + bomb(indent="  "))
    with pytest.raises(ConfigError, match=r"evalops.yaml:\d+: YAML aliases here expand to more than 100,000"):
        load_config(tmp_path, environ={})


def test_an_alias_bomb_in_a_retriever_body_is_refused(tmp_path) -> None:
    registry = tmp_path / "retrievers.yaml"
    registry.write_text(
        "retrievers:\n  - name: svc\n    version: '1'\n    adapter: http\n    deployed: true\n    owner: me\n"
        "    params:\n      url: http://127.0.0.1:9/search\n      body:\n" + bomb(indent="        "))
    with pytest.raises(ConfigError, match=r"retrievers.yaml:\d+: YAML aliases here expand"):
        load_registry(registry)


def test_the_run_reports_a_bomb_as_bad_input(tmp_path, monkeypatch) -> None:
    for name in list(os.environ):
        if name.startswith("EVALOPS_"):
            monkeypatch.delenv(name)
    (tmp_path / "evalops.yaml").write_text(f"gold_set:\n  path: {INCLUDE / 'goldset'}\nx:\n" + bomb(indent="  "))
    shutil.copy(INCLUDE / "retrievers.yaml", tmp_path / "retrievers.yaml")
    monkeypatch.chdir(tmp_path)
    result = CliRunner().invoke(main, ["run", "--date", "2024-06-01"])
    assert result.exit_code == ExitCode.BAD_INPUT, result.output
    assert result.output.startswith(f"error: {tmp_path / 'evalops.yaml'}:") and "alias" in result.output
    assert "Traceback" not in result.output


def test_a_recursive_alias_is_refused(tmp_path) -> None:
    (tmp_path / "evalops.yaml").write_text("x: &a [1, *a]\n")
    with pytest.raises(ConfigError, match="recursive alias"):
        load_config(tmp_path, environ={})


@pytest.mark.skipif(not os.path.exists("/dev/zero"), reason="needs /dev/zero")
def test_dev_zero_as_the_settings_file_is_refused(tmp_path) -> None:
    with pytest.raises(ConfigError, match=r"/dev/zero: is a device, pipe or socket, not a regular file"):
        load_config(tmp_path, environ={"EVALOPS_CONFIG": "/dev/zero"})


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs FIFOs")
def test_a_fifo_is_refused_without_blocking(tmp_path) -> None:
    fifo = tmp_path / "retrievers.yaml"
    os.mkfifo(fifo)  # opening it for reading would wait for a writer forever
    with pytest.raises(ConfigError, match="not a regular file"):
        load_registry(fifo)
    assert parse_time_settings(tmp_path, [], environ={"EVALOPS_CONFIG": str(fifo)})["task_timeouts"] == {}


def test_a_folder_is_refused(tmp_path) -> None:
    with pytest.raises(ConfigError, match="is a folder, not a regular file"):
        load_config(tmp_path, environ={"EVALOPS_CONFIG": str(tmp_path)})


def test_a_file_over_the_size_limit_is_refused(tmp_path, monkeypatch) -> None:
    monkeypatch.setattr(yamlfile, "MAX_BYTES", 1000)
    (tmp_path / "evalops.yaml").write_text("measures: [nDCG@10]\n" + "# padding\n" * 200)
    with pytest.raises(ConfigError, match=r"evalops.yaml: larger than"):
        load_config(tmp_path, environ={})


def test_parse_time_settings_ignore_a_bomb_and_keep_the_defaults(tmp_path) -> None:
    (tmp_path / "evalops.yaml").write_text("task_timeout: 60\nx:\n" + bomb(indent="  "))
    # a DAG file's parse does not hang or fail; the tasks load the settings and report the bomb
    assert parse_time_settings(tmp_path, ["a"], environ={})["task_timeouts"] == {"a": DEFAULT_TASK_TIMEOUT}


def test_normal_settings_with_a_few_aliases_still_load(tmp_path) -> None:
    (tmp_path / "evalops.yaml").write_text(
        "measures: [nDCG@10, P@5]\ntask_timeout: &t 600\nretry_delay_seconds: *t\n")
    config = load_config(tmp_path, environ={})
    assert list(config.measures) == ["nDCG@10", "P@5"] and config.retry_delay_seconds == 600
    assert load_registry(INCLUDE / "retrievers.yaml").deployed()


def test_a_wide_file_without_aliases_is_not_taken_for_a_bomb() -> None:
    text = "values: [" + ", ".join(["1"] * 200_000) + "]\n"
    data = yamlfile.load_text(text, "wide.yaml")
    assert len(data["values"]) == 200_000
