"""A precomputed TREC run file as a retriever (another team's export, a frozen baseline).

Each query's documents come back in evaluation order (score descending, ties by doc id descending, as
trec_eval reads the file; the rank column is ignored, as trec_eval ignores it) and are cut at k.
A query the file does not contain is, by default, a **failure** ("absent from the run file"): a run that
does not cover the query set must not pass for a retriever that found nothing. ``missing="empty"`` says
explicitly that absence means "retrieved nothing" (scored 0).
"""

from __future__ import annotations

import os
from collections import OrderedDict
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from evalops.errors import ConfigError
from evalops.formats import ranking_order, read_run
from evalops.formats._source import as_source
from evalops.formats.stream import estimated_peak, needs_streaming, whole_query_blocks
from evalops.formats.trec import read_run_table
from evalops.metrics.table_input import keep_doc_hashes, top_k_table
from evalops.retrievers.base import Query, QueryResult
from evalops.util.limits import DEFAULT_MEMORY_BUDGET

__all__ = ["RunFileRetriever", "check_run_file", "scored_by_blocks", "absent_reason", "cut_blocks", "WHOLE_TABLE_SHARE",
           "mark_checked", "was_checked"]

_MISSING_HINT = ("set `missing: empty` only if an absent query really retrieved nothing: each one is then an answer "
                 "scored 0 on every measure and counts against the version, never left out")


class RunFileRetriever:
    """Answers from the TREC run at ``path`` (see the module docstring for ``missing``).

    A file whose in-memory reading would exceed ``memory_budget`` bytes (the ``memory_budget`` setting) is
    read by blocks of whole queries (:mod:`evalops.formats.stream`), each ranked on its own; the rankings
    are the ones the in-memory reading gives.
    """

    remote = False  # a local file: a query's absence is the same on every call (see evalops.retrievers.base)

    def __init__(self, path: str | os.PathLike[str], *, missing: str = "fail",
                 memory_budget: int = DEFAULT_MEMORY_BUDGET):
        if missing not in ("fail", "empty"):
            raise ConfigError(f"run_file: missing must be 'fail' or 'empty', not {missing!r}")
        self.path = Path(path)
        self.missing = missing
        self.memory_budget = memory_budget
        source = as_source(self.path)
        self.streamed = needs_streaming(source, memory_budget)
        self._table: Any = None
        self._by_query: dict[str, tuple[tuple[str, float | None], ...]] | None = None
        if not self.streamed:  # read once; the per-query lists are built only if retrieve() is asked
            self._table = _read_table(self.path, source, memory_budget)
            self.name = self._table.name
            return
        self._by_query = {}
        for run in _runs(source, memory_budget):
            if run is None:  # read again from the start
                self._by_query = {}
                continue
            self._by_query.update(_ranked(run))
            self.name = run.name

    @property
    def columnar(self) -> bool:
        """True when :meth:`table` answers (the file was read in memory, not streamed)."""
        return self._table is not None

    @property
    def _ranked(self) -> dict[str, tuple[tuple[str, float | None], ...]]:
        if self._by_query is None:
            self._by_query = _ranked(self._table.to_run())
        return self._by_query

    def answered(self) -> frozenset[str]:
        """The ids of the queries the file answers (``evalops validate`` sets them against the gold set)."""
        if self._table is not None:
            return frozenset(str(q) for q in self._table.query_ids.tolist())
        return frozenset(self._ranked)

    def __repr__(self) -> str:
        n = len(self._table.query_ids) if self._table is not None else len(self._ranked)
        return f"RunFileRetriever({str(self.path)!r}, {n} queries, missing={self.missing!r})"

    def table(self, query_ids: Sequence[str], k: int) -> tuple[Any, dict[str, str]]:
        """The answers to ``query_ids`` as columns: (a :class:`~evalops.data.RunTable` of their first ``k``
        documents in evaluation order, the failed queries with their reasons), the same answers as
        :meth:`retrieve` gives, with no Python object per row. Only when :attr:`columnar`."""
        if self._table is None:
            raise ValueError(f"{self.path}: streamed by query blocks; use retrieve()")
        cut, _ = top_k_table(self._table, k, query_ids)
        failed: dict[str, str] = {}
        if self.missing == "fail":
            present = set(cut.query_ids.tolist())
            failed = {q: self._absent(q) for q in query_ids if q not in present}
        return cut, failed

    def _absent(self, query_id: str) -> str:
        return absent_reason(self.path, query_id)

    def retrieve(self, queries: Sequence[Query], k: int) -> list[QueryResult]:
        out: list[QueryResult] = []
        for q in queries:
            ranked = self._ranked.get(q.id)
            if ranked is None and self.missing == "fail":
                out.append(QueryResult.failure(q.id, self._absent(q.id)))
            else:
                out.append(QueryResult(q.id, (ranked or ())[:k]))
        return out


def absent_reason(path: str | os.PathLike[str], query_id: str) -> str:
    """Why a query the run file at ``path`` does not contain failed (``missing: fail``)."""
    return f"query {query_id!r} is absent from the run file {path} ({_MISSING_HINT})"


# A run file whose in-memory reading is estimated above this share of the memory budget is scored by the
# pipeline block by block (:func:`cut_blocks`) and never kept whole between planning and scoring: three
# 300 MB files (900 MB each read in memory) held 3 GB at their peak, where blocks hold a few tens of MB.
WHOLE_TABLE_SHARE = 0.25


def scored_by_blocks(path: str | os.PathLike[str], memory_budget: int = DEFAULT_MEMORY_BUDGET) -> bool:
    """Whether the pipeline scores the run file at ``path`` by streamed query blocks (:data:`WHOLE_TABLE_SHARE`)."""
    return estimated_peak(as_source(path)) > memory_budget * WHOLE_TABLE_SHARE


def cut_blocks(path: str | os.PathLike[str], query_ids: Sequence[str], k: int,
               memory_budget: int = DEFAULT_MEMORY_BUDGET) -> Iterator[Any]:
    """The answers of :meth:`RunFileRetriever.table` to ``query_ids``, block by block of whole queries, read
    within ``memory_budget``: each a :class:`~evalops.data.RunTable` of the block's queries among ``query_ids``
    cut at ``k`` (the same rows and ranks as the whole table gives them), or ``None`` before a new reading (a
    run found ungrouped: discard the blocks so far). Queries absent from every block are absent from the file."""
    for block in whole_query_blocks(as_source(path), memory_budget, float32=False):
        if block is None:
            yield None
            continue
        cut, _ = top_k_table(block, k, query_ids)
        hashes = block.__dict__.get("_doc_hashes")
        if hashes is not None and len(cut) == len(block):  # every row kept: the reader's doc hashes still apply
            keep_doc_hashes(cut, hashes)
        yield cut


def check_run_file(path: str | os.PathLike[str], memory_budget: int = DEFAULT_MEMORY_BUDGET) -> None:
    """Read the run file at ``path`` as :class:`RunFileRetriever` reads it, keeping nothing: raises the
    reader's error (an ``InputError`` naming ``file:line`` and what is wrong) for a malformed or empty file.
    A file the pipeline scores by blocks (:func:`scored_by_blocks`) is read by blocks here too, and no table
    of it is kept for later."""
    source = as_source(path)
    if scored_by_blocks(path, memory_budget):
        stamp = _stamp(Path(path))
        if stamp is not None and stamp in _CHECKED:  # (the run's preflight read it, and planning asks again)
            return
        rows = 0
        for block in whole_query_blocks(source, memory_budget, float32=False):
            rows = 0 if block is None else rows + len(block)
        if rows == 0:
            read_run(path)  # raises the reader's error for an empty run
        if stamp is not None:
            _CHECKED.add(stamp)
        return
    _read_table(Path(path), source, memory_budget)  # (a file that needs streaming is scored by blocks)


# The tables read lately, by file stamp, so that the run that checks a file while planning and scores it
# later reads it once; together they hold at most half the memory budget (the oldest go first).
_TABLES: OrderedDict[tuple[str, int, int, int], Any] = OrderedDict()


# The files read by blocks and found well-formed in this process, by file stamp: checked once, however many
# times a run asks (its preflight, then its planning).
_CHECKED: set[tuple[str, int, int, int]] = set()


def mark_checked(path: str | os.PathLike[str]) -> None:
    """Take the file at ``path`` as checked (a caller that knows its bytes were found well-formed before)."""
    stamp = _stamp(Path(path))
    if stamp is not None:
        _CHECKED.add(stamp)


def was_checked(path: str | os.PathLike[str]) -> bool:
    """Whether the file at ``path``, as it is now, was read by blocks and found well-formed in this process."""
    stamp = _stamp(Path(path))
    return stamp is not None and stamp in _CHECKED


def _stamp(path: Path) -> tuple[str, int, int, int] | None:
    """(path, size, modification time, inode) of the file at ``path``; None when it cannot be read."""
    try:
        st = path.stat()
        return (str(path.resolve()), st.st_size, st.st_mtime_ns, st.st_ino)
    except OSError:
        return None


def _read_table(path: Path, source: Any, memory_budget: int) -> Any:
    """The file's :class:`~evalops.data.RunTable` (exact scores), from :data:`_TABLES` while the file is
    unchanged (same path, size, modification time and inode)."""
    key = _stamp(path)
    if key is not None and key in _TABLES:
        _TABLES.move_to_end(key)
        return _TABLES[key]
    table = read_run_table(source, float32=False)
    if key is not None:
        _TABLES[key] = table
        while _TABLES and sum(map(_table_bytes, _TABLES.values())) > memory_budget // 2:
            _TABLES.popitem(last=False)
    return table


def _table_bytes(table: Any) -> int:
    arrays = (table.query_codes, table.doc_codes, table.scores)
    dictionary = table.doc_dictionary
    words = dictionary.nbytes if not isinstance(dictionary, np.ndarray) else 64 * len(dictionary)
    return sum(a.nbytes for a in arrays) + words + 64 * len(table.query_ids)


def _runs(source: Any, memory_budget: int) -> Iterator[Any]:
    """The run in ``source``: one Run when its in-memory reading fits ``memory_budget``, else Runs of whole
    queries block by block (:mod:`evalops.formats.stream`), ``None`` before a new reading (discard the
    Runs so far). An empty run raises the reader's error."""
    if not needs_streaming(source, memory_budget):
        yield read_run(source)
        return
    rows = 0
    for block in whole_query_blocks(source, memory_budget, float32=False):
        if block is None:
            rows = 0
            yield None
            continue
        rows += len(block)
        yield block.to_run()
    if rows == 0:
        read_run(source)  # raises the reader's error for an empty run


def _ranked(run: Any) -> dict[str, tuple[tuple[str, float | None], ...]]:
    """Each query's (doc id, score) pairs in evaluation order (NaN scores as None)."""
    order = ranking_order(run)
    by_query: dict[str, list[tuple[str, float | None]]] = {}
    for q, d, s in zip(run.query_ids[order].tolist(), run.doc_ids[order].tolist(), run.scores[order].tolist()):
        by_query.setdefault(q, []).append((d, None if s != s else s))
    return {q: tuple(v) for q, v in by_query.items()}
