"""The span measures in the measure grammar: ``TokenRecall``, ``TokenPrecision``, ``TokenIoU``.

Declared here so a project names them like every other measure (parsed, canonical, validated in the
settings, their direction read by the statistics); the arithmetic is :func:`evalops.chunking.measures.span_scores`.
A measure is cut at ``k`` chunks (``TokenIoU@10``) or at a budget of units (``TokenIoU(budget=400)``, also
spelled ``TokenIoU@budget=400`` as :class:`evalops.chunking.measures.SpanScores` labels it); exactly one of
the two. All three are shares in [0, 1], higher is better.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any

from evalops.errors import MeasureError
from evalops.metrics.measures import Measure, Param
from evalops.metrics.parse import parse_measure

__all__ = ["SPAN_MEASURE_TYPES", "TokenIoU", "TokenPrecision", "TokenRecall", "parse_span_measures", "span_cut"]

BUDGET = Param("budget", int, 0, "units of retrieved text taken in rank order (0: cut at @k instead)", minimum=0)


class _SpanMeasure(Measure):
    PARAMS = (BUDGET,)
    CUTOFF = "optional"

    def __init__(self, cutoff: int | None = None, **params: Any) -> None:
        super().__init__(cutoff, **params)
        if (cutoff is None) == (not self._params["budget"]):
            raise MeasureError(f"{self.NAME} needs a cutoff or a budget, not both: {self.NAME}@10 or "
                               f"{self.NAME}(budget=400)")


class TokenRecall(_SpanMeasure):
    """|union(C) ∩ E| / |E|: the share of the relevant excerpts' units the retrieved chunks hold."""

    NAME = "TokenRecall"
    DESCRIPTION = "share of the relevant excerpts' text retrieved"


class TokenPrecision(_SpanMeasure):
    """|union(C) ∩ E| / Σ|c|: the share of the retrieved text that is relevant."""

    NAME = "TokenPrecision"
    DESCRIPTION = "share of the retrieved text that is relevant"


class TokenIoU(_SpanMeasure):
    """|union(C) ∩ E| / (Σ|c| + |E| − |union(C) ∩ E|): relevant text retrieved over all the text in play."""

    NAME = "TokenIoU"
    DESCRIPTION = "intersection over union of the retrieved and the relevant text"


SPAN_MEASURE_TYPES: dict[str, type[Measure]] = {m.NAME: m for m in (TokenRecall, TokenPrecision, TokenIoU)}
_BUDGET_SPELLING = re.compile(r"^\s*([A-Za-z]+)\s*@\s*budget\s*=\s*([0-9]+)\s*$")


def parse_span_measures(names: Iterable[str | Measure] | str | Measure) -> tuple[Measure, ...]:
    """Parse ``TokenIoU@10``, ``TokenRecall(budget=400)`` or ``TokenRecall@budget=400``; ``MeasureError``
    naming the measure on anything else. Repeats are dropped, order kept."""

    given = [names] if isinstance(names, (str, Measure)) else list(names)
    out: list[Measure] = []
    for name in given:
        if isinstance(name, str):
            m = _BUDGET_SPELLING.match(name)
            name = f"{m.group(1)}(budget={m.group(2)})" if m else name
        measure = parse_measure(name, SPAN_MEASURE_TYPES)
        if type(measure) not in SPAN_MEASURE_TYPES.values():
            raise MeasureError(f"{measure} is not a span measure; valid: {', '.join(SPAN_MEASURE_TYPES)} "
                               "(at @k or (budget=B))")
        if measure not in out:
            out.append(measure)
    return tuple(out)


def span_cut(measure: Measure) -> dict[str, int]:
    """The cut of a span measure as :func:`evalops.chunking.measures.span_scores` takes it: ``{"k": 10}`` or
    ``{"budget": 400}``."""
    if measure["budget"]:
        return {"budget": int(measure["budget"])}
    if measure.cutoff is None:
        raise MeasureError(f"{measure} has neither a cutoff nor a budget")
    return {"k": int(measure.cutoff)}
