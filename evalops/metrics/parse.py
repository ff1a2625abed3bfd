"""Parse measure names in the ir_measures grammar.

    measure  := NAME [ "(" param { "," param } ")" ] [ "@" CUTOFF ]
    param    := KEY "=" VALUE          VALUE is a number (2, 0.8) or a bare word (exp, linear, True, False)
    NAME     := letters, digits, "-" and "_", starting with a letter (P, nDCG, R-Prec, Success)
    CUTOFF   := positive integer (a recall level such as 0.5 for IPrec)

Whitespace between tokens is ignored. Aliases (MRR, MAP, Hit, Rprec, bpref) map to the canonical measure, so
``parse_measure("MRR@10") == parse_measure("RR@10")`` and both print as ``RR@10``. trec_eval's names are
read too: ``ndcg_cut_10`` (or ``ndcg_cut.10``) is ``nDCG@10``, ``P_5`` is ``P@5``, ``map`` is ``AP``,
``iprec_at_recall_0.50`` is ``IPrec@0.5``.

A name evalops does not compute natively (an unknown measure, or a parameter its native measure does not
declare) is handed to ir_measures when it is installed (:mod:`evalops.metrics.fallback`); a name neither
reads is refused with the measures whose names are closest.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping

from evalops.errors import MeasureError
from evalops.metrics.fallback import fallback_measure
from evalops.metrics.measures import ALIASES, TREC_EVAL_NAMES, Measure
from evalops.metrics.registry import MEASURE_TYPES, measure_type, valid_names_hint
from evalops.util.safetext import truncate

__all__ = ["parse_measure", "parse_measures"]

_TOKEN = re.compile(
    r"\s*(?:(?P<name>[A-Za-z][A-Za-z0-9_-]*)|(?P<float>[0-9]+\.[0-9]+)|(?P<int>[0-9]+)|(?P<punct>[()@=,]))",
)
# trec_eval's "measure_cutoff" names: ndcg_cut_10, ndcg_cut.10, P_5, iprec_at_recall_0.50
_TREC_CUT = re.compile(r"\s*(?P<base>[A-Za-z][A-Za-z_]*?)[._](?P<at>[0-9]+(?:\.[0-9]+)?)\s*")


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
    """Parse one measure name (a ``Measure`` passes through). Raises ``MeasureError`` naming the measure,
    what is wrong and the closest names.

    ``types``: another registry of measure classes in the same grammar (the context measures'); by
    default the IR measures, their aliases and trec_eval names, and ir_measures' other measures through
    the fallback."""
    if isinstance(text, Measure):
        return text
    if not isinstance(text, str):
        raise MeasureError(f"a measure must be a string such as 'nDCG@10', not {type(text).__name__}")
    if types is not None:
        return _parse_native(text, types)
    trec = _TREC_CUT.fullmatch(text)
    if trec is not None and trec["base"] in TREC_EVAL_NAMES:
        return _parse_native(f"{TREC_EVAL_NAMES[trec['base']]}@{trec['at']}", None)
    try:
        return _parse_native(text, None)
    except MeasureError as native:
        if not _fallback_may_apply(text):
            raise
        return fallback_measure(text, native)


def _fallback_may_apply(text: str) -> bool:
    """Whether ``text`` is not simply a native measure written wrong: its name is not native, or it gives
    a parameter the native measure does not declare (``NumRet(rel=2)``, ``nDCG(dcg=exp-log2)@10``)."""
    name = re.match(r"\s*([A-Za-z][A-Za-z0-9_-]*)", text)
    if name is None:
        return True  # not in evalops' grammar (alpha written as a Greek letter): ir_measures may read it
    cls = MEASURE_TYPES.get(ALIASES.get(name[1], name[1]))
    if cls is None:
        return True
    try:
        tokens = _tokens(text)
    except MeasureError:
        return False
    declared = {p.name for p in cls.PARAMS}
    keys = [v for (k, v, _), nxt in zip(tokens, tokens[1:]) if k == "name" and nxt[1] == "="]
    return any(key not in declared for key in keys)


def _parse_native(text: str, types: Mapping[str, type[Measure]] | None) -> Measure:
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
            if i >= len(tokens) or tokens[i][0] not in ("int", "float", "name"):
                raise _malformed(text, f"parameter {key} needs a value")
            kind, value, _ = tokens[i]
            i += 1
            if key in params:
                raise _malformed(text, f"parameter {key} is given twice")
            params[key] = (_integer(text, value, f"parameter {key}") if kind == "int"
                           else float(value) if kind == "float" else value)
            if i < len(tokens) and tokens[i][1] == ",":
                i += 1
                continue
            expect("punct", ")")
            break
    cutoff: int | float | None = None
    if i < len(tokens) and tokens[i][1] == "@":
        i += 1
        if cls.AT_PARAM is not None and i < len(tokens) and tokens[i][0] == "float":
            cutoff = float(expect("float"))  # IPrec@0.5: a recall level
        else:
            cutoff = _integer(text, expect("int"), "cutoff")
    if i < len(tokens):
        raise _malformed(text, f"unexpected {tokens[i][1]!r} at position {tokens[i][2] + 1}")
    return cls(cutoff, **params)  # type: ignore[arg-type]


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
