"""Half-open intervals ``[start, end)`` over one document, and the units they are counted in.

Conventions owned here:

* An interval is ``(start, end)`` with ``0 <= start <= end``, half-open, in characters of the document's
  ``text`` (never its title). An empty interval covers nothing.
* **Units** (the tokenizer policy of the span measures, :class:`SpanUnits`):

  - ``chars``: one unit per character (what Chroma's ``chunking_evaluation`` counts, although its report
    speaks of tokens);
  - ``words``: one unit per token of :func:`evalops.context.default_tokenize` (a run of letters and
    digits, or one CJK character). A token belongs to the interval that holds its **first** character,
    so adjacent intervals share no token and a chunker that cuts a word in two gives the word to the chunk
    it starts in. A character interval ``[s, e)`` becomes the token interval ``[i, j)`` with ``i`` the
    first token starting at or after ``s`` and ``j`` the first starting at or after ``e``.

Pure: no I/O.
"""

from __future__ import annotations

import re
from bisect import bisect_left
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from evalops.errors import InputError

# CJK Unified Ideographs (+ extension A, compatibility), hiragana and katakana, and the supplementary
# ideograph planes (extensions B and later): scripts written without spaces, where each character is a word
# (here and in the context measures' tokenizer, evalops.context.tokens).
CJK_RANGES = "\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\U00020000-\U0003134f"

__all__ = ["CJK_RANGES", "UNITS", "Interval", "SpanUnits", "covered", "intersection_length", "merged"]

Interval = tuple[int, int]
UNITS: tuple[str, ...] = ("chars", "words")
# the pattern of evalops.context.default_tokenize (one CJK character, or a run of other word characters)
_TOKEN = re.compile(rf"[{CJK_RANGES}]|[^\W_{CJK_RANGES}]+")


def merged(intervals: Iterable[Interval]) -> list[Interval]:
    """The union of ``intervals`` as sorted, disjoint, non-empty intervals (touching ones joined)."""
    out: list[list[int]] = []
    for start, end in sorted((int(s), int(e)) for s, e in intervals if e > s):
        if out and start <= out[-1][1]:
            out[-1][1] = max(out[-1][1], end)
        else:
            out.append([start, end])
    return [(s, e) for s, e in out]


def covered(intervals: Iterable[Interval]) -> int:
    """How many units the union of ``intervals`` covers (each unit once)."""
    return sum(e - s for s, e in merged(intervals))


def intersection_length(a: Sequence[Interval], b: Sequence[Interval]) -> int:
    """Units covered by both of two *merged* interval lists (:func:`merged`), by one merge pass."""
    i = j = total = 0
    while i < len(a) and j < len(b):
        lo, hi = max(a[i][0], b[j][0]), min(a[i][1], b[j][1])
        if hi > lo:
            total += hi - lo
        if a[i][1] <= b[j][1]:
            i += 1
        else:
            j += 1
    return total


@dataclass(frozen=True)
class SpanUnits:
    """The tokenizer policy of the span measures: ``chars`` or ``words`` (see the module docstring)."""

    name: str = "chars"

    def __post_init__(self) -> None:
        if self.name not in UNITS:
            raise InputError(f"span units {self.name!r} are not known; use one of {list(UNITS)}")

    def starts(self, text: str) -> list[int] | None:
        """The character offset of each token of ``text`` (None for ``chars``: every character is a unit)."""
        if self.name == "chars":
            return None
        # found in the text as written: case folding can change a string's length (``ß`` -> ``ss``)
        return [m.start() for m in _TOKEN.finditer(text)]

    @staticmethod
    def convert(interval: Interval, starts: list[int] | None) -> Interval:
        """A character interval in these units, given :meth:`starts` of its document."""
        if starts is None:
            return interval
        return bisect_left(starts, interval[0]), bisect_left(starts, interval[1])

