"""Charts for the report, rendered to PNG bytes with matplotlib's Agg canvas.

The figures are built with ``matplotlib.figure.Figure`` and ``FigureCanvasAgg`` directly, not pyplot, so
no global backend or figure state changes in the calling process (an Airflow worker, a test).
"""

from __future__ import annotations

import io
import math

from evalops.extras import require
from evalops.reports.model import ABResult, VersionScores

__all__ = ["delta_chart_png", "means_chart_png"]

_COLOURS = {"regression": "#c0392b", "improvement": "#1e8449", "no_change": "#7f8c8d", "inconclusive": "#d68910"}


def _figure(*args, **kwargs):
    return require("matplotlib.figure", "reports", "draw the report's charts").Figure(*args, **kwargs)


def _png(fig) -> bytes:
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    FigureCanvasAgg(fig)
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=110, bbox_inches="tight")
    return buf.getvalue()


def _finite(x: float | None) -> bool:
    return x is not None and math.isfinite(x)


def delta_chart_png(results: list[ABResult]) -> bytes | None:
    """A forest plot: each comparison's delta (candidate − baseline) with its decision interval (the one the
    rule read, at the family's level), coloured by decision.

    Returns None when there is nothing to plot.
    """
    rows = [r for r in results if _finite(r.delta)]
    if not rows:
        return None
    fig = _figure(figsize=(7.5, 0.45 * len(rows) + 1.2))
    ax = fig.add_subplot()
    for i, r in enumerate(rows):
        colour = _COLOURS.get(r.decision, "#34495e")
        if _finite(r.interval_low) and _finite(r.interval_high):
            ax.plot([r.interval_low, r.interval_high], [i, i], color=colour, linewidth=2)
        ax.plot([r.delta], [i], "o", color=colour)
    ax.axvline(0.0, color="black", linewidth=0.8)
    ax.set_yticks(range(len(rows)))
    ax.set_yticklabels([f"{r.retriever} {r.candidate_version} · {r.measure} [{r.query_set}]" for r in rows])
    ax.invert_yaxis()
    ax.set_xlabel("delta vs baseline (decision interval)")
    ax.set_title("Candidate minus baseline")
    ax.grid(axis="x", alpha=0.3)
    return _png(fig)


def means_chart_png(versions: list[VersionScores], query_set: str = "gold") -> bytes | None:
    """Grouped bars: the mean of each measure per version on one query set, with CI whiskers."""
    shown = [v for v in versions if v.query_set == query_set and v.aggregates]
    measures = list(dict.fromkeys(m for v in shown for m in v.aggregates))
    if not shown or not measures:
        return None
    fig = _figure(figsize=(7.5, 3.6))
    ax = fig.add_subplot()
    width = 0.8 / len(shown)
    for j, v in enumerate(shown):
        xs, means, errs = [], [], [[], []]
        for i, m in enumerate(measures):
            agg = v.aggregates.get(m)
            if not agg or not _finite(agg.get("mean")):
                continue
            mean = float(agg["mean"])
            lo = agg.get("ci_low")
            hi = agg.get("ci_high")
            xs.append(i + j * width)
            means.append(mean)
            errs[0].append(mean - lo if _finite(lo) else 0.0)
            errs[1].append(hi - mean if _finite(hi) else 0.0)
        stored = " (stored baseline)" if v.stored_baseline else ""
        ax.bar(xs, means, width=width, yerr=errs, capsize=3, label=f"{v.retriever} {v.version}{stored}")
    ax.set_xticks([i + 0.4 - width / 2 for i in range(len(measures))])
    ax.set_xticklabels(measures)
    ax.set_ylim(0, 1)
    ax.set_ylabel("mean (95% CI)")
    ax.set_title(f"Measures per version ({query_set} queries)")
    ax.legend(fontsize="small", loc="upper center", bbox_to_anchor=(0.5, -0.1), ncol=min(3, len(shown)))
    return _png(fig)
