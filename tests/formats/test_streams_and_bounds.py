"""Streams are inputs (a FIFO, process substitution, ``/dev/stdin``, ``-``); devices and link loops are named
for what they are; a line longer than ``max_line_length`` and a compressed file or stream larger than
``max_decompressed_size`` are refused with one error naming the file and the bound."""

from __future__ import annotations

import gzip
import io
import os
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from evalops.errors import FormatError
from evalops.formats import read_qrels, read_run
from evalops.util.limits import DEFAULT_MAX_DECOMPRESSED_SIZE, DEFAULT_MAX_LINE_LENGTH, input_bounds, set_input_bounds

RUN = b"q1 Q0 d1 1 2.0 t\nq1 Q0 d2 2 1.0 t\nq2 Q0 d3 1 0.5 t\n"
EXPECTED = {"q1": {"d1": 2.0, "d2": 1.0}, "q2": {"d3": 0.5}}
REPO = Path(__file__).resolve().parents[2]


@pytest.fixture
def bounds():
    """Small bounds for the test, the defaults restored after it."""
    yield set_input_bounds("64KB", "1MB")
    set_input_bounds(DEFAULT_MAX_LINE_LENGTH, DEFAULT_MAX_DECOMPRESSED_SIZE)


def _feed_fifo(path: Path, data: bytes) -> threading.Thread:
    def write():
        with open(path, "wb") as fh:
            fh.write(data)

    thread = threading.Thread(target=write, daemon=True)
    thread.start()
    return thread


def test_a_fifo_is_read_as_a_stream(tmp_path):
    fifo = tmp_path / "run.fifo"
    os.mkfifo(fifo)
    writer = _feed_fifo(fifo, RUN)
    assert read_run(fifo).to_dict() == EXPECTED
    writer.join(timeout=10)


def test_a_compressed_fifo_is_decompressed(tmp_path):
    fifo = tmp_path / "run.fifo"
    os.mkfifo(fifo)
    writer = _feed_fifo(fifo, gzip.compress(RUN))
    assert read_run(fifo).to_dict() == EXPECTED
    writer.join(timeout=10)


@pytest.mark.skipif(not Path("/bin/bash").exists(), reason="process substitution needs bash")
def test_process_substitution_and_dev_stdin_through_the_cli(tmp_path):
    (tmp_path / "qrels.txt").write_text("q1 0 d1 1\nq2 0 d3 1\n")
    (tmp_path / "run.gz").write_bytes(gzip.compress(RUN))
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    cli = f"{sys.executable} -c 'from evalops.cli import main; main()'"
    for command in (f"{cli} evaluate qrels.txt <(zcat run.gz) -m P@1 --format json",
                    f"zcat run.gz | {cli} evaluate qrels.txt /dev/stdin -m P@1 --format json",
                    f"zcat run.gz | {cli} evaluate qrels.txt - -m P@1 --format json"):
        done = subprocess.run(["/bin/bash", "-c", command], cwd=tmp_path, env=env, capture_output=True, text=True,
                              timeout=120)
        assert done.returncode == 0, (command, done.stderr)
        assert '"P@1"' in done.stdout, (command, done.stdout)


def test_a_device_and_a_link_loop_say_what_they_are(tmp_path):
    with pytest.raises(FormatError, match="/dev/null: is a character device, not a file or a stream"):
        read_run("/dev/null")
    (tmp_path / "a").symlink_to(tmp_path / "b")
    (tmp_path / "b").symlink_to(tmp_path / "a")
    with pytest.raises(FormatError, match="is a symbolic link loop"):
        read_run(tmp_path / "a")
    (tmp_path / "dangling").symlink_to(tmp_path / "nowhere")
    with pytest.raises(FormatError, match="is a broken symbolic link"):
        read_qrels(tmp_path / "dangling")
    with pytest.raises(FormatError, match="file not found"):
        read_qrels(tmp_path / "missing.txt")


def test_a_gzip_bomb_without_line_ends_is_refused_at_the_line_bound(tmp_path, bounds):
    bomb = tmp_path / "bomb.gz"
    with gzip.open(bomb, "wb", compresslevel=1) as fh:
        for _ in range(64):  # 64 MB of NUL bytes; the bound is 64 KB
            fh.write(bytes(1 << 20))
    for reader in (read_run, read_qrels):
        with pytest.raises(FormatError) as caught:
            reader(bomb)
        message = str(caught.value)
        assert str(bomb) in message and "max_line_length (64KB)" in message and "\n" not in message


def test_a_bomb_of_valid_lines_is_refused_at_the_size_bound(tmp_path, bounds):
    bomb = tmp_path / "lines.gz"
    bomb.write_bytes(gzip.compress(b"q1 Q0 d1 1 1.0 t\n" * 200_000))  # 3.4 MB of lines; the bound is 1 MB
    with pytest.raises(FormatError, match=r"lines.gz.*max_decompressed_size \(1MB\)"):
        read_run(bomb)


def test_standard_input_is_bounded(monkeypatch, bounds):
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(bytes(200_000))))
    with pytest.raises(FormatError, match=r"<stdin>.*max_line_length \(64KB\)"):
        read_run("-")
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(b"q1 Q0 d1 1 1.0 t\n" * 100_000)))
    with pytest.raises(FormatError, match=r"<stdin>.*max_decompressed_size \(1MB\)"):
        read_run("-")


def test_a_line_just_under_the_bound_is_read(tmp_path, bounds):
    text = tmp_path / "long.tsv"
    long_id = "d" + "x" * (input_bounds().max_line_length - 40)
    text.write_bytes(b"q1 Q0 d1 1 2.0 t\n" + f"q1 Q0 {long_id} 2 1.0 t\n".encode())
    assert long_id in read_run(text).to_dict()["q1"]


def test_the_bounds_are_settings(tmp_path):
    from evalops.config import load_config
    from evalops.errors import ConfigError

    (tmp_path / "evalops.yaml").write_text("max_line_length: 1KB\n")
    with pytest.raises(ConfigError, match=r"evalops.yaml:1: max_line_length: .*below 64KB"):
        load_config(tmp_path, environ={})
    (tmp_path / "evalops.yaml").write_text("max_line_length: 1MB\nmax_decompressed_size: 2GB\n")
    cfg = load_config(tmp_path, environ={})
    try:
        cfg.apply_process_settings()
        assert input_bounds().max_line_length == 1 << 20 and input_bounds().max_decompressed_size == 2 << 30
    finally:
        set_input_bounds(DEFAULT_MAX_LINE_LENGTH, DEFAULT_MAX_DECOMPRESSED_SIZE)


@pytest.mark.parametrize("ending", [b"\n", b"\r\n", b"\r"])
def test_a_bomb_of_line_ends_is_refused_by_its_density(tmp_path, monkeypatch, ending):
    """Millions of blank lines (a file, a gzip, a stream of newlines) are refused within the first pieces,
    not read as blank lines for minutes; short real lines above the density pass."""
    import evalops.formats._source as source_module

    monkeypatch.setattr(source_module, "LINES_CHECKED_FROM", 1000)
    bomb = tmp_path / "newlines.gz"
    bomb.write_bytes(gzip.compress(ending * 5000 + RUN))
    with pytest.raises(FormatError, match=r"newlines\.gz: holds [\d,]+ line ends in its first [\d,]+ bytes, "
                                          r"fewer than 4 bytes a line"):
        read_run(bomb)
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(ending * 5000 + RUN)))
    with pytest.raises(FormatError, match=r"<stdin>: holds"):
        read_run("-")
    short = tmp_path / "short.qrels"
    short.write_bytes(b"\n" * 500 + b"".join(b"q 0 %d 1%s" % (i, ending) for i in range(3000)))
    assert len(read_qrels(short).to_frame()) == 3000


@pytest.mark.parametrize("ending", [b"\n", b"\r\n", b"\r"])
def test_line_ends_are_counted_alike_in_small_and_large_pieces(ending):
    """The line ends a piece is charged with: each ending counted once, whether the piece is counted by
    ``bytes.count`` (small) or a megabyte at a time (large, with a line crossing each megabyte)."""
    from evalops.formats._source import line_ends

    line = b"q1 Q0 d7 1 2.5 tag" + ending
    for lines in (3, (3 << 20) // len(line) + 1):  # under and over the counted slice of 1 MB
        piece = line * lines + b"no end"
        assert line_ends(piece) == lines
    assert line_ends(b"\n" * ((1 << 20) + 5) + b"\r" * 7) == (1 << 20) + 5
    assert line_ends(b"\r" * ((1 << 20) + 5) + b"\n" * 7) == (1 << 20) + 5
