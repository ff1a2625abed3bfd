"""The evalops exception hierarchy.

    EvalopsError
    ├── InputError                 bad input a user can fix (names the file, the row and what to do)
    │   ├── FormatError            a malformed line or record in a file
    │   ├── MeasureError           an unknown or malformed measure name
    │   ├── DuplicateDocumentError a document listed twice for one query in a run
    │   ├── AlignmentError         per-query vectors that do not cover the same queries
    │   └── ConfigError            a malformed configuration or registry file
    ├── ValidationError            a data contract (Great Expectations suite) failed; carries a summary
    ├── RetrieverError             a retriever call failed or the failure budget was exceeded
    └── WarehouseError             the metrics warehouse refused or could not complete a write
        └── UnusableBaselineError  the current baseline names a run that is not ``succeeded`` (fails closed)

Callers catch the base classes; the CLI turns every ``EvalopsError`` into a one-line message and the exit code of ``evalops.exitcodes``.
"""

from __future__ import annotations

__all__ = [
    "EvalopsError",
    "InputError",
    "FormatError",
    "MeasureError",
    "DuplicateDocumentError",
    "AlignmentError",
    "ConfigError",
    "ValidationError",
    "RetrieverError",
    "WarehouseError",
    "UnusableBaselineError",
]


class EvalopsError(Exception):
    """Base class of every error evalops raises on purpose."""


class InputError(EvalopsError, ValueError):
    """Input a user can fix. The message says where the problem is and what to do."""


class FormatError(InputError):
    """A malformed line or record: ``path:line: what is wrong (what was expected)``."""

    def __init__(self, message: str, *, path: str | None = None, line: int | None = None):
        self.path = path
        self.line = line
        where = ""
        if path is not None:
            where = f"{path}:{line}: " if line is not None else f"{path}: "
        super().__init__(where + message)


class MeasureError(InputError):
    """An unknown or malformed measure name; the message lists the valid names."""


class DuplicateDocumentError(InputError):
    """The same document appears twice for one query in a run."""

    def __init__(self, query_id: str, doc_id: str, source: str | None = None):
        self.query_id = query_id
        self.doc_id = doc_id
        where = f"{source}: " if source else ""
        super().__init__(
            f"{where}query {query_id!r} lists document {doc_id!r} more than once; "
            "a run must rank each document at most once per query"
        )


class AlignmentError(InputError):
    """Two per-query vectors do not cover the same queries."""


class ConfigError(InputError):
    """A malformed configuration or registry file."""


class ValidationError(EvalopsError):
    """A data contract failed. ``summary`` is the readable report; ``failures`` the structured one."""

    def __init__(self, summary: str, failures: list | None = None, docs_path: str | None = None):
        self.summary = summary
        self.failures = failures or []
        self.docs_path = docs_path
        super().__init__(summary)


class RetrieverError(EvalopsError):
    """A retriever call failed, or too many queries failed for a version to be scored."""


class WarehouseError(EvalopsError):
    """The warehouse could not complete a write or a lookup."""


class UnusableBaselineError(WarehouseError):
    """The current baseline of a retriever names a run that is not ``succeeded`` (its scores cannot be
    trusted); lookups fail closed instead of comparing against it. ``baseline`` is the stored row,
    ``run_status`` the status of the run it names."""

    def __init__(self, message: str, *, baseline: object = None, run_status: str | None = None):
        self.baseline = baseline
        self.run_status = run_status
        super().__init__(message)
