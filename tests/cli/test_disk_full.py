"""A full disk (ENOSPC, EDQUOT, EFBIG, also inside a shutil.Error) is one ``error:`` line naming the path
and exit 7, wherever a command writes; an atomic write leaves no temporary file behind."""

from __future__ import annotations

import errno
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from evalops.cli import main
from evalops.exitcodes import ExitCode
from evalops.util.storage import storage_full, write_atomic

REPO = Path(__file__).resolve().parents[2]
QRELS = b"q1 0 d1 1\nq2 0 d2 1\n"
RUN = b"q1 Q0 d1 1 2.0 t\nq2 Q0 d9 1 1.0 t\n"


def _full(path="/data/x", code=errno.ENOSPC):
    return OSError(code, os.strerror(code), path)


@pytest.mark.parametrize("code", [errno.ENOSPC, errno.EDQUOT, errno.EFBIG])
def test_a_full_disk_is_found_in_the_error_its_causes_and_a_tree_copys_list(code):
    assert storage_full(_full(code=code)).path == "/data/x"
    try:
        try:
            raise _full(code=code)
        except OSError as exc:
            raise RuntimeError("rendering failed") from exc
    except RuntimeError as wrapped:
        assert storage_full(wrapped).reason == os.strerror(code)
    copy = shutil.Error([("/a/s.css", "/docs/s.css", f"[Errno {code}] {os.strerror(code)}: '/docs/s.css'")])
    assert storage_full(copy).path == "/docs/s.css"
    assert storage_full(_full(code=errno.EACCES)) is None and storage_full(ValueError("x")) is None


def test_an_atomic_write_that_fails_leaves_no_temporary_file_and_names_the_target(tmp_path):
    target = tmp_path / "report.md"

    def write(handle):
        handle.write(b"half")
        raise _full(str(handle.name))

    with pytest.raises(OSError) as exc:
        write_atomic(target, write)
    assert exc.value.filename == str(target) and exc.value.errno == errno.ENOSPC
    assert list(tmp_path.iterdir()) == []
    write_atomic(target, b"whole")
    assert target.read_bytes() == b"whole" and [p.name for p in tmp_path.iterdir()] == ["report.md"]


def test_a_report_on_a_full_disk_leaves_no_temporary_file(tmp_path, monkeypatch):
    from evalops.reports import write as report_write

    real = os.replace

    def replace(src, dst):
        if str(dst).endswith("report.md"):
            raise _full(str(dst))
        return real(src, dst)

    monkeypatch.setattr("evalops.util.storage.os.replace", replace)
    with pytest.raises(OSError):
        report_write._atomic_write(tmp_path / "report.md", b"# report")
    assert list(tmp_path.iterdir()) == []


def test_the_cli_exits_7_with_one_line_naming_the_path(tmp_path, monkeypatch):
    (tmp_path / "a.qrels").write_bytes(QRELS)
    (tmp_path / "a.run").write_bytes(RUN)
    out = tmp_path / "out" / "result.json"
    real = Path.write_text

    def write_text(self, *args, **kwargs):
        if self == out:
            raise _full(str(self))
        return real(self, *args, **kwargs)

    monkeypatch.setattr(Path, "write_text", write_text)
    result = CliRunner().invoke(main, ["evaluate", str(tmp_path / "a.qrels"), str(tmp_path / "a.run"), "-m", "P@5",
                                       "--format", "json", "-o", str(out)])
    assert result.exit_code == ExitCode.WAREHOUSE_ERROR, result.output
    assert "Traceback" not in result.output and "internal error" not in result.output
    assert f"error: {out}: cannot write: No space left on device" in result.output


def test_a_file_size_limit_in_a_real_process_is_exit_7(tmp_path):
    """RLIMIT_FSIZE makes the kernel refuse the write (EFBIG), as a full disk would (ENOSPC)."""
    (tmp_path / "a.qrels").write_bytes(QRELS)
    (tmp_path / "a.run").write_bytes(RUN)
    out = tmp_path / "result.json"
    code = ("import resource, signal, sys; signal.signal(signal.SIGXFSZ, signal.SIG_IGN); "
            "resource.setrlimit(resource.RLIMIT_FSIZE, (20, 20)); from evalops.cli import main; "
            "sys.argv = ['evalops', *sys.argv[1:]]; main()")
    done = subprocess.run([sys.executable, "-c", code, "evaluate", str(tmp_path / "a.qrels"), str(tmp_path / "a.run"),
                           "-m", "P@5", "--per-query", "--format", "json", "-o", str(out)],
                          capture_output=True, text=True, cwd=REPO, timeout=120,
                          env={**os.environ, "PYTHONPATH": str(REPO)})
    assert done.returncode == ExitCode.WAREHOUSE_ERROR, done.stderr
    lines = [line for line in done.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith(f"error: {out}: cannot write: File too large"), done.stderr


def test_data_docs_pages_gx_could_not_write_are_a_full_disk_not_a_logged_traceback(tmp_path, capsys):
    import logging

    from evalops.contracts._gx import _full_disk_raised

    with pytest.raises(OSError) as exc:
        with _full_disk_raised(tmp_path / "data_docs"):
            logging.getLogger("great_expectations.render.renderer.site_builder").error(
                "An unexpected Exception occurred during data docs rendering ... OSError: \"[Errno 28] No space "
                "left on device: '/x/page.html'\".  Traceback: ...")
    assert exc.value.errno == errno.ENOSPC and exc.value.filename == str(tmp_path / "data_docs")
    assert "Traceback" not in capsys.readouterr().err
    with pytest.raises(OSError) as exc:
        with _full_disk_raised(tmp_path / "data_docs"):
            raise OSError(errno.EFBIG, os.strerror(errno.EFBIG))  # a write of an open file: no name
    assert exc.value.filename == str(tmp_path / "data_docs")


def test_a_full_sqlite_warehouse_names_its_file(tmp_path):
    import sqlalchemy as sa

    from evalops.warehouse._db import describe_error

    engine = sa.create_engine(f"sqlite:///{tmp_path / 'warehouse.db'}")
    for message in ("database or disk is full", "disk I/O error"):
        assert f"the SQLite warehouse {tmp_path / 'warehouse.db'}: is its disk or quota full?" in describe_error(
            Exception(message), engine)
    assert describe_error(Exception("UNIQUE constraint failed"), engine) == "UNIQUE constraint failed"
