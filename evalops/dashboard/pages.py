"""The dashboard's pages as plain functions: warehouse reads in, a template name and its context out.

The FastAPI app and the static export both call these, so a page is the same wherever it is opened.
Untrusted text (query text from production logs, alert messages, version names) is passed to the
templates as plain strings; Jinja2's autoescape escapes it, and the SVG builder escapes what it draws.
"""

from __future__ import annotations

import datetime as dt
import json
import math
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from evalops.dashboard import svg
from evalops.dashboard.links import TREND_RANGES, Links
from evalops.warehouse import dashboard as wh

if TYPE_CHECKING:  # pragma: no cover
    from sqlalchemy.engine import Engine

__all__ = ["DashboardSettings", "ab_page", "datadocs_page", "alerts_page", "overview_page", "runs_page", "trend_page", "NotFound"]

Page = tuple[str, dict[str, Any]]
ALERT_WINDOW_DAYS = 7


class NotFound(LookupError):
    """The page names something the warehouse does not hold."""


@dataclass(frozen=True)
class DashboardSettings:
    """``alert_measures``: the measures the overview shows first and the trend page opens on (default:
    every measure); ``measures``: the order measures are listed in (default: the fingerprint's)."""

    alert_measures: tuple[str, ...] = ()
    measures: tuple[str, ...] = ()
    title: str = "evalops"
    data_docs: Path | None = None  # the Great Expectations Data Docs folder the runs validate into
    worst_limit: int = 10  # shown in the worst-queries table; the rest of the losses fold out below it
    worse_limit: int = 300

    @classmethod
    def from_config(cls, cfg: Any) -> DashboardSettings:
        """The configured alert measures (the first measure when none is set), as the alerting uses them."""
        from evalops.pipeline.registry import alerting_measures, canonical_measures

        return cls(alert_measures=tuple(alerting_measures(cfg)), measures=tuple(canonical_measures(cfg)),
                   data_docs=Path(cfg.work_dir) / "data_docs")


def _num(v: Any) -> float | None:
    if v is None:
        return None
    try:
        v = float(v)
    except (TypeError, ValueError):
        return None
    return v if math.isfinite(v) else None


def fmt(v: Any, spec: str = ".3f") -> str:
    v = _num(v)
    return "–" if v is None else format(v, spec)


def _when(v: dt.datetime | None) -> str:
    return "–" if v is None else v.astimezone(dt.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")


def _day(v: dt.datetime | dt.date | None) -> str:
    return "–" if v is None else v.isoformat()[:10]


def _ordered(settings: DashboardSettings, known: list[str]) -> list[str]:
    first = [m for m in settings.measures if m in known]
    return first + [m for m in known if m not in first]


def _alert_measures(settings: DashboardSettings, measures: dict[str, list[str]], retriever: str) -> list[str]:
    known = _ordered(settings, measures.get(retriever, []))
    chosen = [m for m in settings.alert_measures if m in known]
    return chosen or known


def _current_baselines(engine: Engine) -> dict[str, set[str]]:
    out: dict[str, set[str]] = {}
    for p in wh.dashboard_promotions(engine):
        if p["is_current"]:
            out.setdefault(p["retriever"], set()).add(p["version"])
    return out


def overview_page(engine: Engine, links: Links, settings: DashboardSettings) -> Page:
    latest = wh.dashboard_latest_runs(engine)
    measures = wh.dashboard_measures(engine)
    aggs = wh.dashboard_aggregates(engine, [r["run_id"] for r in latest])
    comps = wh.dashboard_comparisons(engine, [r["run_id"] for r in latest])
    baselines = _current_baselines(engine)
    newest = max((r["logical_date"] for r in latest), default=None)
    since = (newest - dt.timedelta(days=ALERT_WINDOW_DAYS)).date() if newest else None
    recent_alerts = wh.dashboard_alerts(engine, since=since, limit=200)
    groups: dict[tuple[str, str], dict[str, Any]] = {}
    for run in latest:
        key = (run["retriever"], run["dataset"])
        shown = _alert_measures(settings, measures, run["retriever"])
        group = groups.setdefault(key, {
            "retriever": run["retriever"], "dataset": run["dataset"], "measures": shown, "rows": [],
            "trend_links": {m: links.trend(run["retriever"], m, run["dataset"]) for m in shown},
        })
        by_measure = {c["measure"]: c for c in comps[run["run_id"]]}
        cells = []
        for m in shown:
            agg = aggs[run["run_id"]].get(m)
            comp = by_measure.get(m)
            cells.append({
                "measure": m,
                "mean": fmt(agg and agg["mean"]),
                "interval": f"[{fmt(agg['ci_low'])}, {fmt(agg['ci_high'])}]" if agg else "",
                "decision": comp["decision"] if comp else None,
                "severity": comp.get("severity") if comp else None,
                "delta": fmt(comp["delta"], "+.3f") if comp else None,
                "baseline_version": comp["baseline_version"] if comp else None,
                "ab_href": links.ab(comp["id"]) if comp else None,
            })
        open_alerts = [a for a in recent_alerts if a["retriever"] == run["retriever"]
                       and a["version"] in (None, run["version"]) and (a["dataset"] in (None, run["dataset"]))]
        group["rows"].append({
            "version": run["version"],
            "is_baseline": run["version"] in baselines.get(run["retriever"], set()),
            "status": run["status"],
            "when": _day(run["logical_date"]),
            "finished": _when(run["finished_at"]),
            "n_queries": run["n_queries"],
            "n_used": next((aggs[run["run_id"]][m]["n"] for m in shown if m in aggs[run["run_id"]]), None),
            "n_failed": run["n_failed"],
            "cells": cells,
            "open_alerts": len(open_alerts),
            "alerts_href": links.alerts(retriever=run["retriever"]),
            "report_href": links.report(run["dag_id"], run["dag_run_id"]),
        })
    alerts = [_alert_row(a, links) for a in recent_alerts]
    return "overview.html", {"groups": list(groups.values()), "alerts": alerts, "newest": _day(newest),
                             "alert_window": ALERT_WINDOW_DAYS, "page": "overview"}


def _alert_row(a: dict[str, Any], links: Links) -> dict[str, Any]:
    return {
        "day": _day(a["day"]), "kind": a["kind"], "severity": a["severity"], "retriever": a["retriever"],
        "version": a["version"] or "–", "measure": a["measure"] or "–",
        "title": (a["message"].strip().splitlines() or [""])[0], "message": a["message"],
        "delivery": a["delivery_status"], "attempts": a["delivery_attempts"],
        "ab_href": links.ab(a["ab_test_id"]) if a.get("ab_test_id") else None,
    }


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
    rows, since = _cut(wh.dashboard_trend(engine, retriever, measure, dataset=dataset), days)
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
    timing_rows, _ = _cut(wh.dashboard_timings(engine, retriever, dataset=dataset), days)
    latency = None
    if timing_rows:
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
                pts = [svg.Point(r["logical_date"], _num(r[column]) if _num(r[column]) is not None else math.nan,
                                 title="" if long and i < len(mine) - 1 else
                                 f"{v} {_day(r['logical_date'])}: {label} {fmt(r[column], '.2f')} ms, "
                                 f"{r['timing_failed']} failed")
                       for i, r in enumerate(mine)]
                lat_series.append(svg.Series(f"{v} {label}", pts, colors.get(v, svg.PALETTE[-1])))
        latency = svg.line_chart(lat_series, (), y_label="latency (ms)", y_format="{:.1f}", height=240,
                                 title=f"{retriever}: retrieval latency")
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
        x = a["logical_date"] or dt.datetime.combine(a["day"], dt.time(0), tzinfo=dt.timezone.utc)
        if inside(x):
            out.append(svg.Marker(x, "alert", f"{a['severity']} {a['kind']}: {a['message'][:120]}",
                                  href=links.ab(a["ab_test_id"]) if a.get("ab_test_id") else None))
    return out


def ab_page(engine: Engine, links: Links, settings: DashboardSettings, ab_id: int) -> Page:
    detail = wh.dashboard_ab_detail(engine, ab_id)
    if detail is None:
        raise NotFound(f"no comparison {ab_id}")
    ab, base, cand = detail["ab"], detail["baseline_run"], detail["candidate_run"]
    queries = detail["queries"]
    deltas = [q["delta"] for q in queries if q["delta"] is not None]
    worst = sorted((q for q in queries if q["delta"] is not None), key=lambda q: (q["delta"], q["query_id"]))
    worst = [q for q in worst if q["delta"] < 0][: settings.worse_limit]
    level = _num(ab["ci_level"]) or 0.95
    measure, dataset = ab["measure"], cand["dataset"]
    words = (
        f"On the {dataset} queries (n = {ab['n']}), {cand['retriever']} {cand['version']} scored "
        f"{measure} {fmt(ab['candidate_mean'])} against {fmt(ab['baseline_mean'])} for the baseline "
        f"{base['version']}: a difference of {fmt(ab['delta'], '+.3f')} ({level:.0%} interval "
        f"{fmt(ab['delta_ci_low'], '+.3f')} to {fmt(ab['delta_ci_high'], '+.3f')}). "
        f"The {ab['test']} gives p = {fmt(ab['p_value'], '.4g')} (adjusted {fmt(ab['p_adjusted'], '.4g')}); "
        f"the paired effect size d_z is {fmt(ab['d_z'], '+.2f')}. The candidate won on {ab['wins']} queries, "
        f"tied on {ab['ties']} and lost on {ab['losses']}. Decision: {ab['decision']}."
    )
    numbers = [
        ("measure", measure), ("query set", dataset), ("n", ab["n"]),
        ("baseline", f"{base['version']} (run {base['run_id']}, {_day(base['logical_date'])})"),
        ("candidate", f"{cand['version']} (run {cand['run_id']}, {_day(cand['logical_date'])})"),
        ("baseline mean", fmt(ab["baseline_mean"])), ("candidate mean", fmt(ab["candidate_mean"])),
        ("delta", fmt(ab["delta"], "+.4f")),
        (f"delta {level:.0%} interval", f"[{fmt(ab['delta_ci_low'], '+.4f')}, {fmt(ab['delta_ci_high'], '+.4f')}]"),
        ("test", ab["test"]), ("p", fmt(ab["p_value"], ".4g")), ("p adjusted", fmt(ab["p_adjusted"], ".4g")),
        ("d_z", f"{fmt(ab['d_z'], '+.3f')} [{fmt(ab['d_z_ci_low'], '+.3f')}, {fmt(ab['d_z_ci_high'], '+.3f')}]"),
        ("wins / ties / losses", f"{ab['wins']} / {ab['ties']} / {ab['losses']}"),
        ("decision", ab["decision"]),
    ]
    for optional in ("severity", "criterion", "reason_code"):  # columns a newer schema may carry
        if ab.get(optional) is not None:
            numbers.append((optional, ab[optional]))
    fp = detail["fingerprint"]
    fingerprint = [("hash", fp["hash"]), ("gold-set / query-set version", fp["gold_set_version"]),
                   ("knowledge-base snapshot", fp["kb_snapshot_id"]), ("measures", ", ".join(fp["measures"])),
                   *((f"policy: {k}", _show(v)) for k, v in sorted(fp["policies"].items()))]
    return "ab.html", {
        "page": "ab", "ab": ab, "words": words, "numbers": numbers, "reasons": list(ab.get("reasons") or []),
        "policy": [(k, _show(v)) for k, v in sorted((ab.get("policy") or {}).items())],
        "fingerprint": fingerprint,
        "histogram": svg.histogram(deltas, x_label=f"per-query delta of {measure} (candidate − baseline)",
                                   title=f"distribution of per-query deltas ({len(deltas)} queries)"),
        "wins": ab["wins"], "ties": ab["ties"], "losses": ab["losses"],
        "worst": [{"query_id": q["query_id"], "text": q["text"], "baseline": fmt(q["baseline"]),
                   "candidate": fmt(q["candidate"]), "delta": fmt(q["delta"], "+.3f")} for q in worst],
        "worst_limit": settings.worst_limit,
        "trend_href": links.trend(cand["retriever"], measure, dataset),
        "report_href": links.report(cand["dag_id"], cand["dag_run_id"]),
        "retriever": cand["retriever"], "candidate": cand["version"], "baseline": base["version"],
    }


def _show(v: Any) -> str:
    return v if isinstance(v, str) else json.dumps(v, ensure_ascii=False, default=str)


RUN_FILTERS = ("retriever", "version", "dataset", "status")
ALERT_FILTERS = ("retriever", "kind", "severity", "delivery_status")


def runs_page(engine: Engine, links: Links, settings: DashboardSettings, **filters: str | None) -> Page:
    chosen = {k: v for k, v in filters.items() if k in RUN_FILTERS and v}
    found = wh.dashboard_runs(engine, limit=500, **chosen)
    rows = [{"when": _day(r["logical_date"]), "retriever": r["retriever"], "version": r["version"],
             "dataset": r["dataset"], "status": r["status"], "n_queries": r["n_queries"], "n_failed": r["n_failed"],
             "p50": fmt(r["latency_p50_ms"], ".1f"), "p95": fmt(r["latency_p95_ms"], ".1f"),
             "finished": _when(r["finished_at"]), "error": r["error"], "run_id": r["run_id"],
             "dag_run": f"{r['dag_id']}/{r['dag_run_id']}",
             "datadocs_href": links.datadocs(_day(r["started_at"])) if settings.data_docs else None,
             "report_href": links.report(r["dag_id"], r["dag_run_id"])} for r in found]
    options = _options(wh.dashboard_latest_runs(engine), ("retriever", "version", "dataset"))
    options["status"] = ["succeeded", "partial", "failed", "running"]
    return "runs.html", {"page": "runs", "rows": rows, "filters": chosen, "options": options,
                         "filter_names": RUN_FILTERS}


def alerts_page(engine: Engine, links: Links, settings: DashboardSettings, **filters: str | None) -> Page:
    chosen = {k: v for k, v in filters.items() if k in ALERT_FILTERS and v}
    rows = [_alert_row(a, links) for a in wh.dashboard_alerts(engine, limit=500, **chosen)]
    every = wh.dashboard_alerts(engine, limit=None)
    options = _options(every, ("retriever", "kind"))
    options["severity"] = ["info", "warning", "critical"]
    options["delivery_status"] = ["pending", "delivered", "undelivered"]
    return "alerts.html", {"page": "alerts", "rows": rows, "filters": chosen, "options": options,
                           "filter_names": ALERT_FILTERS}


def _options(rows: Sequence[dict[str, Any]], columns: Sequence[str]) -> dict[str, list[str]]:
    return {c: sorted({str(r[c]) for r in rows if r.get(c) is not None}) for c in columns}


def datadocs_page(engine: Engine, links: Links, settings: DashboardSettings) -> Page:
    from evalops.dashboard.datadocs import list_validations

    days: dict[str, list[dict[str, Any]]] = {}
    for v in list_validations(settings.data_docs):
        days.setdefault(_day(v["when"]), []).append({
            **v, "when": _when(v["when"]), "href": links.datadocs_file(v["path"])})
    return "datadocs.html", {"page": "datadocs", "days": list(days.items()), "folder": str(settings.data_docs or "")}
