"""Errors of the pipeline itself. Kept import-free: the DAG's retry policy names them at parse time."""

from __future__ import annotations

from evalops.errors import RetrieverError

__all__ = ["IncompleteRunError"]


class IncompleteRunError(RetrieverError):
    """A version could not be scored; the report was written and the alert stored. Not retried.

    ``result`` is what ``run_local`` would have returned (the versions, alerts and report), when it raised it.
    """

    result: dict | None = None
