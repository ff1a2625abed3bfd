"""The trend page: a measure over time per version, with its interval bands, its events and the latency."""

from __future__ import annotations

import datetime as dt
import math
from typing import TYPE_CHECKING, Any

from evalops.dashboard import svg
from evalops.dashboard.links import TREND_RANGES, Links
from evalops.dashboard.pages import DashboardSettings, NotFound, Page, _alert_measures, _day, _num, _ordered, fmt
from evalops.warehouse import dashboard as wh

if TYPE_CHECKING:  # pragma: no cover
    from sqlalchemy.engine import Engine

__all__ = ["trend_page"]


def _cut(rows: list[dict[str, Any]], days: int) -> tuple[list[dict[str, Any]], dt.datetime | None]:
    if not rows or not days:
        return rows, None
    since = max(r["logical_date"] for r in rows) - dt.timedelta(days=days)
    return [r for r in rows if r["logical_date"] >= since], since


def trend_page(engine: Engine, links: Links, settings: DashboardSettings, *, retriever: str | None = None,
               measure: str | None = None, dataset: str = "gold", days: int = 90) -> Page:
    measures = wh.dashboard_measures(engine)
    if not measures:
        raise NotFound("the warehouse holds no runs yet")
    retriever = retriever or sorted(measures)[0]
    if retriever not in measures:
        raise NotFound(f"no runs of retriever {retriever!r}")
    measure = measure or _alert_measures(settings, measures, retriever)[0]
    if measure not in measures[retriever]:
        raise NotFound(f"{retriever} has no measure {measure!r}")
    if dataset not in ("gold", "production"):
        raise NotFound(f"no dataset {dataset!r} (gold or production)")
    rows, since = _cut(wh.dashboard_trend(engine, retriever, measure, dataset=dataset, days=days), days)
    versions = sorted({r["version"] for r in rows})
    colors = {v: svg.PALETTE[i % len(svg.PALETTE)] for i, v in enumerate(versions)}
    markers = _markers(engine, links, rows, retriever, measure, dataset, since)
    alert_days = {m.x for m in markers if m.kind == "alert"}
    by_version: dict[str, list[dict[str, Any]]] = {}
    for r in rows:
        by_version.setdefault(r["version"], []).append(r)
    series = []
    for v in versions:
        mine = by_version[v]
        long = len(mine) > svg.MAX_POINTS
        pts = []
        for i, (before, r) in enumerate(_pairs(mine)):
            notable = r["logical_date"] in alert_days or r["decision"] != before["decision"]
            drawn = not long or notable or i == len(mine) - 1  # only drawn points need a title and a link
            mean = _num(r["mean"])
            pts.append(svg.Point(
                r["logical_date"], math.nan if mean is None else mean, _num(r["ci_low"]), _num(r["ci_high"]),
                href=links.ab(r["ab_id"]) if drawn and r["ab_id"] else None,
                title=(f"{v} {_day(r['logical_date'])}: {measure} {fmt(mean)} [{fmt(r['ci_low'])}, "
                       f"{fmt(r['ci_high'])}], n={r['n']}" + (f", {r['decision']} vs baseline" if r["decision"] else "")
                       ) if drawn else "",
                notable=notable))
        series.append(svg.Series(v, pts, colors[v]))
    chart = svg.line_chart(series, markers, y_label=f"{measure} ({dataset})",
                           title=f"{retriever}: {measure} on the {dataset} queries")
    latency = _latency_chart(engine, retriever, dataset, days, colors)
    table = [{"when": _day(r["logical_date"]), "version": r["version"], "mean": fmt(r["mean"]),
              "interval": f"[{fmt(r['ci_low'])}, {fmt(r['ci_high'])}]", "n": r["n"], "status": r["status"],
              "n_failed": r["n_failed"],
              "decision": r["decision"], "ab_href": links.ab(r["ab_id"]) if r["ab_id"] else None}
             for r in reversed(rows[-40:])]
    marker_rows = [{"day": _day(m.x), "kind": svg.MARKER_STYLE.get(m.kind, ("", "", m.kind))[2], "label": m.label,
                    "href": m.href} for m in markers]
    return "trend.html", {
        "page": "trends", "retriever": retriever, "measure": measure, "dataset": dataset, "days": days,
        "chart": chart, "latency": latency, "table": table, "markers": marker_rows,
        "ranges": [{"days": d, "label": f"{d} days" if d else "all", "href": links.trend(retriever, measure, dataset, d),
                    "active": d == days} for d in TREND_RANGES],
        "measure_links": [{"name": m, "href": links.trend(retriever, m, dataset, days), "active": m == measure}
                          for m in _ordered(settings, measures[retriever])],
        "dataset_links": [{"name": d, "href": links.trend(retriever, measure, d, days), "active": d == dataset}
                          for d in ("gold", "production")],
        "retriever_links": [{"name": r, "href": links.trend(r, _alert_measures(settings, measures, r)[0], dataset, days),
                             "active": r == retriever} for r in sorted(measures)],
    }


def _latency_chart(engine: Engine, retriever: str, dataset: str, days: int,
                   colors: dict[str, str]) -> svg.Markup | None:
    """The retrieval latency of each version over the same days (None when no run was timed)."""
    timing_rows, _ = _cut(wh.dashboard_timings(engine, retriever, dataset=dataset, days=days), days)
    if not timing_rows:
        return None
    lat_series = []
    timing_by_version: dict[str, list[dict[str, Any]]] = {}
    for r in timing_rows:
        timing_by_version.setdefault(r["version"], []).append(r)
    for v, mine in sorted(timing_by_version.items()):
        # Adapters that answer in batches (the built-ins) time the batch, not each query: their line is
        # the wall time per query instead of percentiles.
        measured = any(_num(r["latency_p50_ms"]) is not None for r in mine)
        for r in mine:
            wall, n = _num(r["wall_seconds"]), r["n_queries"] or 0
            r["per_query_ms"] = wall * 1000.0 / n if wall is not None and n else None
        columns = (("p50", "latency_p50_ms"), ("p95", "latency_p95_ms")) if measured else (
            ("wall time per query", "per_query_ms"),)
        for label, column in columns:
            long = len(mine) > svg.MAX_POINTS
            pts = [svg.Point(r["logical_date"], math.nan if (value := _num(r[column])) is None else value,
                             title="" if long and i < len(mine) - 1 else
                             f"{v} {_day(r['logical_date'])}: {label} {fmt(r[column], '.2f')} ms, "
                             f"{r['timing_failed']} failed")
                   for i, r in enumerate(mine)]
            lat_series.append(svg.Series(f"{v} {label}", pts, colors.get(v, svg.PALETTE[-1])))
    return svg.line_chart(lat_series, (), y_label="latency (ms)", y_format="{:.3g}", height=240,
                          title=f"{retriever}: retrieval latency")


def _pairs(rows: list[dict[str, Any]]) -> list[tuple[dict[str, Any], dict[str, Any]]]:
    """Each row with the one before it (the first with itself): a long series marks where its decision
    changed."""
    return list(zip(rows[:1] + rows[:-1], rows))


def _markers(engine: Engine, links: Links, rows: list[dict[str, Any]], retriever: str, measure: str, dataset: str,
             since: dt.datetime | None) -> list[svg.Marker]:
    out: list[svg.Marker] = []
    lo = min((r["logical_date"] for r in rows), default=None)
    hi = max((r["logical_date"] for r in rows), default=None)

    def inside(x: dt.datetime) -> bool:
        return lo is not None and lo <= x <= hi

    for p in wh.dashboard_promotions(engine, retriever):
        if inside(p["logical_date"]):  # a promotion concerns the version on every query set
            kind = "promotion" if p["action"] == "promote" else "rollback"
            out.append(svg.Marker(p["logical_date"], kind, f"{p['version']} by {p['promoted_by']}: {p['reason']}"))
    by_day: dict[dt.datetime, tuple[str, str]] = {}
    for r in rows:
        by_day.setdefault(r["logical_date"], (r["kb_snapshot_id"], r["gold_set_version"]))
    previous: tuple[str, str] | None = None
    for day in sorted(by_day):
        kb, gold = by_day[day]
        if previous is not None:
            if kb != previous[0]:
                out.append(svg.Marker(day, "kb", f"snapshot {kb[:12]}"))
            if dataset == "gold" and gold != previous[1]:
                out.append(svg.Marker(day, "gold", f"gold set {gold[:12]}"))
        previous = (kb, gold)
    for a in wh.dashboard_alerts(engine, retriever=retriever, since=since.date() if since else None, limit=None):
        if a["measure"] not in (None, measure) or a.get("dataset") not in (None, dataset):
            continue
        x = a["logical_date"] or dt.datetime.combine(a["day"], dt.time(0), tzinfo=dt.UTC)
        if inside(x):
            out.append(svg.Marker(x, "alert", f"{a['severity']} {a['kind']}: {a['message'][:120]}",
                                  href=links.ab(a["ab_test_id"]) if a.get("ab_test_id") else None))
    return out
