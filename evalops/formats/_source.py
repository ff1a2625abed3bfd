"""Where a text file's bytes come from: a path, a compressed path, or standard input (read once).

Every reader in :mod:`evalops.formats` opens its input through :class:`Source`, so every format gets the
same treatment of the things that are not the format itself:

* ``-`` means standard input; ``/dev/stdin``, a named pipe (FIFO), a socket and process substitution
  (``<(zcat run.gz)``, a ``/dev/fd/N`` pipe) are streams too. A stream is read once into memory and kept, so
  a second, exact pass over a bad region (for its line number) reads the same bytes again. A device
  (``/dev/null``, a terminal) and a symbolic-link loop are refused with what they are.
* Hostile input is bounded (:class:`evalops.util.limits.InputBounds`): a line longer than ``max_line_length``, a
  stream or a compressed file whose bytes exceed ``max_decompressed_size``, and millions of lines of fewer
  than :data:`~evalops.util.limits.MIN_BYTES_PER_LINE` bytes on average stop the reading with one error naming
  the file and the bound.
* ``.gz`` and ``.zst`` (or ``.zstd``) are decompressed while reading, never through a temporary copy.
  A gzip or zstd stream is also recognised by its magic bytes, whatever the file is called.
* A UTF-8 byte order mark at the start is skipped, in every format.
* Decompression and decoding problems become :class:`~evalops.errors.FormatError` naming the file, the
  line (or the byte offset) and what to do.
"""

from __future__ import annotations

import errno
import os
import stat
import sys
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from evalops.errors import FormatError
from evalops.util.arrow import available
from evalops.util.extras import require
from evalops.util.limits import (
    LINES_CHECKED_FROM,
    MAX_COMPRESSION_RATIO,
    MIN_BYTES_PER_LINE,
    RATIO_CHECKED_FROM,
    InputBounds,
    input_bounds,
    size_text,
)

__all__ = ["Source", "as_source", "BOM", "STDIN"]

STDIN = "-"
BOM = b"\xef\xbb\xbf"
CHUNK = 1 << 20

_MAGIC = {b"\x1f\x8b": "gzip", b"\x28\xb5\x2f\xfd": "zstd"}
_SUFFIX = {".gz": "gzip", ".gzip": "gzip", ".zst": "zstd", ".zstd": "zstd"}


@dataclass(eq=False)
class Source:
    """One input: ``name`` is what messages call it (the path, or ``<stdin>``)."""

    name: str
    path: Path | None = None
    data: bytes | None = None  # standard input, read once
    compression: str | None = None
    _size: int | None = field(default=None, repr=False)

    # -- opening ------------------------------------------------------------------------------------
    def raw(self) -> Any:
        """A binary file object over the stored bytes (not decompressed)."""
        if self.data is not None:
            import io

            return io.BytesIO(self.data)
        assert self.path is not None
        try:
            return open(self.path, "rb")
        except OSError as exc:
            raise FormatError(f"cannot be read ({exc.strerror or exc})", path=self.name) from None

    def open(self) -> Any:
        """A binary stream of the decompressed bytes (a pyarrow input stream when compressed; gzip without
        pyarrow, on the base install, through the standard library's ``gzip``)."""
        if self.compression is None:
            return self.raw()
        if self.compression == "gzip" and not available():
            return _Gunzip(self.raw())
        pa = require("pyarrow", "fast", f"read {self.compression}-compressed files ({self.name})")
        return pa.CompressedInputStream(self.raw(), self.compression)

    @property
    def size(self) -> int:
        """Stored size in bytes (compressed size for compressed input)."""
        if self._size is None:
            self._size = len(self.data) if self.data is not None else (self.path.stat().st_size if self.path else 0)
        return self._size

    # -- reading ------------------------------------------------------------------------------------
    def chunks(self, size: int = CHUNK) -> Iterator[bytes]:
        """The decompressed bytes in pieces of up to ``size`` bytes, BOM removed; decompression errors named
        with the offset."""
        offset = 0
        first = True
        bounds = _Bounds(self.name, input_bounds(), sized=self.compression is not None,
                         stored=self.size if self.compression is not None else None)
        size = min(size, bounds.bounds.max_line_length)  # a longer line then always spans a piece boundary
        stream = self.open()

        def read(n: int) -> bytes:
            try:
                return bytes(stream.read(n) or b"")
            except (OSError, EOFError, ValueError) as exc:
                raise self.decompression_error(exc, offset) from None

        try:
            while True:
                piece = read(size)
                if not piece:
                    return
                if first:
                    while len(piece) < len(BOM):  # a short read: the mark may be split
                        more = read(CHUNK)
                        if not more:
                            break
                        piece += more
                    first = False
                    if piece.startswith(BOM):
                        piece = piece[len(BOM) :]
                offset += len(piece)
                bounds.check(piece)
                yield piece
        finally:
            stream.close()

    def lines(self) -> Iterator[tuple[int, bytes]]:
        """``(line number, line without its end)`` for every line; ``\\n``, ``\\r\\n`` and ``\\r`` end lines."""
        lineno = 0
        rest = b""
        for piece in self.chunks():
            buf = rest + piece
            cut = max(buf.rfind(b"\n"), buf.rfind(b"\r"))
            if cut == len(buf) - 1 and buf.endswith(b"\r"):
                cut = max(buf.rfind(b"\n", 0, cut), buf.rfind(b"\r", 0, cut))  # the \n may follow
            if cut < 0:
                rest = buf
                continue
            rest = buf[cut + 1 :]
            for line in buf[: cut + 1].splitlines():
                lineno += 1
                yield lineno, line
        for line in rest.splitlines():
            lineno += 1
            yield lineno, line

    def text_lines(self) -> Iterator[tuple[int, str]]:
        """``(line number, decoded line)``; a line that is not UTF-8 raises ``FormatError`` naming it."""
        for lineno, line in self.lines():
            yield lineno, self.decode(line, lineno)

    def decode(self, value: bytes, lineno: int | None) -> str:
        try:
            return value.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise FormatError(
                f"not valid UTF-8 (byte {exc.start + 1} of the line is {value[exc.start:exc.start + 1]!r}); "
                "save the file as UTF-8",
                path=self.name,
                line=lineno,
            ) from None

    def decompression_error(self, exc: BaseException, offset: int) -> FormatError:
        """The error for a stream that failed after ``offset`` bytes of output were read in large pieces;
        the stream is read again in small ones to say where it breaks (within 64 KB)."""
        detail = str(exc).strip() or type(exc).__name__
        good = self._readable_prefix()
        where = f"after {max(offset, good):,} bytes of output"
        return FormatError(
            f"could not be decompressed as {self.compression} {where} ({detail}); "
            "the file is damaged or truncated: re-create or re-download it",
            path=self.name,
        )

    def _readable_prefix(self, piece: int = 1 << 16) -> int:
        """How many decompressed bytes can be read before the stream fails."""
        good = 0
        try:
            stream = self.open()
        except (OSError, EOFError, ValueError, FormatError):
            return 0
        try:
            while True:
                data = stream.read(piece)
                if not data:
                    return good
                good += len(data)
        except (OSError, EOFError, ValueError):
            return good
        finally:
            stream.close()


class _Bounds:
    """Holds one reading to :class:`~evalops.util.limits.InputBounds`, piece by piece: the bytes since the last
    line end (checked exactly across pieces: a line inside one piece is no longer than the piece) and, when
    ``sized``, the bytes read."""

    def __init__(self, name: str, bounds: InputBounds, *, sized: bool, lines: bool = True,
                 stored: int | None = None):
        self.name, self.bounds, self.sized, self.lines = name, bounds, sized, lines
        # a compressed input's own size: its output may pass RATIO_CHECKED_FROM only within the ratio
        self.ratio_limit = None if stored is None else max(RATIO_CHECKED_FROM, MAX_COMPRESSION_RATIO * stored)
        self.run = 0  # bytes since the last line end
        self.total = 0
        self.line_ends = 0

    def check(self, piece: bytes) -> None:
        self.total += len(piece)
        if self.sized and self.total > self.bounds.max_decompressed_size:
            raise FormatError(f"holds more than max_decompressed_size ({size_text(self.bounds.max_decompressed_size)}) "
                              "of data; refusing it (a decompression bomb?). Raise max_decompressed_size in "
                              "evalops.yaml if the file is genuine", path=self.name)
        if self.ratio_limit is not None and self.total > self.ratio_limit:
            raise FormatError(f"decompresses to more than {MAX_COMPRESSION_RATIO} times its own size "
                              f"({size_text(self.ratio_limit)} read so far); refusing it as a decompression "
                              "bomb. Decompress it yourself if it is genuine", path=self.name)
        if not self.lines:
            return
        self.line_ends += line_ends(piece)
        if self.line_ends > LINES_CHECKED_FROM and self.line_ends * MIN_BYTES_PER_LINE > self.total:
            raise FormatError(f"holds {self.line_ends:,} line ends in its first {self.total:,} bytes, fewer than "
                              f"{MIN_BYTES_PER_LINE} bytes a line; refusing it (blank lines by the million: a bomb?). "
                              "Remove the blank lines if the file is genuine", path=self.name)
        last = max(piece.rfind(b"\n"), piece.rfind(b"\r"))
        if last < 0:
            self.run += len(piece)
        else:
            ends = [i for i in (piece.find(b"\n"), piece.find(b"\r")) if i >= 0]
            self._line(self.run + min(ends))
            self.run = len(piece) - last - 1
        self._line(self.run)

    def _line(self, length: int) -> None:
        if length > self.bounds.max_line_length:
            start = self.total - length if length <= self.total else 0
            raise FormatError(f"a line longer than max_line_length ({size_text(self.bounds.max_line_length)}) "
                              f"starts at byte {max(start, 0):,}; refusing it (not a text file of lines, or a "
                              "bomb). Raise max_line_length in evalops.yaml if the file is genuine",
                              path=self.name)


_COUNTED = 1 << 20  # bytes compared at a time by the counting below (a 1 MB boolean array, in cache)


def line_ends(piece: bytes) -> int:
    """The line ends of ``piece``: ``max`` of its ``\\n`` and ``\\r`` (CRLF ends a line once). ``\\r`` is
    counted only when there is one (a ``memchr``); ``\\n`` by numpy a megabyte at a time, a quarter of
    ``bytes.count``'s time (which was a tenth of reading 10 M run lines)."""
    if len(piece) < _COUNTED:
        ends = piece.count(b"\n")
    else:
        data = np.frombuffer(piece, dtype=np.uint8)
        ends = sum(int(np.count_nonzero(data[lo:lo + _COUNTED] == 10)) for lo in range(0, len(data), _COUNTED))
    return max(ends, piece.count(b"\r")) if piece.find(b"\r") >= 0 else ends


def _read_stream(fh: Any, name: str) -> bytes:
    """Every byte of a stream (standard input, a pipe), within the bounds: its stored bytes are held to
    ``max_decompressed_size``, and, unless it is compressed, its lines to ``max_line_length``."""
    bounds: _Bounds | None = None
    parts: list[bytes] = []
    while True:
        try:
            piece = fh.read(CHUNK)
        except OSError as exc:
            raise FormatError(f"cannot be read ({exc.strerror or exc})", path=name) from None
        if not piece:
            return b"".join(parts)
        if bounds is None:  # compressed: its lines are checked as it is decompressed
            bounds = _Bounds(name, input_bounds(), sized=True, lines=_sniff(piece[:4]) is None)
        bounds.check(piece)
        parts.append(piece)


def _sniff(head: bytes) -> str | None:
    for magic, codec in _MAGIC.items():
        if head.startswith(magic):
            return codec
    return None


def _stat_problem(p: Path, exc: OSError) -> str:
    if exc.errno == errno.ELOOP:
        return "is a symbolic link loop (a link that points, through other links, back to itself); fix the link"
    if exc.errno == errno.ENOENT:
        return "is a broken symbolic link (its target does not exist)" if p.is_symlink() else "file not found"
    if exc.errno == errno.ENOTDIR:
        return "file not found (a part of the path is not a folder)"
    return f"cannot be read ({exc.strerror or exc})"


def as_source(path: str | os.PathLike[str] | Source) -> Source:
    """A :class:`Source` for ``path`` (``-``: standard input, read now and once)."""
    if isinstance(path, Source):
        return path
    if str(path) == STDIN:
        data = _read_stream(sys.stdin.buffer, "<stdin>")
        return Source("<stdin>", data=data, compression=_sniff(data[:4]))
    p = Path(path)
    try:
        mode = os.stat(p).st_mode
    except OSError as exc:
        raise FormatError(_stat_problem(p, exc), path=str(p)) from None
    if stat.S_ISDIR(mode):
        raise FormatError("is a directory, expected a file", path=str(p))
    if stat.S_ISFIFO(mode) or stat.S_ISSOCK(mode):  # a named pipe, process substitution, /dev/stdin from a pipe
        try:
            with open(p, "rb") as fh:
                data = _read_stream(fh, str(p))
        except OSError as exc:
            raise FormatError(f"cannot be read ({exc.strerror or exc})", path=str(p)) from None
        return Source(str(p), data=data, compression=_sniff(data[:4]) or _SUFFIX.get(p.suffix.lower()))
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        kind = "a character device" if stat.S_ISCHR(mode) else "a block device"
        raise FormatError(f"is {kind}, not a file or a stream; give a file, a pipe or - (standard input)",
                          path=str(p))
    if not stat.S_ISREG(mode):
        raise FormatError("is not a regular file", path=str(p))
    try:
        with open(p, "rb") as fh:
            head = fh.read(4)
    except OSError as exc:
        raise FormatError(f"cannot be read ({exc.strerror or exc})", path=str(p)) from None
    return Source(str(p), path=p, compression=_sniff(head) or _SUFFIX.get(p.suffix.lower()))


class _Gunzip:
    """A gzip stream read by the standard library; zlib's own error (not an ``OSError``) becomes a
    ``ValueError``, as the decompression errors the readers name are."""

    def __init__(self, raw: Any):
        import gzip

        self._stream = gzip.GzipFile(fileobj=raw, mode="rb")
        self._raw = raw

    def read(self, size: int = -1) -> bytes:
        import zlib

        try:
            return self._stream.read(size)
        except zlib.error as exc:
            raise ValueError(str(exc)) from None

    def close(self) -> None:
        self._stream.close()
        self._raw.close()
