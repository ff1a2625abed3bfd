"""Run files larger than a memory budget, read as blocks of whole queries.

A run sorted (grouped) by query, as retrievers write them, is read in one pass: each segment of the file
(a few tens of MB) is cut after its last complete query, and the rest is carried into the next block. If
a query shows up again after its block was closed, the file is not grouped: the reader says so and
switches to a two-pass mode (pass one spreads the rows over a few bucket files by query, as Arrow IPC in
a temporary folder; pass two reads one bucket at a time). Either way every query is scored from all of
its rows at once, so the per-query values are the ones the in-memory path gives.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Iterator
from typing import Any

import numpy as np

from evalops.data import RunTable
from evalops.errors import DuplicateDocumentError, FormatError, InputError
from evalops.formats._source import Source, as_source
from evalops.formats._table import (
    Columns,
    Refused,
    _fast_plan,
    _first_line,
    doc_hashes,
    fast_chunks,
    first_duplicate_row,
    first_duplicate_row_hashed,
    line_of_row,
    plain_doc_codes,
    ranked_scores,
    read_table_exact,
)
from evalops.formats.trec import RUN_LAYOUT, read_run_table
from evalops.metrics.compute import needs_judged
from evalops.metrics.evaluation import evaluate, evaluate_hits
from evalops.metrics.gold import as_gold
from evalops.metrics.judged import judged_gold, relevant_hits, unshift_judged
from evalops.metrics.parse import parse_measures
from evalops.metrics.strhash import hash_strings
from evalops.metrics.table_input import hits_from_table, keep_doc_hashes, merge_hits
from evalops.util.arrow import available, numeric, strings
from evalops.util.extras import require
from evalops.util.limits import DEFAULT_MEMORY_BUDGET, parse_memory_budget, release_free_memory

__all__ = [
    "parse_memory_budget", "DEFAULT_MEMORY_BUDGET", "needs_streaming", "streams", "STREAM_ABOVE", "run_blocks",
    "whole_query_blocks",
    "NotGrouped", "Reread", "evaluate_run_file",
]

# Peak memory of the in-memory path per byte of (uncompressed) run file, measured on 10 M lines.
IN_MEMORY_FACTOR = 3.0
# An ungrouped run read in memory takes about this much more than a grouped one (every Arrow block's
# dictionary holds most of the queries): 72 MB shuffled, 386 MB against 285 MB grouped; with a margin.
UNGROUPED_FACTOR = 2.0
# Bucket files per budget's worth of estimated in-memory reading, in the two-pass mode: reading a bucket
# back (sorting it into file order, encoding its ids) takes several times its share (2 per budget: 72 MB
# at a 256 MB budget peaked at 466 MB).
BUCKETS_PER_BUDGET = 4
# Compressed TREC runs shrink about this much (gzip -6 on retriever output).
COMPRESSION_RATIO = 5.0


def estimated_size(source: Source) -> float:
    """The file's uncompressed size in bytes (a compressed file counted at :data:`COMPRESSION_RATIO`)."""
    return float(source.size) * (COMPRESSION_RATIO if source.compression is not None else 1.0)


def estimated_peak(source: Source) -> float:
    return estimated_size(source) * IN_MEMORY_FACTOR


def needs_streaming(source: Source, budget: int) -> bool:
    return estimated_peak(source) > budget


# Files larger than this (uncompressed) are streamed even when they would fit the budget: block by block
# is quicker than one big table and takes less than half the memory (100k x 100: 2.6 s and 470 MB against
# 5.0 s and 1.1 GB).
STREAM_ABOVE = 32 << 20


def streams(source: Source, budget: int) -> bool:
    """Whether ``evaluate_run_file`` reads ``source`` by query blocks: it would not fit ``budget`` in
    memory, or it is large enough that blocks are quicker."""
    return needs_streaming(source, budget) or estimated_size(source) > STREAM_ABOVE


class _Unsorted(Exception):
    """A query reappeared after its block was closed."""


class _ClosedQueries:
    """The queries of the blocks closed so far, as 64-bit hashes of their ids in a few sorted arrays, each
    more than twice the next (merged as they grow): 1 M query ids take 8 MB, where a set of Python strings
    took about 70 MB, unaccounted for, and left Python's small-object arenas fragmented once freed. Two ids
    sharing a hash only make a grouped run look ungrouped, so it is read again (exactly): time, never
    correctness."""

    def __init__(self) -> None:
        self.levels: list[np.ndarray] = []

    def holds_any(self, hashes: np.ndarray) -> bool:
        for level in self.levels:
            at = np.minimum(np.searchsorted(level, hashes), len(level) - 1)
            if bool(np.any(level[at] == hashes)):
                return True
        return False

    def add(self, hashes: np.ndarray) -> None:
        if len(hashes) == 0:
            return
        level = np.sort(hashes)
        while self.levels and len(self.levels[-1]) <= 2 * len(level):
            level = np.sort(np.concatenate([self.levels.pop(), level]), kind="stable")  # two sorted runs: a merge
        self.levels.append(level)


def _query_runs(parts: list[tuple[Any, Any, np.ndarray]]) -> tuple[np.ndarray, np.ndarray]:
    """(query codes, query ids) of a block's rows from its parts' runs of equal query ids (``(ids, lengths)``
    each): a query cut between two parts is one run again. Codes number the runs; a query id in two runs of
    the block (not grouped) is found by the caller (:class:`_Unsorted`)."""
    ids = np.concatenate([strings(p[0][0]) for p in parts]) if parts else np.zeros(0, dtype=object)
    lengths = np.concatenate([p[0][1] for p in parts]) if parts else np.zeros(0, dtype=np.int64)
    starts = np.r_[True, ids[1:] != ids[:-1]] if len(ids) else np.zeros(0, dtype=bool)
    run = np.cumsum(starts) - 1
    sizes = np.bincount(run, weights=lengths, minlength=int(starts.sum())).astype(np.int64)
    codes = np.repeat(np.arange(len(sizes), dtype=np.int32), sizes)
    return codes, ids[starts]


def _block(source: Source, layout: Any, parts: list[tuple[Any, Any, np.ndarray]], first_row: int, name: str,
           float32: bool = True) -> RunTable:
    query_codes, query_ids = _query_runs(parts)
    doc_codes, dictionary = plain_doc_codes([p[1] for p in parts])  # (the doc ids are read as plain strings)
    scores = np.concatenate([p[2] for p in parts]).astype(np.float64)
    if float32:
        scores = ranked_scores(scores, source, lambda row: line_of_row(source, layout, first_row + row))
    columns = Columns(query_codes, query_ids, doc_codes, dictionary, scores, None, None, True)
    hashes = doc_hashes(dictionary)  # (one per row: the codes are the rows)
    duplicate = first_duplicate_row_hashed(query_codes, dictionary, hashes)
    if duplicate is not None:
        qid = str(query_ids[query_codes[duplicate]])
        did = str(columns.doc_ids(np.array([duplicate]))[0])
        line = line_of_row(source, layout, first_row + duplicate)
        raise DuplicateDocumentError(qid, did, f"{source.name}:{line}")
    table = RunTable(query_codes, query_ids, doc_codes, dictionary, scores, name, source.name)
    keep_doc_hashes(table, hashes)  # the judged documents are then found by them
    return table


def _sorted_blocks(source: Source, layout: Any, plan: Any, block_bytes: int, name: str, float32: bool = True
                   ) -> Iterator[RunTable]:
    """One block per segment of the file: its whole queries; the rows of its last query, which may go on
    in the next segment, are carried into the next block. Chunks are cut only there, so a chunk's
    dictionary is in one block (a query seen in two dictionaries of a block costs the duplicate check
    a string pass)."""
    closed = _ClosedQueries()
    pending: list[tuple[Any, Any, np.ndarray]] = []
    row = 0  # first row of the next block
    pending_rows = 0

    def closing(parts: list[tuple[Any, Any, np.ndarray]]) -> RunTable:
        block = _block(source, layout, parts, row, name, float32)
        hashes = hash_strings(block.query_ids)  # (a query id in two runs of the block is in it twice)
        ordered = np.sort(hashes)  # (np.unique imports numpy.ma, 0.01 s)
        if closed.holds_any(hashes) or bool(np.any(ordered[1:] == ordered[:-1])):
            raise _Unsorted()
        closed.add(hashes)
        return block

    # the query ids come as runs of equal ids (a run-end encoding): (ids, lengths)
    for q, d, scores, segment_end in fast_chunks(source, layout, plan, block_bytes, plain_docs=True,
                                                 plain_queries=True):
        n = len(d)
        ids, ends = q.values, numeric(q.run_ends).astype(np.int64)
        lengths = np.diff(ends, prepend=0)
        cut = n - int(lengths[-1]) if segment_end and n else 0  # rows [cut, n) are the segment's last query
        if cut == 0:
            if n:
                pending.append(((ids, lengths), d, scores))
                pending_rows += n
            continue
        runs = len(lengths)
        block = closing([*pending, ((ids.slice(0, runs - 1), lengths[:-1]), d.slice(0, cut), scores[:cut])])
        row += pending_rows + cut
        pending = [((ids.slice(runs - 1), lengths[-1:]), d.slice(cut), scores[cut:])]
        pending_rows = n - cut
        yield block
    if pending:
        yield closing(pending)


def _bucketed_blocks(source: Source, layout: Any, plan: Any, block_bytes: int, buckets: int, name: str,
                     float32: bool = True) -> Iterator[RunTable]:
    """Two passes: spread rows over bucket files by query (pass one), then read each bucket (pass two)."""
    import tempfile  # imported here: only the two-pass reading needs it (shutil costs the one-pass path 15 ms)
    import zlib

    import pyarrow as pa
    import pyarrow.compute as pc
    import pyarrow.ipc as ipc

    schema = pa.schema([("q", pa.string()), ("d", pa.string()), ("s", pa.float64()), ("row", pa.int64())])
    with tempfile.TemporaryDirectory(prefix="evalops-buckets-") as folder:
        paths = [os.path.join(folder, f"{b}.arrow") for b in range(buckets)]
        writers = [ipc.new_file(p, schema) for p in paths]
        try:
            row = 0
            for q, d, scores, _ in fast_chunks(source, layout, plan, block_bytes):
                words = q.dictionary.to_pylist()
                bucket_of_word = np.array([zlib.crc32(w.encode()) % buckets for w in words], dtype=np.int64)
                bucket = bucket_of_word[numeric(q.indices)]
                rows = np.arange(row, row + len(q), dtype=np.int64)
                row += len(q)
                q_plain, d_plain = pc.cast(q, pa.string()), pc.cast(d, pa.string())
                for b in range(buckets):
                    take = np.flatnonzero(bucket == b)
                    if take.size:
                        t = pa.array(take)
                        writers[b].write_batch(pa.record_batch(
                            [q_plain.take(t), d_plain.take(t), pa.array(scores[take]), pa.array(rows[take])], schema=schema
                        ))
        finally:
            for w in writers:
                w.close()
        for p in paths:
            table = ipc.open_file(p).read_all()
            if table.num_rows == 0:
                continue
            order = np.argsort(numeric(table.column("row")), kind="stable")  # file order within the bucket
            table = table.take(pa.array(order))
            q = pc.dictionary_encode(table.column("q")).combine_chunks()
            d = pc.dictionary_encode(table.column("d")).combine_chunks()
            scores = numeric(table.column("s"))
            query_codes = numeric(q.indices).astype(np.int32)
            query_ids = strings(q.dictionary)
            columns = Columns(query_codes, query_ids, numeric(d.indices).astype(np.int64), d.dictionary,
                              scores.astype(np.float32 if float32 else np.float64), None, None, True)
            duplicate = first_duplicate_row(columns, None)
            if duplicate is not None:
                qid = str(query_ids[query_codes[duplicate]])
                did = str(columns.doc_ids(np.array([duplicate]))[0])
                line = line_of_row(source, layout, int(numeric(table.column("row"))[duplicate]))
                raise DuplicateDocumentError(qid, did, f"{source.name}:{line}")
            yield RunTable(query_codes, query_ids, columns.doc_codes, d.dictionary, columns.values, name, source.name)


class NotGrouped(InputError):
    """The run is not grouped by query; read it with ``grouped=False`` (two passes)."""


class Reread(Exception):
    """A later block needs the exact parser: discard the blocks so far and read the file in memory."""


def run_blocks(
    path: str | os.PathLike[str] | Source,
    memory_budget: int = DEFAULT_MEMORY_BUDGET,
    *,
    grouped: bool = True,
    name: str | None = None,
    notice: Callable[[str], None] | None = None,
    float32: bool = True,
) -> Iterator[RunTable]:
    """Blocks of whole queries of a TREC run file, each a :class:`RunTable`, within ``memory_budget``.

    Every query's rows are in exactly one block. ``grouped=True`` reads in one pass and raises
    :class:`NotGrouped` when a query reappears after its block (blocks already yielded must then be
    discarded); ``grouped=False`` reads in two passes through bucket files. ``notice`` hears how the file
    is read. ``float32``: scores at the precision trec_eval ranks by (else exact, as ``read_trec_run``).
    Errors are the in-memory reader's, with line numbers.
    """
    source = as_source(path)
    layout = RUN_LAYOUT
    plan = _fast_plan(source, layout)
    if plan is None or plan[2]:
        if notice:
            notice(f"{source.name}: not one-separator TREC lines, so it is read in memory by the exact parser")
        yield read_run_table(source, name, allow_empty=True, float32=float32)
        return
    if name is None:
        name = _first_tag(source, plan[0]) or (source.path.stem if source.path is not None else "stdin")
    block_bytes = int(max(1 << 16, min(memory_budget / (IN_MEMORY_FACTOR * 16), 64 << 20)))
    yielded = 0
    try:
        if grouped:
            try:
                for block in _sorted_blocks(source, layout, plan, block_bytes, name, float32):
                    yielded += 1
                    yield block
            except _Unsorted:
                raise NotGrouped(
                    f"{source.name}: the run is not grouped by query; it is read again "
                    "(sort it by query id for one pass)"
                ) from None
            if notice:  # said once it is true: a run found ungrouped halfway is read again, and says how
                notice(f"{source.name}: streamed in one pass, by query blocks of {_size(block_bytes)} "
                       f"(memory budget {_size(memory_budget)})")
        else:
            buckets = max(2, BUCKETS_PER_BUDGET * int(np.ceil(estimated_peak(source) / memory_budget)))
            if notice:
                notice(f"{source.name}: not grouped by query, so read in two passes ({buckets} bucket files in "
                       "a temporary folder); sort it by query id for one pass")
            for block in _bucketed_blocks(source, layout, plan, block_bytes, buckets, name, float32):
                yielded += 1
                yield block
    except Refused:
        read_table_exact(source, layout)  # raises, naming the line; if it does not, read in memory
        if yielded:
            raise Reread() from None
        if notice:
            notice(f"{source.name}: read in memory by the exact parser (a line's shape needs it)")
        yield read_run_table(source, name, allow_empty=True, float32=float32)


def whole_query_blocks(
    path: str | os.PathLike[str] | Source,
    memory_budget: int = DEFAULT_MEMORY_BUDGET,
    *,
    name: str | None = None,
    notice: Callable[[str], None] | None = None,
    float32: bool = True,
) -> Iterator[RunTable | None]:
    """The blocks of :func:`run_blocks`, starting over by itself when it must: a run that turns out not
    grouped by query is read again in memory if it fits ``memory_budget`` (counted at
    :data:`UNGROUPED_FACTOR` times a grouped run's estimate), else in two passes, and one
    whose later block needs the exact parser is read in memory. ``None`` is yielded before a new reading:
    the blocks yielded so far are to be discarded."""
    source = as_source(path)
    try:
        try:
            yield from run_blocks(source, memory_budget, name=name, notice=notice, float32=float32)
        except NotGrouped:
            yield None
            if estimated_peak(source) * UNGROUPED_FACTOR <= memory_budget:
                if notice:
                    notice(f"{source.name}: not grouped by query, so read in memory (it fits the memory budget)")
                yield read_run_table(source, name, allow_empty=True, float32=float32)
                return
            # the two-pass reading says so through ``notice``
            yield from run_blocks(source, memory_budget, grouped=False, name=name, notice=notice, float32=float32)
    except Reread:
        yield None
        yield read_run_table(source, name, allow_empty=True, float32=float32)


def _size(n: float) -> str:
    for unit, scale in (("GB", 1 << 30), ("MB", 1 << 20), ("KB", 1 << 10)):
        if n >= scale:
            return f"{n / scale:.3g} {unit}"
    return f"{int(n)} B"


def _first_tag(source: Source, delimiter: bytes) -> str | None:
    first = _first_line(source)
    if first is None:
        return None
    fields = first.split(delimiter)
    return fields[5].decode("utf-8", "replace") if len(fields) > 5 else None


def evaluate_run_file(
    qrels: Any,
    run: str | os.PathLike[str],
    measures: Iterable[Any],
    policy: Any = None,
    *,
    memory_budget: int | None = None,
    allow_empty: bool = False,
    progress: Callable[[int, int], None] | None = None,
    notice: Callable[[str], None] | None = None,
) -> Any:
    """``evaluate`` on a TREC run file, read within ``memory_budget`` bytes (default 1 GB).

    A file whose in-memory reading would exceed the budget, or larger than :data:`STREAM_ABOVE`, is
    streamed by query blocks (one pass when grouped by query; else in memory when it fits the budget, or
    in two passes); the per-query values are the same either way. ``-`` reads standard input. ``notice``
    hears how the file was read. Without pyarrow (the base install) a run that fits the budget is read in
    memory, whatever its size; one that does not needs the ``fast`` extra to be streamed.
    """
    budget = DEFAULT_MEMORY_BUDGET if memory_budget is None else int(memory_budget)
    source = as_source(run)
    if not streams(source, budget) or (not available() and not needs_streaming(source, budget)):
        table = read_run_table(source, allow_empty=allow_empty)
        return evaluate(qrels, table, measures, policy, progress=progress)
    require("pyarrow", "fast", f"stream {source.name} by query blocks (read in memory it takes about "
                               f"{_size(estimated_peak(source))}, more than the memory budget leaves for it)")
    gold = as_gold(qrels)
    if len(gold) == 0:
        raise InputError("the qrels hold no judgments, so there is nothing to evaluate against")
    name = None

    parsed = parse_measures([measures] if isinstance(measures, str) else list(measures))
    # Measures that look at unjudged documents need every judged one located, not only the relevant ones.
    locate_gold, shift = judged_gold(gold) if any(needs_judged(m) for m in parsed) else (gold, None)

    retrieved = np.zeros(len(gold), dtype=np.int64)
    parts: list[Any] = []
    recent: list[Any] = []  # the last blocks' hits, joined into one part every JOINED_BLOCKS blocks
    rows = 0
    for block in whole_query_blocks(source, budget, notice=notice):
        if block is None:  # read again from the start (two passes, or in memory)
            parts, recent, rows, retrieved[:] = [], [], 0, 0
            continue
        recent.append(hits_from_table(locate_gold, block, retrieved_into=retrieved))
        if len(recent) == JOINED_BLOCKS:
            parts.append(_compact(merge_hits(recent, len(gold), retrieved)))
            recent.clear()
        rows += len(block)
        name = block.name
    block = None  # (the last block is not held while the queries are scored)
    if recent:
        parts.append(_compact(merge_hits(recent, len(gold), retrieved)))
        recent.clear()
    if rows == 0 and not allow_empty:
        raise FormatError(
            "the run is empty (no ranked documents); check the retriever's output, or allow an empty run "
            "explicitly (--allow-empty)",
            path=source.name,
        )
    release_free_memory()  # what the run's reading freed goes back before the scoring takes its share
    hits = merge_hits(parts, len(gold), retrieved)
    parts.clear()  # merged: what the blocks' hits held is free for the scoring
    judged = None
    if shift is not None:
        judged = unshift_judged(hits, shift)
        hits = relevant_hits(judged)
    return evaluate_hits(gold, hits, parsed, policy, progress=progress, run_name=name, judged=judged)


# Blocks whose hits are joined into one part while the run is streamed. Each part kept is a few small Python
# objects, and one left in each block kept Python's small-object arenas from going back to the system: 1 M
# queries x 100 (2,600 blocks) ended its reading with 77 arenas (80 MB) holding 15 MB of objects.
JOINED_BLOCKS = 64


def _compact(hits: Any) -> Any:
    """A block's hits with query indices and ranks as int32 (merged back into int64 by ``merge_hits``):
    what the streamed run's hits hold until it is scored, 16 bytes a located document instead of 24."""
    small = (len(hits.qidx) == 0 or (int(hits.qidx.max()) < 2**31 and int(hits.rank.max()) < 2**31))
    if not small:
        return hits
    return type(hits)(hits.qidx.astype(np.int32), hits.rank.astype(np.int32), hits.grade, hits.retrieved,
                      hits.ignored_query_ids)
