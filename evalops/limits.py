"""Size limits in one place.

* The warehouse's limits on ids: the models declare their columns with them, and the data contracts check
  inputs against them, so a too-long id is refused before anything is written.
* The memory budget for reading run files (``--memory-budget`` and the ``memory_budget`` setting): a file
  whose in-memory reading would exceed it is streamed by query blocks (:mod:`evalops.formats.stream`).
"""

from __future__ import annotations

import re

from evalops.errors import InputError

__all__ = ["QUERY_ID_MAX_LENGTH", "DEFAULT_MEMORY_BUDGET", "MIN_MEMORY_BUDGET", "parse_memory_budget", "rss_bytes",
           "peak_rss_bytes", "budget_note"]

QUERY_ID_MAX_LENGTH = 500  # query_scores.query_id

DEFAULT_MEMORY_BUDGET = 1 << 30
MIN_MEMORY_BUDGET = 16 << 20
_UNITS = {"": 1, "b": 1, "k": 1 << 10, "kb": 1 << 10, "m": 1 << 20, "mb": 1 << 20, "g": 1 << 30, "gb": 1 << 30}


def parse_memory_budget(value: str | int) -> int:
    """Bytes from ``"1GB"``, ``"512MB"``, ``"2g"`` or an integer (at least 16MB)."""
    if isinstance(value, int):
        budget = value
    else:
        match = re.fullmatch(r"\s*(\d+(?:\.\d+)?)\s*([kmg]?b?)\s*", str(value).lower())
        if not match:
            raise InputError(f"memory budget {value!r} is not a size; write it like 512MB or 2GB")
        budget = int(float(match.group(1)) * _UNITS[match.group(2)])
    if budget < MIN_MEMORY_BUDGET:
        raise InputError(f"memory budget {value!r} is below 16MB; give at least 16MB")
    return budget


def rss_bytes() -> int | None:
    """The process's resident memory now (Linux ``/proc``; None elsewhere)."""
    import os

    try:
        with open("/proc/self/statm") as fh:
            return int(fh.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError, IndexError):
        return None


def peak_rss_bytes() -> int | None:
    """The process's peak resident memory so far (None where ``resource`` is missing)."""
    try:
        import resource
        import sys
    except ImportError:  # pragma: no cover - not POSIX
        return None
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return peak if sys.platform == "darwin" else peak * 1024


def budget_note(budget: int, floor: int | None) -> str:
    """What the memory budget bounds, said plainly, with the floor under it (``floor``: the resident memory
    before the run was read) and the peak the process reached."""
    peak = peak_rss_bytes()
    mb = 1 << 20
    floor_text = f"{floor / mb:.0f} MB" if floor is not None else "unknown"
    peak_text = f"{peak / mb:.0f} MB" if peak is not None else "unknown"
    return (f"memory budget {budget / mb:.0f} MB bounds the reading of the run file, not the process: the floor "
            f"under it (interpreter, libraries and judgments, held before the run was read) was {floor_text}; "
            f"peak resident memory {peak_text}")
