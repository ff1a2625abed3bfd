"""Where a text file's bytes come from: a path, a compressed path, or standard input (read once).

Every reader in :mod:`evalops.formats` opens its input through :class:`Source`, so every format gets the
same treatment of the things that are not the format itself:

* ``-`` means standard input. It is read once into memory and kept, so a second, exact pass over a bad
  region (for its line number) reads the same bytes again.
* ``.gz`` and ``.zst`` (or ``.zstd``) are decompressed while reading, never through a temporary copy.
  A gzip or zstd stream is also recognised by its magic bytes, whatever the file is called.
* A UTF-8 byte order mark at the start is skipped, in every format.
* Decompression and decoding problems become :class:`~evalops.errors.FormatError` naming the file, the
  line (or the byte offset) and what to do.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from evalops.errors import FormatError

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
        """A binary stream of the decompressed bytes (a pyarrow input stream when compressed)."""
        if self.compression is None:
            return self.raw()
        import pyarrow as pa

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
        stream = self.open()
        try:
            while True:
                try:
                    piece = stream.read(size)
                except (OSError, EOFError, ValueError) as exc:
                    raise self.decompression_error(exc, offset) from None
                if not piece:
                    return
                piece = bytes(piece)
                if first:
                    while len(piece) < len(BOM):  # a short read: the mark may be split
                        try:
                            more = stream.read(CHUNK)
                        except (OSError, EOFError, ValueError) as exc:
                            raise self.decompression_error(exc, offset) from None
                        if not more:
                            break
                        piece += bytes(more)
                    first = False
                    if piece.startswith(BOM):
                        piece = piece[len(BOM) :]
                offset += len(piece)
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


def _sniff(head: bytes) -> str | None:
    for magic, codec in _MAGIC.items():
        if head.startswith(magic):
            return codec
    return None


def as_source(path: str | os.PathLike[str] | Source) -> Source:
    """A :class:`Source` for ``path`` (``-``: standard input, read now and once)."""
    if isinstance(path, Source):
        return path
    if str(path) == STDIN:
        data = sys.stdin.buffer.read()
        return Source("<stdin>", data=data, compression=_sniff(data[:4]))
    p = Path(path)
    if p.is_dir():
        raise FormatError("is a directory, expected a file", path=str(p))
    if not p.is_file():
        raise FormatError("file not found", path=str(p))
    try:
        with open(p, "rb") as fh:
            head = fh.read(4)
    except OSError as exc:
        raise FormatError(f"cannot be read ({exc.strerror or exc})", path=str(p)) from None
    return Source(str(p), path=p, compression=_sniff(head) or _SUFFIX.get(p.suffix.lower()))
