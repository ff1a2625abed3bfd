"""Server-rendered SVG charts: no script, no network, the same markup in the app and in the static export.

Every piece of text that reaches the SVG (version names, labels, tooltips) goes through
``markupsafe.escape``; the result is ``Markup`` so the templates do not escape it twice.
"""

from __future__ import annotations

import datetime as dt
import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import NamedTuple

from markupsafe import Markup, escape

__all__ = ["MAX_POINTS", "Marker", "Point", "Series", "histogram", "line_chart", "PALETTE"]

MAX_POINTS = 62  # per series; longer series draw points only where notable (see line_chart)

# Colour-blind-safe (Okabe-Ito) order.
PALETTE = ("#0072B2", "#D55E00", "#009E73", "#CC79A7", "#E69F00", "#56B4E9", "#F0E442", "#000000",
           "#999999", "#882255")
MARKER_STYLE = {  # kind -> (colour, dash, legend label)
    "promotion": ("#009E73", "", "baseline promoted"),
    "rollback": ("#882255", "", "baseline rolled back"),
    "kb": ("#E69F00", "4 3", "knowledge base changed"),
    "gold": ("#56B4E9", "2 3", "gold set changed"),
    "alert": ("#D55E00", "1 2", "alert"),
}


class Point(NamedTuple):  # a tuple: a year's trend page makes 5,475 of them
    x: dt.datetime
    y: float
    lo: float | None = None
    hi: float | None = None
    href: str | None = None
    title: str = ""
    notable: bool = False  # drawn as a point even when the series is too long for a point per run


@dataclass(frozen=True)
class Series:
    name: str
    points: Sequence[Point]
    color: str = PALETTE[0]


@dataclass(frozen=True)
class Marker:
    x: dt.datetime
    kind: str
    label: str
    href: str | None = None


_LABEL_BASELINE = 14  # the y label's baseline; the plot of a labelled chart starts _LABEL_BAND below the top
_LABEL_BAND = 32


@dataclass
class _Frame:
    width: int
    height: int
    left: int = 56
    right: int = 44
    top: int = 16
    bottom: int = 34
    x0: float = 0.0
    x1: float = 1.0
    y0: float = 0.0
    y1: float = 1.0
    parts: list[str] = field(default_factory=list)

    def sx(self, x: float) -> float:
        span = (self.x1 - self.x0) or 1.0
        return self.left + (x - self.x0) / span * (self.width - self.left - self.right)

    def sy(self, y: float) -> float:
        span = (self.y1 - self.y0) or 1.0
        return self.height - self.bottom - (y - self.y0) / span * (self.height - self.top - self.bottom)


def _ts(x: dt.datetime) -> float:
    return x.timestamp()


def _finite(v: float | None) -> bool:
    if type(v) is float:  # the common case, first
        return math.isfinite(v)
    return v is not None and isinstance(v, (int, float)) and math.isfinite(v)


def _nice_ticks(lo: float, hi: float, n: int = 5) -> list[float]:
    if hi <= lo:
        hi = lo + 1.0
    raw = (hi - lo) / n
    mag = 10 ** math.floor(math.log10(raw))
    step = next(m * mag for m in (1, 2, 2.5, 5, 10) if m * mag >= raw)
    start = math.ceil(lo / step) * step
    return [start + i * step for i in range(int((hi - start) / step) + 1)]


def line_chart(
    series: Sequence[Series],
    markers: Sequence[Marker] = (),
    *,
    width: int = 960,
    height: int = 320,
    y_label: str = "",
    y_format: str = "{:.3f}",
    title: str = "",
    max_points: int = MAX_POINTS,
) -> Markup:
    """Lines over time with interval bands (``lo``/``hi``), clickable points and vertical event markers.

    A series longer than ``max_points`` is drawn as its line and band, with points only where ``notable``
    (and at its last run), so a year of daily runs stays a page of tens of kilobytes, not megabytes."""
    stamps = [[_ts(p.x) for p in s.points] for s in series]  # each point's x, once
    xs = [x for xs_of in stamps for x in xs_of] + [_ts(m.x) for m in markers]
    ys = [v for s in series for p in s.points for v in (p.y, p.lo, p.hi)
          if v is not None and (math.isfinite(v) if type(v) is float else _finite(v))]
    # the y label sits in a band above the plot, clear of the top tick and of the event markers' squares
    f = _Frame(width, height, top=_LABEL_BAND if y_label else 16)
    if not xs:
        return Markup(f'<svg class="chart" role="img" viewBox="0 0 {width} {height}" width="100%">'
                      f'<text x="{width / 2}" y="{height / 2}" text-anchor="middle">no data</text></svg>')
    f.x0, f.x1 = min(xs), max(xs)
    if f.x1 == f.x0:
        f.x0, f.x1 = f.x0 - 43200, f.x1 + 43200
    lo, hi = (min(ys), max(ys)) if ys else (0.0, 1.0)
    pad = (hi - lo) * 0.08 or 0.05
    f.y0, f.y1 = lo - pad, hi + pad
    out = [f'<svg class="chart" role="img" aria-label="{escape(title)}" viewBox="0 0 {width} {height}" '
           f'width="100%" preserveAspectRatio="xMidYMid meet" xmlns="http://www.w3.org/2000/svg">']
    if title:
        out.append(f"<title>{escape(title)}</title>")
    out += _axes(f, y_label, y_format)
    out += [_marker(f, m) for m in markers]
    for s, xs_of in zip(series, stamps):
        out += _series(f, s, xs_of, max_points)
    out.append("</svg>")
    return Markup("".join(out) + f'<div class="legend">{_legend(series, markers)}</div>')


def _axes(f: _Frame, y_label: str, y_format: str) -> list[str]:
    """The y grid and ticks, the dates under the plot and the y label."""
    out = []
    for t in _nice_ticks(f.y0, f.y1):
        y = f.sy(t)
        out.append(f'<line class="grid" x1="{f.left}" x2="{f.width - f.right}" y1="{y:.1f}" y2="{y:.1f}"/>'
                   f'<text class="tick" x="{f.left - 6}" y="{y + 4:.1f}" text-anchor="end">'
                   f"{escape(y_format.format(t))}</text>")
    for x in _time_ticks(f.x0, f.x1):
        px = f.sx(_ts(x))
        out.append(f'<text class="tick" x="{px:.1f}" y="{f.height - f.bottom + 16}" text-anchor="middle">'
                   f"{x:%Y-%m-%d}</text>")
    if y_label:
        out.append(f'<text class="axis-label" x="12" y="{_LABEL_BASELINE}" text-anchor="start">{escape(y_label)}</text>')
    return out


def _marker(f: _Frame, m: Marker) -> str:
    """A vertical event line with its square and tooltip (a link when it has one)."""
    color, dash, legend = MARKER_STYLE.get(m.kind, ("#666", "", m.kind))
    px = f.sx(_ts(m.x))
    line = (f'<line x1="{px:.1f}" x2="{px:.1f}" y1="{f.top}" y2="{f.height - f.bottom}" stroke="{color}" '
            f'stroke-width="2" stroke-dasharray="{dash}"/>'
            f'<rect x="{px - 5:.1f}" y="{f.top - 2}" width="10" height="10" fill="{color}"/>')
    body = f'<g class="marker marker-{escape(m.kind)}" data-kind="{escape(m.kind)}"><title>' \
           f"{escape(legend)}: {escape(m.label)} ({m.x:%Y-%m-%d})</title>{line}</g>"
    return f'<a href="{escape(m.href)}">{body}</a>' if m.href else body


def _series(f: _Frame, s: Series, xs_of: Sequence[float], max_points: int) -> list[str]:
    """One series: its interval band, its line and its points (only the notable ones and the last when it
    has more than ``max_points``)."""
    # f.sx and f.sy written out (the same arithmetic, so the same coordinates): a year of five versions is
    # 1,825 points a chart, each drawn in the band, the line and maybe a dot
    left, x0, x_span, x_width = f.left, f.x0, (f.x1 - f.x0) or 1.0, f.width - f.left - f.right
    base, y0, y_span, y_height = f.height - f.bottom, f.y0, (f.y1 - f.y0) or 1.0, f.height - f.top - f.bottom
    out = []
    pts, px, py = [], [], []  # the drawable points and their coordinates, formatted once
    for p, x in zip(s.points, xs_of):
        if math.isfinite(p.y) if type(p.y) is float else _finite(p.y):
            pts.append(p)
            px.append(f"{left + (x - x0) / x_span * x_width:.1f}")
            py.append(f"{base - (p.y - y0) / y_span * y_height:.1f}")
    band = [i for i, p in enumerate(pts) if p.lo is not None and p.hi is not None and _finite(p.lo)
            and _finite(p.hi)]
    if len(band) > 1:
        upper = " ".join(f"{px[i]},{base - (pts[i].hi - y0) / y_span * y_height:.1f}" for i in band)
        lower = " ".join(f"{px[i]},{base - (pts[i].lo - y0) / y_span * y_height:.1f}" for i in reversed(band))
        out.append(f'<polygon class="band" points="{upper} {lower}" fill="{s.color}" fill-opacity="0.15"/>')
    if len(pts) > 1:
        path = " ".join(f"{x},{y}" for x, y in zip(px, py))
        out.append(f'<polyline class="line" points="{path}" fill="none" stroke="{s.color}" stroke-width="2">'
                   f"<title>{escape(s.name)}: {len(pts)} runs</title></polyline>")
    radius = 4 if len(pts) <= 60 else 3
    shown: Sequence[int] = range(len(pts))
    if len(pts) > max_points:
        shown = [i for i in range(len(pts) - 1) if pts[i].notable] + [len(pts) - 1]
    name = escape(s.name)
    for i in shown:
        p = pts[i]
        dot = (f'<circle class="point" data-series="{name}" cx="{px[i]}" '
               f'cy="{py[i]}" r="{radius}" fill="{s.color}"><title>{escape(p.title)}</title></circle>')
        out.append(f'<a href="{escape(p.href)}">{dot}</a>' if p.href else dot)
    return out


def _legend(series: Sequence[Series], markers: Sequence[Marker]) -> str:
    legend = "".join(
        f'<span class="legend-item">{_swatch(s.color)}{escape(s.name)}</span>'
        for s in series
    )
    kinds = sorted({m.kind for m in markers})
    legend += "".join(
        f'<span class="legend-item">{_swatch(MARKER_STYLE[k][0])}'
        f"{escape(MARKER_STYLE[k][2])}</span>" for k in kinds if k in MARKER_STYLE
    )
    return legend


def _swatch(color: str) -> str:
    # A presentation attribute, not a style attribute: the pages' CSP allows no inline style.
    return f'<svg class="swatch" width="12" height="12" aria-hidden="true"><rect width="12" height="12" fill="{color}"/></svg>'


def _time_ticks(x0: float, x1: float, n: int = 6) -> list[dt.datetime]:
    day = 86400.0
    span_days = max((x1 - x0) / day, 1.0)
    step = max(1, math.ceil(span_days / n))
    start = dt.datetime.fromtimestamp(x0, dt.UTC).replace(hour=0, minute=0, second=0, microsecond=0)
    ticks, t = [], start
    while _ts(t) <= x1:
        if _ts(t) >= x0:
            ticks.append(t)
        t += dt.timedelta(days=step)
    return ticks


def histogram(values: Sequence[float], *, bins: int = 21, width: int = 640, height: int = 220,
              x_label: str = "", title: str = "") -> Markup:
    """Counts of ``values`` in equal-width bins symmetric around 0 (for per-query deltas)."""
    vals = [v for v in values if _finite(v)]
    if not vals:
        return Markup(f'<svg class="chart" viewBox="0 0 {width} {height}" width="100%"><text x="{width / 2}" '
                      f'y="{height / 2}" text-anchor="middle">no per-query values</text></svg>')
    edge = max(abs(min(vals)), abs(max(vals))) or 1.0
    step = 2 * edge / bins
    counts = [0] * bins
    for v in vals:
        counts[min(bins - 1, int((v + edge) / step))] += 1
    f = _Frame(width, height, left=40)
    f.x0, f.x1, f.y0, f.y1 = -edge, edge, 0.0, float(max(counts))
    out = [f'<svg class="chart histogram" role="img" aria-label="{escape(title)}" viewBox="0 0 {width} {height}" '
           f'width="100%" xmlns="http://www.w3.org/2000/svg">']
    if title:
        out.append(f"<title>{escape(title)}</title>")
    for i, c in enumerate(counts):
        a, b = -edge + i * step, -edge + (i + 1) * step
        color = "#D55E00" if b <= 0 else "#009E73" if a >= 0 else "#999999"
        x, w = f.sx(a), f.sx(b) - f.sx(a) - 1
        y = f.sy(c)
        out.append(f'<rect class="bin" x="{x:.1f}" y="{y:.1f}" width="{max(w, 1):.1f}" '
                   f'height="{f.sy(0) - y:.1f}" fill="{color}"><title>{a:+.3f} to {b:+.3f}: {c}</title></rect>')
    for t in _nice_ticks(f.y0, f.y1, 4):
        out.append(f'<text class="tick" x="{f.left - 6}" y="{f.sy(t) + 4:.1f}" text-anchor="end">{t:g}</text>')
    for t in (-edge, 0.0, edge):
        out.append(f'<text class="tick" x="{f.sx(t):.1f}" y="{height - f.bottom + 16}" text-anchor="middle">'
                   f"{t:+.2f}</text>")
    out.append(f'<line x1="{f.sx(0):.1f}" x2="{f.sx(0):.1f}" y1="{f.top}" y2="{height - f.bottom}" stroke="#333"/>')
    if x_label:
        out.append(f'<text class="axis-label" x="{width / 2}" y="{height - 2}" text-anchor="middle">'
                   f"{escape(x_label)}</text>")
    out.append("</svg>")
    return Markup("".join(out))
