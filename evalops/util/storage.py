"""Files on a disk that may be full: one atomic writer, and the one test for "the disk is full".

* :func:`write_atomic` writes a file so that a reader never sees half of it (a temporary file beside it,
  put in place with ``os.replace``) and so that a failed write leaves no temporary file behind.
* :func:`make_folder` creates a folder evalops writes into (a warehouse file's, Data Docs, a new project);
  one that cannot be created (a part of its path is a file, no permission) is a ``ConfigError`` naming it.
* :func:`storage_full` finds a full disk in an exception: an ``OSError`` with ``ENOSPC`` (no space left),
  ``EDQUOT`` (a quota) or ``EFBIG`` (a file larger than the file system or the process's file-size limit
  allows), in the exception itself, in its causes, or in the list a ``shutil.Error`` of a tree copy
  carries (which holds the errors as text). The CLI's central error handling
  (:func:`evalops.cli._common.reports_errors`) turns it into one ``error:`` line naming the path and exit
  code 7 (:attr:`evalops.exitcodes.ExitCode.WAREHOUSE_ERROR`, the code of storage failures).
"""

from __future__ import annotations

import errno
import hashlib
import os
import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, BinaryIO

from evalops.errors import ConfigError

__all__ = ["FULL_ERRNOS", "StorageFull", "full_errno_in_text", "make_folder", "storage_full", "write_atomic"]

FULL_ERRNOS = frozenset({errno.ENOSPC, errno.EDQUOT, errno.EFBIG})
_IN_TEXT = re.compile(r"\[Errno (%s)\]" % "|".join(str(e) for e in sorted(FULL_ERRNOS)))


@dataclass(frozen=True)
class StorageFull:
    """Where the disk was found full (``path``, when known) and why, in the system's words."""

    path: str | None
    reason: str

    def message(self) -> str:
        where = f"{self.path}: " if self.path else ""
        return (f"{where}cannot write: {self.reason} (the disk or the quota is full); free space or point the "
                "folder elsewhere, then run again")


def storage_full(exc: BaseException | None) -> StorageFull | None:
    """The full disk behind ``exc`` (see the module docstring), or None."""
    seen = 0
    while exc is not None and seen < 20:
        seen += 1
        if isinstance(exc, OSError) and exc.errno in FULL_ERRNOS:
            path = exc.filename2 or exc.filename
            return StorageFull(None if path is None else os.fsdecode(path), exc.strerror or os.strerror(exc.errno))
        args = getattr(exc, "args", ())
        if type(exc).__name__ == "Error" and type(exc).__module__ == "shutil" and args and isinstance(args[0], list):
            for item in args[0]:  # (source, destination, "[Errno 28] No space left on device: ...")
                if isinstance(item, tuple) and len(item) == 3:
                    code = full_errno_in_text(str(item[2]))
                    if code is not None:
                        return StorageFull(str(item[1]), os.strerror(code))
        exc = exc.__cause__ or (None if exc.__suppress_context__ else exc.__context__)
    return None


def full_errno_in_text(text: str) -> int | None:
    """The errno of a full disk written in ``text`` as Python prints an ``OSError`` (``[Errno 28] ...``):
    for a library that logs the error instead of raising it (Great Expectations' site builder)."""
    found = _IN_TEXT.search(text)
    return int(found.group(1)) if found else None


def write_atomic(path: str | os.PathLike[str], content: bytes | Callable[[BinaryIO], Any]) -> None:
    """Write ``content`` (bytes, or a function that writes into the open file) to ``path`` whole: into
    ``<name>.<pid>.tmp`` beside it, put in place with ``os.replace``; the temporary file is removed when
    anything fails (a full disk, an error of ``content``), and the error raised."""
    target = Path(path)
    tmp = target.with_name(f"{target.name}.{os.getpid()}.tmp")
    try:
        with open(tmp, "wb") as handle:
            if callable(content):
                content(handle)
            else:
                handle.write(content)
        os.replace(tmp, target)
    except BaseException as exc:
        tmp.unlink(missing_ok=True)
        if isinstance(exc, OSError) and exc.errno in FULL_ERRNOS:  # named by the file the user knows
            raise OSError(exc.errno, exc.strerror, str(target)) from exc
        raise


def make_folder(path: str | os.PathLike[str], what: str) -> Path:
    """``path`` created with its parents (nothing when it exists); a :class:`~evalops.errors.ConfigError`
    naming ``what`` (``"the Data Docs folder"``) and the reason when it cannot be (a full disk is raised as
    it is, for :func:`storage_full`)."""
    folder = Path(path)
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        if exc.errno in FULL_ERRNOS:
            raise
        why = {errno.ENOTDIR: "a part of the path is a file, not a folder",
               errno.EEXIST: "a file of that name is in the way",
               errno.EACCES: "permission denied", errno.EPERM: "not permitted",
               errno.EROFS: "the file system is read-only"}.get(exc.errno or 0, exc.strerror or str(exc))
        raise ConfigError(f"{folder}: cannot create {what} ({why}); fix the path or its setting") from None
    return folder


def file_digest(path: str | os.PathLike[str]) -> str:
    """SHA-256 (hex) of the file's bytes, read in one pass."""
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        while chunk := handle.read(1 << 22):
            digest.update(chunk)
    return digest.hexdigest()
