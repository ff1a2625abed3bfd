"""Settings and arguments that used to end in a traceback: each is one ``error:`` line (or click's usage
error) naming what to fix, with its exit code."""

from __future__ import annotations

import pytest
from click.testing import CliRunner

from evalops.cli import main
from evalops.errors import ConfigError
from evalops.exitcodes import ExitCode
from evalops.util.storage import make_folder

BAD_PORT = "postgresql+psycopg://user:hunter2@localhost:abc/db"


def _clean(result, code):
    assert result.exit_code == code, result.output
    assert "Traceback" not in result.output and "internal error" not in result.output


def test_promote_refuses_a_run_id_beyond_the_column_as_a_usage_error(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # the default warehouse, were the id let through
    result = CliRunner().invoke(main, ["promote", "search", "1.0", "--run-id", "9" * 23, "--reason", "x"])
    _clean(result, ExitCode.USAGE)
    assert "is not in the range 1<=x<=2147483647" in result.output


@pytest.mark.parametrize("command", [["history"], ["db", "current"], ["db", "upgrade"]], ids=" ".join)
def test_a_warehouse_url_with_a_port_that_is_not_a_number(command, monkeypatch):
    monkeypatch.setenv("EVALOPS_WAREHOUSE_URL", BAD_PORT)
    result = CliRunner().invoke(main, command)
    _clean(result, ExitCode.BAD_INPUT)
    assert "the port is not a number" in result.output and "hunter2" not in result.output


def test_init_into_a_folder_that_cannot_be_created(tmp_path):
    (tmp_path / "file").write_text("x")
    result = CliRunner().invoke(main, ["init", str(tmp_path / "file" / "project")])
    _clean(result, ExitCode.BAD_INPUT)
    assert f"error: {tmp_path / 'file' / 'project'}: cannot create the project's folder (a part of the path is a file" \
        in result.output


def test_a_sqlite_warehouse_whose_folder_cannot_be_created(tmp_path, monkeypatch):
    (tmp_path / "file").write_text("x")
    monkeypatch.setenv("EVALOPS_WAREHOUSE_URL", f"sqlite:///{tmp_path / 'file' / 'sub' / 'w.db'}")
    result = CliRunner().invoke(main, ["db", "upgrade"])
    _clean(result, ExitCode.BAD_INPUT)
    assert "cannot create the folder of the SQLite warehouse" in result.output


def test_make_folder_names_the_folder_and_the_reason(tmp_path):
    (tmp_path / "file").write_text("x")
    with pytest.raises(ConfigError, match=r"file/docs: cannot create the Data Docs folder \(a part of the path is a "
                                          r"file, not a folder\)"):
        make_folder(tmp_path / "file" / "docs", "the Data Docs folder")
    assert make_folder(tmp_path / "a" / "b", "x").is_dir()
