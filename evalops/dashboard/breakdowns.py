"""The dashboard's "Sources and spread" page: each version's latest source shares of the top-k slots with
their precision and shift against the baseline (``evalops.sources``), each source's share by day (a line
chart of :mod:`evalops.dashboard.svg`, each point titled with its figures), the share history, and the mean
with its spread per segment, the long-document segment included (``evalops.spread``).

Source names are untrusted text from the knowledge base; the templates autoescape them like every value, and
the chart escapes what it draws.
"""

from __future__ import annotations

import datetime as dt
from typing import TYPE_CHECKING, Any

from evalops.dashboard import svg
from evalops.dashboard.links import Links
from evalops.util import numfmt
from evalops.warehouse import dashboard as wh
from evalops.warehouse.breakdowns import (
    load_segment_spreads,
    load_source_shares,
    source_share_history,
)

if TYPE_CHECKING:  # pragma: no cover
    from markupsafe import Markup
    from sqlalchemy.engine import Engine

    from evalops.dashboard.render import DashboardSettings

__all__ = ["sources_page"]

SHARE_DAYS_ROWS = 2000  # share rows read for one retriever's chart (newest first): months of a few sources
_FACETS = {"type": "query type", "language": "language", "split": "split", "segment": "log segment",
           "length": "relevant-document length"}


def _pct(value: Any) -> str:
    v = numfmt.defined(value)
    return numfmt.DASH if v is None else f"{100 * v:.1f}%"


def _points(value: Any) -> str:
    v = numfmt.defined(value)
    return numfmt.DASH if v is None else f"{100 * v:+.1f} pt"


def _share_row(r: dict[str, Any]) -> dict[str, Any]:
    bound = r.get("bound")
    shift = r.get("shift")
    return {"source": r["source"], "slots": f"{r['slots']} of {r['total']}", "share": _pct(r["share"]),
            "share_width": max(0.0, min(100.0, 100 * float(r["share"] or 0.0))),
            "precision": numfmt.DASH if r["precision"] is None else
            f"{numfmt.number(r['precision'])} ({r['relevant']}/{r['judged']})",
            "baseline": _pct(r.get("baseline_share")), "shift": _points(shift),
            "breached": bound is not None and shift is not None and abs(shift) > bound}


def _day_of(value: dt.datetime | dt.date) -> dt.datetime:
    return value if isinstance(value, dt.datetime) else dt.datetime(value.year, value.month, value.day, tzinfo=dt.UTC)


def share_chart(rows: list[dict[str, Any]], title: str) -> Markup | None:
    """The share of the top-k slots of each source of one version by day, a line per source; each point is
    titled with its day, source, share, slots, precision and shift. None without any share."""
    points: dict[str, list[svg.Point]] = {}
    for r in sorted(rows, key=lambda r: (r["logical_date"], r["source"])):
        share = numfmt.defined(r["share"])
        if share is None:
            continue
        row = _share_row(r)
        about = (f"{r['logical_date'].isoformat()[:10]} · {r['source']}: share {row['share']} ({row['slots']} "
                 f"slots), precision {row['precision']}, shift {row['shift']}")
        points.setdefault(r["source"], []).append(svg.Point(_day_of(r["logical_date"]), share, title=about))
    if not points:
        return None
    series = [svg.Series(name, pts, svg.PALETTE[i % len(svg.PALETTE)])
              for i, (name, pts) in enumerate(sorted(points.items()))]
    return svg.line_chart(series, width=640, height=220, y_label="share of the top-k slots", y_format="{:.0%}",
                          title=title)


def sources_page(engine: Engine, links: Links, settings: DashboardSettings) -> tuple[str, dict[str, Any]]:
    versions = []
    by_day: dict[tuple[str, str], list[dict[str, Any]]] = {}  # each retriever's share rows on a query set
    for run in wh.dashboard_latest_runs(engine):
        if run["status"] not in ("succeeded", "partial"):
            continue
        shares = load_source_shares(engine, run["run_id"])
        spreads = load_segment_spreads(engine, run["run_id"])
        if not shares and not spreads:
            continue
        policy = shares[0] if shares else None
        key = (run["retriever"], run["dataset"])
        if shares and key not in by_day:
            by_day[key] = source_share_history(engine, retriever=key[0], dataset=key[1], limit=SHARE_DAYS_ROWS)
        mine = [h for h in by_day.get(key, []) if h["version"] == run["version"]]
        versions.append({
            "retriever": run["retriever"], "version": run["version"], "dataset": run["dataset"],
            "day": run["logical_date"].isoformat()[:10],
            "policy": None if policy is None else {"field": policy["field"], "k": policy["k"],
                                                   "bound": _points(policy["bound"]).lstrip("+")},
            "shares": [_share_row(r) for r in shares],
            "chart": share_chart(mine, f"{run['retriever']} {run['version']}: share of each source by day"),
            "spreads": [{"facet": _FACETS.get(r["facet"], r["facet"]), "segment": r["segment"],
                         "measure": r["measure"], "n": r["n"], "mean": numfmt.number(r["mean"]),
                         "std": numfmt.number(r["std"]), "var": numfmt.number(r["var"]),
                         "p10": numfmt.number(r["p10"]), "median": numfmt.number(r["median"]),
                         "p90": numfmt.number(r["p90"]), "long": r["facet"] == "length" and r["segment"] == "long"}
                        for r in spreads],
        })
    history = [{"day": h["logical_date"].isoformat()[:10], "retriever": h["retriever"], "version": h["version"],
                "dataset": h["dataset"], **_share_row(h)} for h in source_share_history(engine, limit=300)]
    return "sources.html", {"page": "sources", "versions": versions, "history": history}
