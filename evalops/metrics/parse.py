"""Parse measure names in the ir_measures grammar.

    measure  := NAME [ "(" param { "," param } ")" ] [ "@" CUTOFF ]
    param    := KEY "=" VALUE          VALUE is an integer or a bare word (exp, linear, True, False)
    NAME     := letters, digits, "-" and "_", starting with a letter (P, nDCG, R-Prec, Success)
    CUTOFF   := positive integer

Whitespace between tokens is ignored. Aliases (MRR, MAP, Hit, Rprec, bpref) map to the canonical measure, so
``parse_measure("MRR@10") == parse_measure("RR@10")`` and both print as ``RR@10``.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping

from evalops.errors import MeasureError
from evalops.metrics.measures import Measure, measure_type, valid_names_hint
from evalops.safetext import truncate

__all__ = ["parse_measure", "parse_measures"]

_TOKEN = re.compile(
    r"\s*(?:(?P<name>[A-Za-z][A-Za-z0-9_-]*)|(?P<int>[0-9]+)|(?P<punct>[()@=,]))",
)


def _tokens(text: str) -> list[tuple[str, str, int]]:
    """Split ``text`` into (kind, value, position) tokens; raise on a character outside the grammar."""
    out: list[tuple[str, str, int]] = []
    pos = 0
    while pos < len(text):
        if text[pos:].strip() == "":
            break
        match = _TOKEN.match(text, pos)
        if match is None:
            bad = text[pos:].lstrip()[0]
            raise _malformed(text, f"unexpected character {bad!r} at position {text.index(bad, pos) + 1}")
        kind = match.lastgroup or ""
        out.append((kind, match.group(kind), match.start(kind)))
        pos = match.end()
    return out


_MAX_DIGITS = 9  # a cutoff or integer parameter below 10^9; a longer number is refused before int() reads it


def _integer(text: str, value: str, what: str) -> int:
    if len(value.lstrip("0")) > _MAX_DIGITS:
        raise _malformed(text, f"the {what} has {len(value)} digits; it must be below 10^{_MAX_DIGITS}")
    return int(value)


def _malformed(text: str, why: str) -> MeasureError:
    return MeasureError(
        f"malformed measure {truncate(text, 60)!r}: {why}; the form is NAME[(key=value,...)][@cutoff]. {valid_names_hint()}"
    )


def parse_measure(text: str | Measure, types: Mapping[str, type[Measure]] | None = None) -> Measure:
    """Parse one measure name (a ``Measure`` passes through). Raises ``MeasureError`` listing valid names.

    ``types``: another registry of measure classes in the same grammar (the context measures'); by
    default the IR measures and their aliases."""
    if isinstance(text, Measure):
        return text
    if not isinstance(text, str):
        raise MeasureError(f"a measure must be a string such as 'nDCG@10', not {type(text).__name__}")
    tokens = _tokens(text)
    if not tokens:
        raise _malformed(text, "it is empty")
    i = 0

    def expect(kind: str, value: str | None = None) -> str:
        nonlocal i
        if i >= len(tokens):
            raise _malformed(text, f"it ends where {value or kind} was expected")
        k, v, p = tokens[i]
        if k != kind or (value is not None and v != value):
            raise _malformed(text, f"expected {value or kind} at position {p + 1}, found {v!r}")
        i += 1
        return v

    name = expect("name")
    cls = measure_type(name, types)
    params: dict[str, object] = {}
    if i < len(tokens) and tokens[i][1] == "(":
        i += 1
        while True:
            key = expect("name")
            expect("punct", "=")
            if i >= len(tokens) or tokens[i][0] not in ("int", "name"):
                raise _malformed(text, f"parameter {key} needs a value")
            kind, value, _ = tokens[i]
            i += 1
            if key in params:
                raise _malformed(text, f"parameter {key} is given twice")
            params[key] = _integer(text, value, f"parameter {key}") if kind == "int" else value
            if i < len(tokens) and tokens[i][1] == ",":
                i += 1
                continue
            expect("punct", ")")
            break
    cutoff: int | None = None
    if i < len(tokens) and tokens[i][1] == "@":
        i += 1
        cutoff = _integer(text, expect("int"), "cutoff")
    if i < len(tokens):
        raise _malformed(text, f"unexpected {tokens[i][1]!r} at position {tokens[i][2] + 1}")
    return cls(cutoff, **params)


def parse_measures(
    texts: Iterable[str | Measure], types: Mapping[str, type[Measure]] | None = None
) -> tuple[Measure, ...]:
    """Parse several names, dropping repeats (``MRR@10`` and ``RR@10`` are one measure), keeping order."""
    seen: dict[Measure, None] = {}
    for text in texts:
        seen.setdefault(parse_measure(text, types), None)
    if not seen:
        raise MeasureError(f"no measure given; {valid_names_hint()}")
    return tuple(seen)
