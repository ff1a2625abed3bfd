"""Delimited id/id/number tables (TREC runs and qrels, BEIR qrels TSVs) read into integer codes.

Two parsers give the same result:

* **the fast path**: pyarrow's CSV reader with an explicit schema. Query and document ids are
  dictionary-encoded by Arrow as it parses, so ids arrive as the integer codes the metric kernels use;
  numbers are converted in Arrow; the duplicate check works on the codes. No Python runs per row. It
  takes files whose fields are separated by exactly one space (or one tab) everywhere, which is what
  retrievers and ``trec_eval`` users write. While Arrow reads, the bytes are checked for anything else
  (a second kind of whitespace, doubled or leading/trailing separators); any of it sends the file to
* **the exact parser**: a line-by-line pass that splits fields the way ``trec_eval`` does (any run of
  ASCII whitespace; tabs only for BEIR TSVs) and names the line of every problem.

Anything the fast path refuses (a conversion error, a non-finite score, a field count that changes) is
re-read by the exact parser, which either accepts it with the same result or raises a ``FormatError``
with the line number. A duplicate found on the codes is located by counting lines up to its row.
"""

from __future__ import annotations

import re
import sys
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from evalops.data import first_repeated_row
from evalops.errors import FormatError
from evalops.formats._source import Source
from evalops.metrics.strhash import hash_strings, pair_keys
from evalops.util.arrow import _compute, available, call, compute_options, doc_strings, from_numpy, numeric, strings
from evalops.util.safetext import ARROW_UNSAFE_ID, refuse_unsafe

__all__ = ["Layout", "Columns", "read_table", "read_table_exact", "line_of_row"]

INT32_MIN, INT32_MAX = -(2**31), 2**31 - 1
_NUMBER = re.compile(rb"[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?\Z")
_BLOCK = 2 << 20  # Arrow's parse block: on two cores 2 MB blocks parse about 20% faster than 4-6 MB ones
SEGMENT = 16 << 20  # bytes of (decompressed) file per CSV read on the in-memory path (64 MB: 45% slower)
SMALL_FILE = 4 << 20  # bytes; below this the exact parser alone is quicker than importing pyarrow
# once pyarrow's compute and CSV modules are imported (a pipeline run has them), the Arrow path is quicker
# from here: 100,000 qrels lines (1.5 MB) 0.05-0.1 s against 0.47 s CPU line by line
SMALL_FILE_ARROW_LOADED = 64 << 10


@dataclass(frozen=True)
class Layout:
    """A table format: which fields hold what, and how many fields a line may have."""

    description: str  # e.g. "TREC run: query_id Q0 doc_id rank score tag"
    field_counts: tuple[int, ...]  # allowed counts; the last one also allows more when ``extra_fields``
    query: dict[int, int]  # field count -> index of the query id
    doc: dict[int, int]
    value: dict[int, int]
    value_kind: str  # "score" (a finite float) or "grade" (an integer within int32)
    value_name: str
    tab_separated: bool = False  # BEIR TSV: split on tabs only, strip each field
    extra_fields: bool = False  # fields after the last are ignored (trec_eval's run files)
    header: tuple[str, ...] | None = None  # a first line equal to this is skipped
    tag: int | None = None  # the field whose first-line value names the run

    def accepts(self, count: int) -> bool:
        if count in self.field_counts:
            return True
        return self.extra_fields and count > max(self.field_counts)

    def shape(self, count: int) -> int:
        return count if count in self.field_counts else max(self.field_counts)

    def expected(self) -> str:
        counts = " or ".join(str(c) for c in self.field_counts)
        return f"{counts}{' or more' if self.extra_fields else ''} columns"


@dataclass(frozen=True, eq=False)
class Columns:
    """A table as codes: ``query_ids[query_codes]`` and ``doc_dictionary[doc_codes]`` are the rows' ids.

    Query codes number distinct query ids in order of first appearance. Doc codes index
    ``doc_dictionary`` (a pyarrow string array or chunked array); one doc id may have several codes (one
    per Arrow block), but rows of one query compare equal exactly when their doc codes do.
    """

    query_codes: np.ndarray
    query_ids: np.ndarray
    doc_codes: np.ndarray
    doc_dictionary: Any
    values: np.ndarray
    tag: str | None
    lines: np.ndarray | None  # line number of each row (exact parser only)
    fast: bool

    def __len__(self) -> int:
        return len(self.query_codes)

    def doc_ids(self, rows: np.ndarray | None = None) -> np.ndarray:
        """Doc ids of ``rows`` (all rows when None) as an object array of str."""
        codes = self.doc_codes if rows is None else self.doc_codes[rows]
        return doc_strings(self.doc_dictionary, codes)

    def query_id_rows(self) -> np.ndarray:
        return self.query_ids[self.query_codes]


# -- the exact parser ------------------------------------------------------------------------------


def _split(layout: Layout, line: bytes) -> list[bytes]:
    if layout.tab_separated:
        return [f.strip() for f in line.split(b"\t")]
    return line.split()


def _number(layout: Layout, token: bytes) -> float | int | str:
    """The value, or a message saying what is wrong with it."""
    shown = token.decode("utf-8", "replace")
    if not _NUMBER.match(token):
        kind = "an integer" if layout.value_kind == "grade" else "a number"
        return f"{layout.value_name}: {shown!r} is not {kind}"
    value = float(token)
    if layout.value_kind == "score":
        if not np.isfinite(value):
            return f"{layout.value_name}: {shown!r} is not a finite number (scores must be finite)"
        return value
    if not re.fullmatch(rb"[+-]?\d+", token):  # 1.0, 1e2: a float where the format has integers
        return f"{layout.value_name}: {shown!r} is not an integer (grades are written as integers, e.g. 0, 1, 2)"
    grade = int(token)
    if not INT32_MIN <= grade <= INT32_MAX:
        return f"{layout.value_name}: {shown!r} is outside the 32-bit integer range; use small integer grades"
    return grade


def _is_header(layout: Layout, fields: list[bytes]) -> bool:
    return layout.header is not None and [f.strip().lower() for f in fields] == [h.encode() for h in layout.header]


def read_table_exact(source: Source, layout: Layout) -> Columns:
    """Parse line by line; every problem raises ``FormatError`` with the line number."""
    q_index: dict[str, int] = {}
    d_index: dict[str, int] = {}
    q_codes: list[int] = []
    d_codes: list[int] = []
    values: list[float | int] = []
    lines: list[int] = []
    tag: str | None = None
    shape: int | None = None
    for lineno, line, fields in _data_lines(source, layout):
        count = len(fields)
        if not layout.accepts(count) or (shape is not None and layout.shape(count) != shape):
            want = f"{shape} columns like the first line" if layout.accepts(count) else layout.expected()
            shown = line[:120].decode("utf-8", "replace")
            raise FormatError(
                f"expected {want} ({layout.description}) but found {count}: {shown!r}", path=source.name, line=lineno
            )
        shape = layout.shape(count)
        qi, di, vi = layout.query[shape], layout.doc[shape], layout.value[shape]
        q_raw, d_raw = fields[qi], fields[di]
        if not q_raw or not d_raw:
            raise FormatError(f"empty {'query id' if not q_raw else 'doc id'} ({layout.description})", path=source.name, line=lineno)
        q = source.decode(q_raw, lineno)
        d = source.decode(d_raw, lineno)
        if q not in q_index:
            refuse_unsafe(q, "query id", path=source.name, line=lineno)
        if d not in d_index:
            refuse_unsafe(d, "doc id", path=source.name, line=lineno)
        value = _number(layout, fields[vi])
        if isinstance(value, str):
            raise FormatError(f"{value} ({layout.description})", path=source.name, line=lineno)
        if tag is None and layout.tag is not None and shape > layout.tag:
            tag = fields[layout.tag].decode("utf-8", "replace")
        q_codes.append(q_index.setdefault(q, len(q_index)))
        d_codes.append(d_index.setdefault(d, len(d_index)))
        values.append(value)
        lines.append(lineno)
    dtype = np.int64 if layout.value_kind == "grade" else np.float64
    dictionary = np.empty(len(d_index), dtype=object)
    dictionary[:] = list(d_index)
    return Columns(
        query_codes=np.array(q_codes, dtype=np.int32),
        query_ids=np.array(list(q_index), dtype=object),
        doc_codes=np.array(d_codes, dtype=np.int64),
        doc_dictionary=dictionary,
        values=np.array(values, dtype=dtype),
        tag=tag,
        lines=np.array(lines, dtype=np.int64),
        fast=False,
    )


def line_of_row(source: Source, layout: Layout, row: int) -> int | None:
    """The line number of data row ``row`` (0-based), by an exact pass that stops there."""
    for seen, (lineno, _line, _fields) in enumerate(_data_lines(source, layout)):
        if seen == row:
            return lineno
    return None


def _data_lines(source: Source, layout: Layout) -> Iterator[tuple[int, bytes, list[bytes]]]:
    """``(line number, line, fields)`` of every data line: blank lines and a header line skipped."""
    first = True
    for lineno, line in source.lines():
        fields = _split(layout, line)
        if not fields or fields == [b""]:
            continue
        if first:
            first = False
            if _is_header(layout, fields):
                continue
        yield lineno, line, fields


# -- the fast path ---------------------------------------------------------------------------------


def _first_line(source: Source) -> bytes | None:
    gen = source.lines()
    try:
        for _, line in gen:
            if line.strip():
                return line
    finally:
        gen.close()
    return None


def _fast_plan(source: Source, layout: Layout) -> tuple[bytes, int, bool] | None:
    """(delimiter, field count, header present) when the fast path may take the file, else None."""
    first = _first_line(source)
    if first is None:
        return None
    has_tab, has_space = b"\t" in first, b" " in first
    if layout.tab_separated:
        if has_space or not has_tab:
            return None
        delimiter = b"\t"
    elif has_tab == has_space:
        return None
    else:
        delimiter = b"\t" if has_tab else b" "
    fields = first.split(delimiter)
    header = _is_header(layout, fields)
    if header:
        return delimiter, len(fields), True
    if not layout.accepts(len(fields)):
        return None
    return delimiter, len(fields), False


class Refused(Exception):
    """Input the fast path does not take: the exact parser reads it (and names a bad line, if any)."""


def segments(source: Source, size: int) -> Iterator[tuple[bytes, int, int]]:
    """The decompressed bytes as ``(buffer, start, end)``: ``buffer[start:end]`` is whole lines, about
    ``size`` bytes, in file order. The pieces are read ``size`` bytes at a time and parsed where they lie;
    only the line that crosses from one piece into the next is copied (a short segment of its own)."""
    tail = b""  # the start of a line that the next piece ends
    for piece in source.chunks(size):
        last = piece.rfind(b"\n")
        if last < 0:
            tail += piece
            continue
        start = 0
        if tail:
            first = piece.find(b"\n")
            yield tail + piece[: first + 1], 0, len(tail) + first + 1
            start = first + 1
        if start <= last:
            yield piece, start, last + 1
        tail = piece[last + 1 :]
    if tail:
        yield tail, 0, len(tail)


def fast_chunks(source: Source, layout: Layout, plan: tuple[bytes, int, bool], segment_bytes: int,
                plain_docs: bool = False, plain_queries: bool = False) -> Iterator[tuple[Any, Any, np.ndarray, bool]]:
    """(query ids, doc ids, values, last of its segment) per Arrow block, the ids dictionary-encoded (the
    integer codes the kernels use), the values a numpy array (float64 scores, finite; int64 grades, within
    int32). Raises :class:`Refused` where the exact parser could read the file otherwise. ``plain_docs``:
    the doc ids as a plain string array (a run's doc ids are nearly all distinct, and encoding them took
    about half of Arrow's parsing; :func:`plain_doc_codes` and :func:`first_duplicate_row_hashed` then
    stand in for the dictionary's codes). ``plain_queries``: the query ids as runs of equal ids (a
    run-end-encoded array, ``values`` and ``run_ends``), for a run grouped by query: encoding the query ids
    took about a tenth of the parsing, their runs a quarter of that.

    Each segment of ``segment_bytes`` is parsed by the multi-threaded CSV reader. Only the query and doc
    ids are hashed; the other fields the exact parser splits (Q0, rank, tag, iteration) are counted by
    Arrow but not converted where :func:`no_empty_fields` finds no place in the segment's bytes for an
    empty one (a doubled, leading or trailing separator), and read as bytes elsewhere (a BEIR TSV, a
    segment with CRLF line ends or blank lines): an empty field is then read as a null, so the null counts
    Arrow keeps while it parses say whether there is one. Whitespace the exact parser
    splits on but Arrow does not (a tab, vertical tab or form feed between space-separated fields) is
    looked for in the raw bytes, one ``memchr`` per kind; in a BEIR TSV, whose fields the exact parser
    strips, ids are checked for whitespace at either end (on the dictionaries, not the rows)."""
    import pyarrow as pa
    import pyarrow.csv as csv

    delimiter, count, header = plan
    if header:
        count = max(layout.field_counts)  # the header's own count (BEIR: 3)
    shape = layout.shape(count)
    names = [f"f{i}" for i in range(count)]
    checked = names[:shape]  # the fields the exact parser would see; later ones are ignored by both
    qf, df, vf = names[layout.query[shape]], names[layout.doc[shape]], names[layout.value[shape]]
    ids = pa.dictionary(pa.int32(), pa.string())
    types = {name: pa.binary() for name in checked}
    types.update({qf: pa.string() if plain_queries else ids, df: pa.string() if plain_docs else ids,
                  vf: pa.float64() if layout.value_kind == "score" else pa.int64()})
    forbidden = _forbidden_bytes(layout, delimiter)
    parse = csv.ParseOptions(delimiter=delimiter.decode(), quote_char=False, double_quote=False, escape_char=False)
    convert = csv.ConvertOptions(
        column_types=types, include_columns=checked, null_values=[""], strings_can_be_null=True,
        quoted_strings_can_be_null=True, check_utf8=True,
    )
    # (no field of a segment no_empty_fields passes is empty: its strings are not looked at as nulls)
    lean = csv.ConvertOptions(column_types=types, include_columns=[qf, df, vf], null_values=[""], check_utf8=True)
    read_block = min(_BLOCK, max(1 << 10, segment_bytes // 4))
    first = True
    try:
        for buffer, start, end in segments(source, segment_bytes):
            if any(_holds(buffer, start, end, byte) for byte in forbidden):
                raise Refused()
            read = csv.ReadOptions(column_names=names, block_size=read_block, skip_rows=1 if header and first else 0)
            first = False
            # the fields only checked (Q0, rank, tag; iteration) are converted only where a field may be empty
            options = (lean if not layout.tab_separated and no_empty_fields(buffer, start, end, delimiter)
                       else convert)
            segment = pa.py_buffer(buffer).slice(start, end - start)
            # the streaming reader: read_csv's threads parse in parallel, at about a fifth more CPU in all
            batches = csv.open_csv(pa.BufferReader(segment), read_options=read, parse_options=parse,
                                   convert_options=options)
            del segment, buffer
            batch = _next_batch(batches)
            while batch is not None:
                following = _next_batch(batches)
                qc, dc, values = _checked_batch(batch, layout, (qf, df, vf), plain_queries)
                yield qc, dc, values, following is None
                batch = following
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError, pa.ArrowTypeError):
        raise Refused() from None


def _forbidden_bytes(layout: Layout, delimiter: bytes) -> tuple[bytes, ...]:
    """The bytes whose presence in a segment sends the file to the exact parser: whitespace it splits on
    and Arrow does not, and (grades) a hexadecimal prefix Arrow would read as an integer."""
    if layout.tab_separated:
        forbidden: tuple[bytes, ...] = (b"\x0b", b"\x0c")
    else:
        forbidden = (b"\t", b"\x0b", b"\x0c") if delimiter == b" " else (b" ", b"\x0b", b"\x0c")
    if layout.value_kind == "grade":  # Arrow reads 0x1 as an integer; the exact parser (and the format) do not
        forbidden = (*forbidden, b"0x", b"0X")
    return forbidden


def _holds(buffer: bytes, start: int, end: int, pattern: bytes) -> bool:
    """Whether ``buffer[start:end]`` holds ``pattern``. A two-byte one (``0x``) is first looked for by its
    last byte alone: a search for ``0x`` stops at every ``0`` of the digits (0.04 s for 800,000 judgments),
    one for ``x`` at the few letters."""
    if len(pattern) == 2 and buffer.find(pattern[1:], start + 1, end) < 0:
        return False
    return buffer.find(pattern, start, end) >= 0


def _checked_batch(batch: Any, layout: Layout, fields: tuple[str, str, str], plain_queries: bool
                   ) -> tuple[Any, Any, np.ndarray]:
    """One Arrow block's query ids, doc ids and values, or :class:`Refused` where the exact parser would
    read it otherwise (an empty field, an id with whitespace at either end in a TSV or an unsafe character,
    a score that is not finite, a grade outside int32)."""
    if any(column.null_count for column in batch.columns):
        raise Refused()  # an empty field
    qf, df, vf = fields
    qc, dc, vc = batch.column(qf), batch.column(df), batch.column(vf)
    if plain_queries:
        qc = call("run_end_encode", qc)
    if layout.tab_separated and any(_matches(id_strings(c), "^\\s|\\s$") for c in (qc, dc)):
        raise Refused()
    if unsafe_ids(id_strings(qc)) or unsafe_ids(id_strings(dc)):
        raise Refused()  # the exact parser names the line and the character
    values = numeric(vc)
    if layout.value_kind == "score":
        if values.size and not np.isfinite(values).all():
            raise Refused()
    elif values.size and (values.min() < INT32_MIN or values.max() > INT32_MAX):
        raise Refused()
    return qc, dc, values


_SCANNED = 1 << 20  # bytes compared at a time by no_empty_fields (its boolean arrays stay in cache)


def no_empty_fields(buffer: bytes, start: int, end: int, delimiter: bytes) -> bool:
    """Whether no line of ``buffer[start:end]`` (whole lines) can hold an empty field: it neither starts
    nor ends with ``delimiter``, and no two bytes in a row are ASCII whitespace or control characters (a
    doubled separator, one beside a line end). Arrow then needs to convert only the ids and the value: the
    fields between them still count (Arrow refuses a line with another number of fields), but an empty one
    is no longer seen as a null. False also for blank lines and CRLF line ends (two such bytes in a row),
    where the null counts of every field decide as before. Three numpy steps a megabyte (0.09 s CPU for
    10 M run lines, where converting Q0, rank and tag took 0.17 s)."""
    if end <= start:
        return True
    if buffer[start] == delimiter[0] or buffer[end - 1] == delimiter[0]:
        return False
    data = np.frombuffer(buffer, dtype=np.uint8, count=end - start, offset=start)
    for lo in range(0, len(data) - 1, _SCANNED):
        spaces = data[lo:lo + _SCANNED + 1] <= 0x20  # one byte more: a pair across the cut is seen
        if bool(np.any(spaces[:-1] & spaces[1:])):
            return False
    return True


def _next_batch(reader: Any) -> Any:
    """The reader's next record batch with rows, or None at the end."""
    for batch in reader:
        if batch.num_rows:
            return batch
    return None


def unsafe_ids(ids: Any) -> bool:
    """Whether an Arrow string array (or chunked array) of ids holds a character ids may not hold
    (:func:`evalops.util.safetext.refuse_unsafe`); checked on the dictionaries, not the rows. ASCII ids are
    checked on their bytes in one numpy pass (a regular expression over 2 M ids took 0.66 s), then byte kind
    by byte kind only where it finds another than printable ASCII; the regular expression runs only over an
    array with a byte of 0x80 or more (C1 controls, a byte order mark)."""
    import pyarrow as pa

    for chunk in ids.chunks if isinstance(ids, pa.ChunkedArray) else [ids]:
        if not len(chunk) or chunk.buffers()[2] is None:
            continue
        offsets = np.frombuffer(chunk.buffers()[1], dtype=np.int64 if pa.types.is_large_string(chunk.type)
                                else np.int32)
        data = np.frombuffer(chunk.buffers()[2], dtype=np.uint8)[
            int(offsets[chunk.offset]):int(offsets[chunk.offset + len(chunk)])]
        if data.size == 0 or not bool(np.any((data - np.uint8(0x20)) >= np.uint8(0x5F))):
            continue  # printable ASCII only (a control byte wraps to 0xE0 or more, 0x7F and up to 0x5F or more)
        if bool((data < 0x20).any()) or bool((data == 0x7F).any()):
            return True
        if bool((data >= 0x80).any()) and _matches(chunk, ARROW_UNSAFE_ID):
            return True
    return False


def _matches(strings: Any, pattern: str) -> bool:
    """Whether any of an Arrow string array's values matches the regular expression ``pattern`` (RE2)."""
    found = call("match_substring_regex", strings, options=compute_options("MatchSubstringOptions", pattern))
    return bool(call("any", found).as_py())


def _read_fast(source: Source, layout: Layout, arrow_ids: bool = False) -> tuple[Columns, np.ndarray | None] | None:
    """The Arrow path; None when the exact parser must decide. ``arrow_ids``: keep the query ids an Arrow
    string array (no Python string per query), and the doc ids plain strings, one per row (no dictionary:
    the judgments' doc ids are nearly all distinct, and encoding them was most of their reading); the
    spans are then None, and the duplicate check is :func:`first_duplicate_row_hashed`'s."""
    plan = _fast_plan(source, layout)
    if plan is None:
        return None
    try:  # (q, d, values, segment end)
        parts = list(fast_chunks(source, layout, plan, SEGMENT, plain_docs=arrow_ids))
    except Refused:
        return None
    tag = None
    if layout.tag is not None and not plan[2]:
        first = _first_line(source)
        if first is not None:
            fields = first.split(plan[0])
            tag = fields[layout.tag].decode("utf-8", "replace") if len(fields) > layout.tag else None
    if parts:
        values = np.concatenate([p[2] for p in parts])
    else:
        values = np.zeros(0, dtype=np.float64 if layout.value_kind == "score" else np.int64)
    query_codes, query_ids, spans = _unify_queries([p[0] for p in parts], arrow_ids)
    doc_codes, doc_dictionary = (plain_doc_codes if arrow_ids else _doc_codes)([p[1] for p in parts])
    del parts
    return Columns(
        query_codes=query_codes,
        query_ids=query_ids,
        doc_codes=doc_codes,
        doc_dictionary=doc_dictionary,
        values=values,
        tag=tag,
        lines=None,
        fast=True,
    ), None if arrow_ids else spans


def _unify_queries(chunks: Sequence[Any], arrow_ids: bool = False) -> tuple[np.ndarray, Any, np.ndarray]:
    """Global query codes from Arrow's per-block dictionaries; also which queries span several blocks.
    The query ids: an object array of str, or with ``arrow_ids`` an Arrow string array."""
    import pyarrow as pa

    if not chunks:
        return np.zeros(0, dtype=np.int32), np.zeros(0, dtype=object), np.zeros(0, dtype=bool)
    dictionaries = [c.dictionary for c in chunks]
    encoded = call("dictionary_encode", pa.concat_arrays(dictionaries))
    global_of_local = numeric(encoded.indices).astype(np.int32)
    query_ids = encoded.dictionary if arrow_ids else strings(encoded.dictionary)
    parts = []
    start = 0
    for c in chunks:
        remap = global_of_local[start : start + len(c.dictionary)]
        start += len(c.dictionary)
        parts.append(remap[numeric(c.indices)])
    codes = np.concatenate(parts)
    spans = np.bincount(global_of_local, minlength=len(query_ids)) > 1
    used = np.bincount(codes, minlength=len(query_ids)) > 0
    if not used.all():  # a sliced block keeps its whole dictionary: drop the ids without rows
        renumber = (np.cumsum(used) - 1).astype(np.int32)
        kept = call("take", query_ids, from_numpy(np.flatnonzero(used))) if arrow_ids else query_ids[used]
        codes, query_ids, spans = renumber[codes], kept, spans[used]
    return codes, query_ids, spans


def _doc_codes(chunks: Sequence[Any]) -> tuple[np.ndarray, Any]:
    import pyarrow as pa

    if not chunks:
        return np.zeros(0, dtype=np.int64), pa.array([], type=pa.string())
    sizes = [len(c.dictionary) for c in chunks]
    total = sum(sizes)
    dtype = np.int32 if total < 2**31 else np.int64
    offsets = np.cumsum([0, *sizes[:-1]])
    codes = np.concatenate([numeric(c.indices).astype(dtype) + dtype(o) for c, o in zip(chunks, offsets)])
    return codes, pa.chunked_array([c.dictionary for c in chunks], type=pa.string())


def id_strings(chunk: Any) -> Any:
    """The id strings of one Arrow block's id column, each distinct id once where Arrow dictionary-encoded
    them (query ids; qrels' doc ids) and every row's where it did not (a streamed run's doc ids): what a
    check on the ids of the fast path looks at."""
    import pyarrow as pa

    if pa.types.is_dictionary(chunk.type):
        return chunk.dictionary
    return chunk.values if pa.types.is_run_end_encoded(chunk.type) else chunk


def plain_doc_codes(chunks: Sequence[Any]) -> tuple[np.ndarray, Any]:
    """Doc codes for plain (not dictionary-encoded) doc id chunks: each row its own code, the chunks the
    dictionary. Codes then never repeat, which keeps :class:`~evalops.data.RunTable`'s promise (two rows of
    one query name the same document exactly when their codes are equal) once
    :func:`first_duplicate_row_hashed` has found no repeated pair."""
    import pyarrow as pa

    total = sum(len(c) for c in chunks)
    return np.arange(total, dtype=np.int32 if total < 2**31 else np.int64), pa.chunked_array(chunks, type=pa.string())


# -- duplicates ------------------------------------------------------------------------------------


def doc_hashes(docs: Any) -> np.ndarray:
    """:func:`~evalops.metrics.strhash.hash_strings` of plain doc ids (an Arrow string array or chunked
    array, one per row), chunk by chunk: no copy of the whole column."""
    chunks = docs.chunks if hasattr(docs, "chunks") else [docs]
    if not chunks:
        return np.zeros(0, dtype=np.uint64)
    return np.concatenate([hash_strings(chunk) for chunk in chunks])


def first_duplicate_row_hashed(query_codes: np.ndarray, docs: Any, hashes: np.ndarray | None = None) -> int | None:
    """:func:`first_duplicate_row` for plain doc ids (an Arrow string array, one per row): the pairs keyed
    by the query code and a 64-bit hash of the doc id (``hashes``: :func:`doc_hashes`, when the caller has
    them), and only rows whose keys repeat compared as strings."""
    if len(query_codes) < 2:
        return None
    hashes = doc_hashes(docs) if hashes is None else hashes
    if _no_repeat_within_runs(query_codes, hashes):
        return None
    keys = pair_keys(query_codes, hashes)
    return first_repeated_row(keys, lambda rows: zip(query_codes[rows].tolist(),
                                                     doc_strings(docs, rows).tolist()))


# Distinct lengths of the runs of equal query codes above which :func:`_no_repeat_within_runs` leaves the
# check to the sort of every row's key.
_RUN_LENGTHS = 16


def _no_repeat_within_runs(query_codes: np.ndarray, hashes: np.ndarray) -> bool:
    """True when the codes come in runs, one per code (a file grouped by query), and no run holds a doc id
    hash twice: then no (query, document) pair repeats. False when it cannot tell (a repeated hash, the
    rows not grouped, or runs of more than :data:`_RUN_LENGTHS` lengths): the caller then sorts every row's
    key. The runs of one length are sorted as the rows of a matrix (a reshape when all runs have one length,
    as a retriever's top k): about a twentieth of the CPU of sorting 400,000 keys at once."""
    n = len(query_codes)
    starts = np.flatnonzero(query_codes[1:] != query_codes[:-1]) + 1
    if not bool(np.all(query_codes[starts] > query_codes[starts - 1])):  # a code seen in two runs, or not ascending
        return False
    lengths = np.diff(starts, prepend=0, append=n)
    starts = np.r_[0, starts]
    kinds = np.sort(lengths)  # (np.unique imports numpy.ma, 0.01 s)
    kinds = kinds[np.r_[True, kinds[1:] != kinds[:-1]]]
    if len(kinds) > _RUN_LENGTHS:
        return False
    for length in kinds[kinds > 1].tolist():
        if len(kinds) == 1:
            rows = hashes.reshape(-1, length)
        else:
            rows = hashes[starts[lengths == length][:, None] + np.arange(length)]
        rows = np.sort(rows, axis=1)
        if bool(np.any(rows[:, 1:] == rows[:, :-1])):
            return False
    return True



def first_duplicate_row(columns: Columns, spans: np.ndarray | None) -> int | None:
    """The first row (in file order) whose (query, doc) pair occurred before, or None.

    Works on integer keys (query code, doc code). Doc codes are exact within an Arrow block; rows of the
    few queries that span blocks (``spans``) are first re-coded by their doc id strings. A row whose doc
    code occurs once in the table cannot repeat a pair, so only the other rows are keyed and sorted (in a
    large run most documents are retrieved for one query of their block).
    """
    n = len(columns)
    if n < 2:
        return None
    codes = columns.doc_codes
    candidate = np.bincount(codes)[codes] > 1
    doc = codes.astype(np.int64)
    if spans is not None and spans.any():
        rows = np.flatnonzero(spans[columns.query_codes])
        if rows.size:
            taken = call("take", columns.doc_dictionary, from_numpy(codes[rows]))
            doc[rows] = numeric(call("dictionary_encode", taken).combine_chunks().indices)
            candidate[rows] = True
    rows = np.flatnonzero(candidate)  # in file order
    if rows.size < 2:
        return None
    keys = (columns.query_codes[rows].astype(np.int64) << np.int64(32)) | doc[rows]
    found = first_repeated_row(keys, lambda at: keys[at].tolist())  # the keys are exact
    return None if found is None else int(rows[found])


# -- entry point -----------------------------------------------------------------------------------


def load_arrow_readers() -> None:
    """Import pyarrow's CSV and compute modules now, for a caller that will import them anyway (the
    pipeline; ``evalops evaluate``, whose scoring imports the compute module and whose floor under a memory
    budget includes both): :func:`read_table` then reads plain files over 64 KB on the Arrow path, which is
    quicker than the exact parser once they are imported (SciFact's run, 1.4 MB: 0.1 s less CPU). A caller
    that reads a small file and imports neither is quicker with the exact parser alone. The compute module
    is Arrow's function registry (``pyarrow._compute``), not ``pyarrow.compute``'s wrappers
    (:func:`evalops.util.arrow.call`)."""
    if not available():  # the base install: every table is read by the exact parser
        return
    import pyarrow.csv  # noqa: F401

    _compute()


def read_table(source: Source, layout: Layout, *, float32: bool = False,
               arrow_ids: bool = False) -> tuple[Columns, int | None]:
    """(columns, row of the first duplicate pair or None). The fast path when it applies, else exact.
    ``arrow_ids``: the fast path keeps the query ids an Arrow string array (the exact one, an object array).

    Small plain files go straight to the exact parser: it is quicker than importing pyarrow for them (and,
    once pyarrow is imported, than the Arrow path for files under 64 KB).
    """
    loaded = "pyarrow.csv" in sys.modules and ("pyarrow._compute" in sys.modules or "pyarrow.compute" in sys.modules)
    limit = min(SMALL_FILE, SMALL_FILE_ARROW_LOADED) if loaded else SMALL_FILE
    small = source.compression is None and source.size < limit
    fast = None if small or not available() else _read_fast(source, layout, arrow_ids)
    if fast is not None:
        columns, spans = fast
    else:
        columns, spans = read_table_exact(source, layout), None
    if layout.value_kind == "score":  # kept as float64 unless asked; out of float32's range either way
        values = ranked_scores(columns.values, source, lambda row: line_of(source, layout, columns, row))
        columns = Columns(**{**columns.__dict__, "values": values if float32 else columns.values})
    if fast is not None and arrow_ids:  # plain doc ids, one per row: their hashes are kept for the lookups
        hashes = doc_hashes(columns.doc_dictionary)
        object.__setattr__(columns, "doc_hashes", hashes)
        return columns, first_duplicate_row_hashed(columns.query_codes, columns.doc_dictionary, hashes)
    return columns, first_duplicate_row(columns, spans)


_FLOAT32_MAX = float(np.finfo(np.float32).max)


def ranked_scores(values: np.ndarray, source: Source, line: Any) -> np.ndarray:
    """``values`` as the float32 scores runs are ranked by (trec_eval's precision). A score beyond float32's
    range would become an infinity when ranked and tie with every other such score: it is refused, naming
    its line (``line(row)``), whether the scores are kept as float64 or not."""
    beyond = np.flatnonzero(np.abs(values) > _FLOAT32_MAX) if values.size else np.zeros(0, dtype=np.int64)
    if beyond.size:
        row = int(beyond[0])
        raise FormatError(f"score {float(values[row])!r} is beyond the range scores are ranked at (float32, "
                          f"|score| <= {_FLOAT32_MAX:.4g}, trec_eval's precision); rescale the scores",
                          path=source.name, line=line(row))
    return values.astype(np.float32)


def line_of(source: Source, layout: Layout, columns: Columns, row: int) -> int | None:
    if columns.lines is not None:
        return int(columns.lines[row])
    return line_of_row(source, layout, row)
