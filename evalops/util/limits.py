"""Size limits in one place.

* The warehouse's limits on ids: the models declare their columns with them, and the data contracts check
  inputs against them, so a too-long id is refused before anything is written.
* The memory budget for reading run files (``--memory-budget`` and the ``memory_budget`` setting): a file
  whose in-memory reading would exceed it is streamed by query blocks (:mod:`evalops.formats.stream`).
* The bounds on hostile input (:class:`InputBounds`; the ``max_line_length`` and ``max_decompressed_size``
  settings): every reader of :mod:`evalops.formats` stops at a line longer than the first, and at a
  compressed file or a stream (standard input, a pipe) whose bytes exceed the second, with one error naming
  the file and the bound. A gzip bomb of NUL bytes has no line end, so it is stopped by the first bound
  after ``max_line_length`` bytes. A bomb of valid lines is stopped by its ratio: a compressed file whose
  output passes :data:`RATIO_CHECKED_FROM` bytes and :data:`MAX_COMPRESSION_RATIO` times its own size is
  refused (text runs and qrels compress 3-15 times; a repeated line compresses hundreds of times).
* A bomb of line ends (a file, a stream or a gzip of newlines, which would take minutes and gigabytes as
  millions of blank lines) is stopped by the density of its lines: once more than :data:`LINES_CHECKED_FROM`
  lines have been read, a file must average at least :data:`MIN_BYTES_PER_LINE` bytes a line (the shortest
  real lines, a qrels line ``q1 0 d1 1``, hold 10; a BEIR TSV or CSV row 6 and more). Together with
  ``max_decompressed_size`` this bounds the lines of a stream or a compressed file too (at most a quarter
  of its bytes).
* The body of one HTTP response (:data:`DEFAULT_MAX_RESPONSE_BYTES`, the ``max_response_bytes`` parameter of
  an HTTP retriever): :class:`evalops.transport.HttpClient` stops reading past it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from evalops.errors import InputError

__all__ = ["QUERY_ID_MAX_LENGTH", "DEFAULT_MEMORY_BUDGET", "MIN_MEMORY_BUDGET", "parse_memory_budget",
           "DEFAULT_MAX_LINE_LENGTH", "DEFAULT_MAX_DECOMPRESSED_SIZE", "InputBounds", "MAX_COMPRESSION_RATIO",
           "RATIO_CHECKED_FROM", "MIN_BYTES_PER_LINE", "LINES_CHECKED_FROM", "DEFAULT_MAX_RESPONSE_BYTES", "input_bounds", "parse_size", "set_input_bounds", "size_text", "rss_bytes",
           "peak_rss_bytes", "ProcessBudget", "MIN_READER_BUDGET", "READER_OVERSHOOT", "RESULT_BYTES_PER_VALUE", "STREAM_BYTES_PER_QUERY",
           "STREAM_BYTES_PER_JUDGMENT", "SCORING_BYTES_PER_QUERY", "SCORING_FIXED_BYTES", "SCORING_BYTES_PER_JUDGMENT", "result_shares", "OUTPUT_BYTES_PER_VALUE", "JUDGMENTS_READ_FACTOR",
           "release_free_memory", "return_freed_memory", "reset_peak_rss"]

QUERY_ID_MAX_LENGTH = 500  # query_scores.query_id

DEFAULT_MEMORY_BUDGET = 1 << 30
MIN_MEMORY_BUDGET = 16 << 20
_UNITS = {"": 1, "b": 1, "k": 1 << 10, "kb": 1 << 10, "m": 1 << 20, "mb": 1 << 20, "g": 1 << 30, "gb": 1 << 30}


def parse_memory_budget(value: str | int) -> int:
    """Bytes from ``"1GB"``, ``"512MB"``, ``"2g"`` or an integer (at least 16MB)."""
    return parse_size(value, MIN_MEMORY_BUDGET, "memory budget")


def parse_size(value: str | int, minimum: int, what: str) -> int:
    """Bytes from ``"1GB"``, ``"512MB"``, ``"2g"`` or an integer, at least ``minimum``; ``what`` names it."""
    if isinstance(value, int) and not isinstance(value, bool):
        size = value
    else:
        match = re.fullmatch(r"\s*(\d{1,15}(?:\.\d{1,15})?)\s*([kmg]?b?)\s*", str(value).lower())
        if not match:
            raise InputError(f"{what} {value!r} is not a size; write it like 512MB or 2GB")
        size = int(float(match.group(1)) * _UNITS[match.group(2)])
    if size < minimum:
        raise InputError(f"{what} {value!r} is below {size_text(minimum)}; give at least {size_text(minimum)}")
    return size


def size_text(size: int) -> str:
    """``16MB``, ``4GB``, ``1536KB``: the largest unit that divides ``size``."""
    for unit, factor in (("GB", 1 << 30), ("MB", 1 << 20), ("KB", 1 << 10)):
        if size % factor == 0:
            return f"{size // factor}{unit}"
    return f"{size:,} bytes"


DEFAULT_MAX_LINE_LENGTH = 16 << 20  # far above a BEIR document on one JSONL line; a NUL bomb has no line end
MIN_MAX_LINE_LENGTH = 64 << 10
DEFAULT_MAX_DECOMPRESSED_SIZE = 4 << 30  # about 120 M TREC run lines; a bomb of valid lines stops here
MIN_MAX_DECOMPRESSED_SIZE = 1 << 20
MAX_COMPRESSION_RATIO = 200
RATIO_CHECKED_FROM = 32 << 20
DEFAULT_MAX_RESPONSE_BYTES = 64 << 20  # one HTTP response body (a retriever's 1,000 results: about 100 KB)
MIN_BYTES_PER_LINE = 4  # on average, once LINES_CHECKED_FROM lines are read (line ends included)
LINES_CHECKED_FROM = 1 << 20  # a small file may be mostly blank lines


@dataclass(frozen=True)
class InputBounds:
    """The bounds every reader of :mod:`evalops.formats` holds input to (see the module docstring)."""

    max_line_length: int = DEFAULT_MAX_LINE_LENGTH
    max_decompressed_size: int = DEFAULT_MAX_DECOMPRESSED_SIZE


_current = [InputBounds()]


def input_bounds() -> InputBounds:
    """The bounds in force: the defaults, or the last project's settings (:func:`set_input_bounds`)."""
    return _current[0]


def set_input_bounds(max_line_length: str | int, max_decompressed_size: str | int) -> InputBounds:
    """Put the configured bounds in force for this process (the CLI and the pipeline call it with the
    project's settings once they are loaded); returns them."""
    bounds = InputBounds(parse_size(max_line_length, MIN_MAX_LINE_LENGTH, "max_line_length"),
                         parse_size(max_decompressed_size, MIN_MAX_DECOMPRESSED_SIZE, "max_decompressed_size"))
    _current[0] = bounds
    return bounds


def rss_bytes() -> int | None:
    """The process's resident memory now (Linux ``/proc``; None elsewhere)."""
    import os

    try:
        with open("/proc/self/statm") as fh:
            return int(fh.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError, IndexError):
        return None


def release_free_memory() -> None:
    """Give memory freed after a big read back to the system: Arrow's pool keeps what its readers freed, and
    glibc's heap what Python freed (reading 2 M judgments leaves about 180 MB of either behind)."""
    import sys

    if sys.modules.get("pyarrow") is not None:  # (None: an import of it failed; the base install has none)
        sys.modules["pyarrow"].default_memory_pool().release_unused()
    if sys.platform.startswith("linux"):
        import ctypes

        try:
            ctypes.CDLL("libc.so.6").malloc_trim(0)
        except (OSError, AttributeError):  # not glibc (musl): nothing to trim
            pass


def return_freed_memory() -> None:
    """Allocate from now on so that what is freed goes back to the system, not only at
    :func:`release_free_memory`: Arrow's arrays on the system allocator (its default pool keeps what one
    reader thread frees for that thread), and glibc's blocks of 1 MB and more mapped on their own (glibc's
    threshold otherwise rises to 32 MB once such blocks are freed, and freed blocks then stay in the heap).
    Reading 2 M judgments then peaks at about 250 MB over the floor instead of 310 MB and holds 80 MB once
    read instead of 135 MB. A no-op where either is unavailable."""
    import sys

    if sys.modules.get("pyarrow") is not None:
        pa = sys.modules["pyarrow"]
        pa.set_memory_pool(pa.system_memory_pool())
    if sys.platform.startswith("linux"):
        import ctypes

        try:
            ctypes.CDLL("libc.so.6").mallopt(-3, 1 << 20)  # M_MMAP_THRESHOLD
        except (OSError, AttributeError):  # not glibc
            pass


def reset_peak_rss() -> None:
    """Start the peak of :func:`peak_rss_bytes` again from the memory resident now (Linux; elsewhere the
    peak stays the process's), so that a peak measured from a floor is not an earlier one (a test process,
    a caller that read something before)."""
    try:
        with open("/proc/self/clear_refs", "w") as fh:
            fh.write("5")
    except OSError:
        pass


def peak_rss_bytes() -> int | None:
    """The process's peak resident memory since :func:`reset_peak_rss` or its start (``VmHWM`` on Linux,
    else ``ru_maxrss``; None where neither is available)."""
    try:
        with open("/proc/self/status") as fh:
            for line in fh:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    try:
        import resource
        import sys
    except ImportError:  # pragma: no cover - not POSIX
        return None
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return peak if sys.platform == "darwin" else peak * 1024


# The per-query results. While the run is streamed they hold the located judged documents (int32 query and
# rank, int64 grade: 16 bytes each, at most one per judgment) and a count per judged query (8 bytes). Scoring
# every query at the end (the merged hits, the ideal rankings, the per-query arrays, the query ids as Python
# strings) takes more, but the run reader's share is free by then: that peak must fit the budget beside the
# judgments. Measured on 1 M queries x 2 judgments x 2 measures (see docs/memory-budget.md).
STREAM_BYTES_PER_QUERY = 8
STREAM_BYTES_PER_JUDGMENT = 16
# Scoring at the end (chunks of evalops.metrics.compute.CHUNK_CELLS cells: about 16 MB whatever the size) took
# 35 MB over what streaming left on 100,000 queries, 800,000 judgments and 2 measures; the estimate gives 39 MB.
SCORING_FIXED_BYTES = 16 << 20
# the query ids (fixed-width str, the kept ones only), the counts and masks. (It was 130 while the streamed
# reader's set of closed query ids, Python strings, left about 65 MB of small-object arenas behind; 1 M
# queries x 100 at 256MB now peak at floor + 216-220 MB, the scoring at about floor + 198 MB.)
SCORING_BYTES_PER_QUERY = 40
SCORING_BYTES_PER_JUDGMENT = 20  # the merged hits and the ideal rankings
RESULT_BYTES_PER_VALUE = 16  # per (query, measure): the value and its kept copy
# Reading judgments (as evalops evaluate reads them: CompactGold, freed memory handed back) peaked at about
# 5 bytes per byte of a TREC qrels file (2 M judgments: 235 MB from 47 MB; as Python strings it was 453 MB);
# a budget below this many times the file is refused before the file is read (a lower bound, so that no
# budget that would fit is refused).
JUDGMENTS_READ_FACTOR = 4
# The run reader took up to 1.35x the budget it was given on 1 M queries x 100 (gzip, query blocks of 2 MB);
# evalops evaluate gives it its share over this.
READER_OVERSHOOT = 1.5
# The least the run reader works with (blocks of 64 KB and up); a budget must leave it this much.
MIN_READER_BUDGET = 8 << 20
OUTPUT_BYTES_PER_VALUE = 160


def result_shares(queries: int, judgments: int, measures: int, per_query: bool) -> tuple[int, int]:
    """(what the per-query results hold while a run is streamed, what scoring them at the end takes) for
    ``queries`` judged queries with ``judgments`` judgments and ``measures`` measures; ``per_query``: the
    output holds every value as text too."""
    streamed = STREAM_BYTES_PER_QUERY * queries + STREAM_BYTES_PER_JUDGMENT * judgments
    per_value = RESULT_BYTES_PER_VALUE + (OUTPUT_BYTES_PER_VALUE if per_query else 0)
    chunk = min(SCORING_FIXED_BYTES, queries * 3200)  # the chunk's matrices: ~32 bytes a cell, 100 cells a query
    scoring = (chunk + SCORING_BYTES_PER_QUERY * queries + SCORING_BYTES_PER_JUDGMENT * judgments
               + per_value * queries * measures)
    return streamed, scoring


@dataclass(frozen=True)
class ProcessBudget:
    """A memory budget shared by everything a command allocates over its floor.

    ``floor``: the resident memory of the interpreter and the libraries the command imports, measured before
    it reads anything (not part of the budget: no budget can go below it). ``judgments``: what the judgments
    hold once read; ``reading_judgments``: the peak while they were read, which the budget must cover too.
    ``results``: the estimate for what the per-query results hold while the run is read; ``scoring``: the
    estimate for scoring every query at the end and writing the output, when the reader's share is free
    again (so it must fit beside the judgments, not beside the reader). The run reader gets the rest
    (``reader``), at least :data:`MIN_READER_BUDGET`.
    """

    budget: int
    floor: int | None
    judgments: int
    results: int
    reading_judgments: int = 0  # the peak over the floor while the judgments were read (parsing buffers)
    scoring: int = 0

    @property
    def reader(self) -> int:
        return max(MIN_READER_BUDGET, self.budget - self.judgments - self.results)

    @property
    def reader_blocks(self) -> int:
        """The budget the run reader is given for its blocks: its share over :data:`READER_OVERSHOOT`, what it
        takes beyond the blocks it plans (the decompressor, Arrow's parsing buffers, what it freed but the
        system has not taken back yet), at least :data:`MIN_READER_BUDGET`."""
        return max(MIN_READER_BUDGET, int(self.reader / READER_OVERSHOOT))

    @property
    def fits(self) -> bool:
        """Whether reading the judgments fits the budget, and the judgments and results leave the reader its
        minimum within it."""
        return (self.reading_judgments <= self.budget
                and self.budget - self.judgments - self.results >= MIN_READER_BUDGET
                and self.judgments + self.scoring <= self.budget)

    def refusal(self) -> str:
        mb = 1 << 20
        need = max(MIN_MEMORY_BUDGET, self.reading_judgments, self.judgments + self.results + MIN_READER_BUDGET,
                   self.judgments + self.scoring)
        return (f"memory budget {self.budget / mb:.0f} MB is too small: the judgments take {self.judgments / mb:.0f} MB "
                f"({self.reading_judgments / mb:.0f} MB while read) and the per-query results about "
                f"{self.results / mb:.0f} MB ({self.scoring / mb:.0f} MB when scored), which leaves less than the "
                f"{MIN_READER_BUDGET // mb} MB the run reader needs or less than scoring takes; give --memory-budget "
                f"{-(-need // mb)}MB or more "
                f"(the floor of {(self.floor or 0) / mb:.0f} MB, interpreter and libraries, comes on top of any budget)")

    def note(self) -> str:
        """The budget, its floor, its shares and the peak the process reached, for stderr."""
        mb = 1 << 20
        peak = peak_rss_bytes()
        floor = f"{self.floor / mb:.0f} MB" if self.floor is not None else "unknown"
        over = (f" = floor + {(peak - self.floor) / mb:.0f} MB" if peak is not None and self.floor is not None else "")
        peak_text = f"{peak / mb:.0f} MB{over}" if peak is not None else "unknown"
        return (f"memory budget {self.budget / mb:.0f} MB above a floor of {floor} (interpreter and libraries): "
                f"judgments {self.judgments / mb:.0f} MB ({self.reading_judgments / mb:.0f} MB while read), per-query results {self.results / mb:.0f} MB ({self.scoring / mb:.0f} MB when scored), run reading "
                f"{self.reader / mb:.0f} MB; peak resident memory {peak_text}")
