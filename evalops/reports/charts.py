"""Charts for the report, drawn as SVG documents from the report's own numbers (no plotting library).

The report embeds each chart as a ``data:image/svg+xml`` image in the HTML and as a sibling ``.svg`` file in
the markdown; an SVG used as an image runs nothing and fetches nothing. Every piece of text in a chart
(retriever, version and measure names) goes through :func:`evalops.util.safetext.plain` (no control or bidi
character, long text cut) and is then XML-escaped. Each mark carries a ``<title>`` with its exact numbers.

Drawing them with matplotlib cost about 0.8 s of CPU per report (its import most of it), in every run.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from markupsafe import escape

from evalops.reports.model import ABResult, VersionScores
from evalops.util.safetext import plain

__all__ = ["delta_chart_svg", "means_chart_svg"]

_COLOURS = {"regression": "#c0392b", "improvement": "#1e8449", "no_change": "#7f8c8d", "inconclusive": "#d68910"}
_OTHER = "#34495e"
# One colour per version in the bar chart (the tab10 cycle the charts used to get from matplotlib).
_SERIES = ("#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f", "#bcbd22",
           "#17becf")
_FONT = 'font-family="DejaVu Sans, Helvetica, Arial, sans-serif"'
_LABEL_LIMIT = 80  # characters of a label; longer ones are cut with a marker
_TITLE_LIMIT = 400  # characters of a mark's <title> (its label and numbers)
_CHAR_WIDTH = 6.6  # px per character at font-size 11, to size the label column


def _finite(x: float | None) -> bool:
    return x is not None and isinstance(x, int | float) and math.isfinite(x)


def _finites(*xs: float | None) -> list[float]:
    return [float(x) for x in xs if x is not None and _finite(x)]


def _text(value: object, limit: int = _LABEL_LIMIT) -> str:
    return str(escape(plain(str(value), limit)))


def _num(x: float) -> str:
    return f"{x:.1f}".rstrip("0").rstrip(".")


def _svg(width: float, height: float, title: str, parts: Sequence[str]) -> bytes:
    head = (f'<svg xmlns="http://www.w3.org/2000/svg" width="{_num(width)}" height="{_num(height)}" '
            f'viewBox="0 0 {_num(width)} {_num(height)}" role="img" {_FONT} font-size="11">'
            f"<title>{_text(title)}</title>"
            f'<rect width="100%" height="100%" fill="#ffffff"/>')
    return (head + "".join(parts) + "</svg>\n").encode("utf-8")


# What safetext's cut adds to a label it shortens: "… (N more characters)".
_CUT_MARKER = len("… (999 more characters)")


def _legend_columns(names: Sequence[str], room: float) -> tuple[int, int]:
    """(entries per legend row, characters a label may keep): the most columns, up to 3, in which every
    name fits whole; else one column, with the labels cut so that the cut's marker fits too."""
    longest = max((len(plain(n, None)) for n in names), default=0)
    for per_row in (3, 2):
        if len(names) >= per_row and longest <= (room / per_row - 24) / _CHAR_WIDTH:
            return per_row, longest
    fits = int((room - 24) / _CHAR_WIDTH)
    return 1, fits if longest <= fits else max(12, fits - _CUT_MARKER)


def _ticks(lo: float, hi: float, n: int = 8) -> list[float]:
    """About ``n`` round values covering ``[lo, hi]``."""
    raw = (hi - lo) / n if hi > lo else 1.0
    mag = 10 ** math.floor(math.log10(raw))
    step = next(m * mag for m in (1, 2, 2.5, 5, 10) if m * mag >= raw)
    first = math.ceil(lo / step - 1e-9)
    return [round(i * step, 12) for i in range(first, math.floor(hi / step + 1e-9) + 1)]


def _tick_label(x: float) -> str:
    return f"{x:.4g}" if x else "0"


def delta_chart_svg(results: list[ABResult]) -> bytes | None:
    """A forest plot: each comparison's delta (candidate − baseline) with its decision interval (the one the
    rule read, at the family's level), coloured by decision.

    Returns None when there is nothing to plot.
    """
    rows = [r for r in results if _finite(r.comparison.delta)]
    if not rows:
        return None
    labels = [f"{r.retriever} {r.candidate_version} · {r.comparison.measure} [{r.query_set}]" for r in rows]
    label_chars = int(420 / _CHAR_WIDTH)  # the label column is at most 420 px; longer labels are cut
    left = 12 + max(len(plain(s, label_chars)) for s in labels) * _CHAR_WIDTH
    width, right, top, row_h = left + 420, 16, 30, 26
    bottom = top + row_h * len(rows)
    height = bottom + 44
    values = [0.0] + [v for r in rows for v in _finites(r.comparison.delta, r.comparison.interval_low,
                                                        r.comparison.interval_high)]
    lo, hi = min(values), max(values)
    pad = (hi - lo) * 0.06 or 0.01
    lo, hi = lo - pad, hi + pad

    def sx(x: float) -> float:
        return left + (x - lo) / (hi - lo) * (width - left - right)

    parts = [f'<text x="{_num((left + width - right) / 2)}" y="18" text-anchor="middle" font-size="13">'
             "Candidate minus baseline</text>"]
    for t in _ticks(lo, hi):
        x = _num(sx(t))
        parts.append(f'<line x1="{x}" x2="{x}" y1="{top}" y2="{bottom}" stroke="#000000" stroke-opacity="0.15"/>'
                     f'<text x="{x}" y="{bottom + 14}" text-anchor="middle">{_tick_label(t)}</text>')
    parts.append(f'<rect x="{_num(left)}" y="{top}" width="{_num(width - left - right)}" height="{bottom - top}" '
                 'fill="none" stroke="#000000" stroke-width="0.8"/>')
    zero = _num(sx(0.0))
    parts.append(f'<line x1="{zero}" x2="{zero}" y1="{top}" y2="{bottom}" stroke="#000000" stroke-width="0.8"/>')
    for i, (r, label) in enumerate(zip(rows, labels)):
        y = _num(top + row_h * (i + 0.5))
        c = r.comparison
        colour = _COLOURS.get(c.decision, _OTHER)
        delta = float(c.delta or 0.0)  # finite: the rows are those with a finite delta
        bounds = _finites(c.interval_low, c.interval_high)
        interval = len(bounds) == 2
        about = f"{label}: delta {delta:.4f}"
        if interval:
            about += f", decision interval [{bounds[0]:.4f}, {bounds[1]:.4f}]"
        about += f" ({c.decision})"
        parts.append(f"<g><title>{_text(about, _TITLE_LIMIT)}</title>")
        if interval:
            parts.append(f'<line x1="{_num(sx(bounds[0]))}" x2="{_num(sx(bounds[1]))}" y1="{y}" '
                         f'y2="{y}" stroke="{colour}" stroke-width="2"/>')
        parts.append(f'<circle cx="{_num(sx(delta))}" cy="{y}" r="4" fill="{colour}"/></g>')
        parts.append(f'<text x="{_num(left - 6)}" y="{y}" dy="0.35em" text-anchor="end">{_text(label, label_chars)}</text>')
    parts.append(f'<text x="{_num((left + width - right) / 2)}" y="{bottom + 32}" text-anchor="middle">'
                 "delta vs baseline (decision interval)</text>")
    return _svg(width, height, "Candidate minus baseline", parts)


def means_chart_svg(versions: list[VersionScores], query_set: str = "gold") -> bytes | None:
    """Grouped bars: the mean of each measure per version on one query set, with CI whiskers."""
    shown = [v for v in versions if v.query_set == query_set and v.aggregates]
    measures = list(dict.fromkeys(m for v in shown for m in v.aggregates))
    if not shown or not measures:
        return None
    width, left, right, top, plot_h = 760, 56, 12, 30, 250
    bottom = top + plot_h
    names = [f"{v.retriever} {v.version}" + (" (stored baseline)" if v.stored_baseline else "") for v in shown]
    per_row, legend_chars = _legend_columns(names, width - left - right)
    legend_rows = math.ceil(len(shown) / per_row)
    height = bottom + 34 + 18 * legend_rows + 6
    group = (width - left - right) / len(measures)
    bar = group * 0.8 / len(shown)

    def sy(y: float) -> float:
        return bottom - max(0.0, min(1.0, y)) * plot_h

    title = f"Measures per version ({query_set} queries)"
    parts = [f'<text x="{_num((left + width - right) / 2)}" y="18" text-anchor="middle" font-size="13">'
             f"{_text(title)}</text>"]
    for k in range(6):
        t = k / 5
        y = _num(sy(t))
        parts.append(f'<line x1="{left}" x2="{width - right}" y1="{y}" y2="{y}" stroke="#000000" '
                     f'stroke-opacity="0.12"/><text x="{left - 5}" y="{y}" dy="0.35em" text-anchor="end">{t:.1f}</text>')
    parts.append(f'<text transform="translate(14 {_num(top + plot_h / 2)}) rotate(-90)" text-anchor="middle">'
                 "mean (95% CI)</text>")
    for i, m in enumerate(measures):
        x = _num(left + group * (i + 0.5))
        parts.append(f'<text x="{x}" y="{bottom + 15}" text-anchor="middle">{_text(m)}</text>')
    legend = []
    for j, (v, name) in enumerate(zip(shown, names)):
        colour = _SERIES[j % len(_SERIES)]
        for i, m in enumerate(measures):
            agg = v.aggregates.get(m)
            if not agg or not _finite(agg.get("mean")):
                continue
            mean = float(agg["mean"])
            lo, hi = agg.get("ci_low"), agg.get("ci_high")
            x0 = left + group * i + group * 0.1 + bar * j
            about = f"{name} · {m}: mean {mean:.4f}"
            if _finite(lo) and _finite(hi):
                about += f" (95% CI {float(lo):.4f} to {float(hi):.4f})"
            top_y = sy(mean)
            parts.append(f"<g><title>{_text(about, _TITLE_LIMIT)}</title>"
                         f'<rect x="{_num(x0)}" y="{_num(top_y)}" width="{_num(bar)}" '
                         f'height="{_num(bottom - top_y)}" fill="{colour}"/>')
            whisker_lo = float(lo) if _finite(lo) else mean
            whisker_hi = float(hi) if _finite(hi) else mean
            if whisker_hi > whisker_lo:
                cx, cap = x0 + bar / 2, min(3.0, bar / 3)
                y_lo, y_hi = _num(sy(whisker_lo)), _num(sy(whisker_hi))
                parts.append(f'<path d="M{_num(cx)} {y_lo}V{y_hi}M{_num(cx - cap)} {y_hi}H{_num(cx + cap)}'
                             f'M{_num(cx - cap)} {y_lo}H{_num(cx + cap)}" stroke="#000000" fill="none"/>')
            parts.append("</g>")
        col, row = j % per_row, j // per_row
        lx, ly = left + col * (width - left - right) / per_row, bottom + 34 + 18 * row
        legend.append(f'<rect x="{_num(lx)}" y="{ly - 9}" width="12" height="10" fill="{colour}"/>'
                      f'<text x="{_num(lx + 17)}" y="{ly}">{_text(name, legend_chars)}</text>')
    parts.append(f'<line x1="{left}" x2="{width - right}" y1="{bottom}" y2="{bottom}" stroke="#000000" '
                 'stroke-width="0.8"/>')
    return _svg(width, height, title, parts + legend)
