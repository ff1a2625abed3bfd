"""HTML for notebooks: the ``_repr_html_`` of evaluation results and of comparisons.

One table shape for both: a caption, a header row, one row per measure (or per comparison) and notes below
it. Every text goes through :func:`evalops.util.safetext.plain` (no control or bidi character, cut at its limit)
and is then HTML-escaped, so a run name, a version name or a query id from a user's file is shown as text and
never read as markup.

:class:`Comparisons` is the list :func:`evalops.abtest.compare_runs` returns: a plain list of ``Comparison``
records that a notebook shows as one table.
"""

from __future__ import annotations

import html
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, Any

from evalops.util.numfmt import DASH, level, number, p_value
from evalops.util.safetext import plain

if TYPE_CHECKING:
    from evalops.stats.compare import Comparison

__all__ = ["Comparisons", "comparisons_html", "html_table"]

COMPARISON_HEADERS = ("measure", "baseline", "candidate", "n", "baseline mean", "candidate mean", "delta",
                      "95% CI of the delta", "adjusted p", "decision", "severity")


def _text(value: Any) -> str:
    return html.escape(plain(str(value)))


def html_table(caption: Any, headers: Sequence[Any], rows: Iterable[Sequence[Any]],
               notes: Iterable[Any] = ()) -> str:
    """``<table>`` with ``caption``, ``headers`` and ``rows`` (each cell's text escaped), then each note as a
    small line."""
    def cells(values: Sequence[Any], tag: str) -> str:
        return "<tr>" + "".join(f"<{tag}>{_text(v)}</{tag}>" for v in values) + "</tr>"

    body = "".join(cells(row, "td") for row in rows)
    return (f"<table><caption>{_text(caption)}</caption><thead>{cells(headers, 'th')}</thead>"
            f"<tbody>{body}</tbody></table>" + "".join(f"<div><small>{_text(n)}</small></div>" for n in notes))


def _interval(low: Any, high: Any) -> str:
    if number(low) == DASH or number(high) == DASH:
        return DASH
    return f"[{number(low, signed=True)}, {number(high, signed=True)}]"


def comparison_row(c: Any) -> tuple[str, ...]:
    """The cells of one comparison (a ``Comparison``), in ``COMPARISON_HEADERS``'
    order."""
    return (c.measure, c.baseline_name, c.candidate_name, str(c.n), number(c.baseline_mean),
            number(c.candidate_mean), number(c.delta, signed=True), _interval(c.delta_ci_low, c.delta_ci_high),
            p_value(c.p_adjusted), c.decision, c.severity or DASH)


def comparisons_html(comparisons: Sequence[Any]) -> str:
    """A table of decided comparisons: one row each, then the family they were decided in, the level of its
    decision intervals and each comparison's notes."""
    if not comparisons:
        return html_table("comparison", COMPARISON_HEADERS, [], ["no comparison"])
    first = comparisons[0]
    candidates = list(dict.fromkeys(c.candidate_name for c in comparisons))
    caption = f"{first.baseline_name} against {', '.join(candidates)}"
    sizes = sorted({c.family_size for c in comparisons})
    levels = sorted({level(c.interval_level) for c in comparisons})
    notes = [(f"decided as one family of {', '.join(map(str, sizes))}; decision intervals at "
              f"{', '.join(levels)} (the delta is candidate minus baseline)")]
    notes += [f"{c.candidate_name} {c.measure}: {note}" for c in comparisons for note in c.notes]
    return html_table(caption, COMPARISON_HEADERS, [comparison_row(c) for c in comparisons], notes)


class Comparisons(list["Comparison"]):
    """Decided comparisons (a list of ``Comparison``) that a notebook shows as a table."""

    def _repr_html_(self) -> str:
        return comparisons_html(self)
