"""A precomputed TREC run file as a retriever (another team's export, a frozen baseline).

Each query's documents come back in evaluation order (score descending, ties by doc id descending, as
trec_eval reads the file; the rank column is ignored, as trec_eval ignores it) and are cut at k.
A query the file does not contain is, by default, a **failure** ("absent from the run file"): a run that
does not cover the query set must not pass for a retriever that found nothing. ``missing="empty"`` says
explicitly that absence means "retrieved nothing" (scored 0).
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path

from evalops.errors import ConfigError
from evalops.retrievers.base import Query, QueryResult

__all__ = ["RunFileRetriever"]


class RunFileRetriever:
    """Answers from the TREC run at ``path`` (see the module docstring for ``missing``)."""

    def __init__(self, path: str | os.PathLike[str], *, missing: str = "fail"):
        from evalops.formats import ranking_order, read_run

        if missing not in ("fail", "empty"):
            raise ConfigError(f"run_file: missing must be 'fail' or 'empty', not {missing!r}")
        self.path = Path(path)
        self.missing = missing
        run = read_run(self.path)
        self.name = run.name
        order = ranking_order(run)
        by_query: dict[str, list[tuple[str, float | None]]] = {}
        for q, d, s in zip(run.query_ids[order].tolist(), run.doc_ids[order].tolist(), run.scores[order].tolist()):
            by_query.setdefault(q, []).append((d, None if s != s else s))
        self._ranked = {q: tuple(v) for q, v in by_query.items()}

    def __repr__(self) -> str:
        return f"RunFileRetriever({str(self.path)!r}, {len(self._ranked)} queries, missing={self.missing!r})"

    def retrieve(self, queries: Sequence[Query], k: int) -> list[QueryResult]:
        out: list[QueryResult] = []
        for q in queries:
            ranked = self._ranked.get(q.id)
            if ranked is None and self.missing == "fail":
                out.append(QueryResult.failure(q.id, f"query {q.id!r} is absent from the run file {self.path}"))
            else:
                out.append(QueryResult(q.id, (ranked or ())[:k]))
        return out
