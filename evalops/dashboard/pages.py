"""The dashboard's pages as plain functions: warehouse reads in, a template name and its context out.

The FastAPI app and the static export both call these (the trend page is in ``trends``), so a page is the
same wherever it is opened.
Untrusted text (query text from production logs, alert messages, version names) is passed to the
templates as plain strings; Jinja2's autoescape escapes it, and the SVG builder escapes what it draws.
"""

from __future__ import annotations

import datetime as dt
import json
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from evalops.dashboard import svg
from evalops.dashboard.conversations import conversation_view
from evalops.dashboard.datadocs import list_validations
from evalops.dashboard.links import Links
from evalops.floors import check_floors
from evalops.judged.holes import judged_measure
from evalops.pipeline.registry import alerting_measures, canonical_measures
from evalops.util import numfmt
from evalops.warehouse import dashboard as wh
from evalops.warehouse.alerts import delivery_text
from evalops.warehouse.tables import ALERT_STATUSES

if TYPE_CHECKING:  # pragma: no cover
    from sqlalchemy.engine import Engine

__all__ = ["DashboardSettings", "ab_page", "datadocs_page", "alerts_page", "overview_page", "runs_page", "NotFound"]

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
    k: int = 100  # the retrieval depth: the Judged@k of a measure without a cutoff
    # the absolute floors (evalops.floors): (gold set, measure, floor, floor_on, severity)
    floors: tuple[tuple[str, str, float, str, str], ...] = ()
    # how long a rendered page is kept, and a finished comparison's page goes unchecked (evalops.dashboard.cache)
    cache_seconds: float = 5.0

    @classmethod
    def from_config(cls, cfg: Any) -> DashboardSettings:
        """The configured alert measures (the first measure when none is set), as the alerting uses them,
        and each gold set's floors."""
        floors = tuple((name, m, v, g.floor_on, g.floor_severity) for name, g in cfg.gold_sets.items()
                       for m, v in g.floors.items())
        return cls(alert_measures=tuple(alerting_measures(cfg)), measures=tuple(canonical_measures(cfg)),
                   data_docs=Path(cfg.work_dir) / "data_docs", k=cfg.k, floors=floors)

    def floor_cell(self, dataset: str, measure: str, agg: dict[str, Any] | None) -> dict[str, Any] | None:
        """The floor of ``measure`` on ``dataset`` checked against a run's aggregate, for a table cell."""
        for name, m, floor, on, severity in self.floors:
            if (name, m) == (dataset, measure):
                [check] = check_floors({m: floor}, [{"measure": m, **(agg or {})}], on=on, severity=severity)
                return {"floor": f"{floor:g}", "breached": check.breached, "title": check.describe(),
                        "severity": severity}
        return None


_num = numfmt.defined  # a finite float or None


def fmt(v: Any, spec: str | None = None) -> str:
    """A mean (or, with ``spec`` ``"+"``, a delta) by :mod:`evalops.util.numfmt`; any other ``spec`` is a format
    for numbers that are not scores (latencies)."""
    if spec is None or spec == "+":
        return numfmt.number(v, signed=spec == "+")
    v = _num(v)
    return numfmt.DASH if v is None else format(v, spec)


def _when(v: dt.datetime | None) -> str:
    return "–" if v is None else v.astimezone(dt.UTC).strftime("%Y-%m-%d %H:%M UTC")


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
            judged = None if m.startswith("Judged@") else aggs[run["run_id"]].get(judged_measure(m, settings.k))
            cells.append({
                "measure": m,
                "judged": fmt(judged["mean"]) if judged else None,  # judged coverage at the measure's cutoff
                "mean": fmt(agg and agg["mean"]),
                "interval": f"[{fmt(agg['ci_low'])}, {fmt(agg['ci_high'])}]" if agg else "",
                "decision": comp["decision"] if comp else None,
                "severity": comp.get("severity") if comp else None,
                "delta": fmt(comp["delta"], "+") if comp else None,
                "baseline_version": comp["baseline_version"] if comp else None,
                "ab_href": links.ab(comp["id"]) if comp else None,
                "floor": settings.floor_cell(run["dataset"], m, agg),
            })
        open_alerts = still_open(recent_alerts, run)
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


def still_open(alerts: list[dict[str, Any]], run: dict[str, Any]) -> list[dict[str, Any]]:
    """The alerts that still stand for a version's latest ``run``: those naming its retriever (and its version
    and gold set, or none) raised on the day of that run or later. An alert of an earlier day was about a run
    this one superseded (a failed run that a later one completed, yesterday's regression that today's run
    raises again if it still holds): the overview's alert log still lists it, its count of open alerts does not."""
    day = run["logical_date"]
    day = day.date() if isinstance(day, dt.datetime) else day
    return [a for a in alerts if a["retriever"] == run["retriever"] and a["version"] in (None, run["version"])
            and a["dataset"] in (None, run["dataset"]) and (day is None or _as_date(a["day"]) >= day)]


def _as_date(v: dt.datetime | dt.date | str) -> dt.date:
    if isinstance(v, dt.datetime):
        return v.date()
    return v if isinstance(v, dt.date) else dt.date.fromisoformat(str(v)[:10])


def _alert_row(a: dict[str, Any], links: Links) -> dict[str, Any]:
    return {
        "day": _day(a["day"]), "kind": a["kind"], "severity": a["severity"], "retriever": a["retriever"],
        "version": a["version"] or "–", "measure": a["measure"] or "–",
        "title": _alert_title(a), "message": a["message"],
        "delivery": delivery_text(a["delivery_status"], a["delivery_attempts"], a.get("notifiers") or {}),
        "attempts": a["delivery_attempts"],
        "ab_href": links.ab(a["ab_test_id"]) if a.get("ab_test_id") else None,
    }


def _alert_title(a: dict[str, Any]) -> str:
    """The alert's stored title (the headline its notifications carried); the message's first line for an alert
    stored without one. A re-sent alert's message opens with the cadence's note, not with what it is about."""
    payload = a.get("payload")
    title = payload.get("title") if isinstance(payload, dict) else None
    if isinstance(title, str) and title.strip():
        return title.strip()
    return (str(a["message"]).strip().splitlines() or [""])[0]


def ab_page(engine: Engine, links: Links, settings: DashboardSettings, ab_id: int) -> Page:
    detail = wh.dashboard_ab_detail(engine, ab_id)
    if detail is None:
        raise NotFound(f"no comparison {ab_id}")
    ab, base, cand = detail["ab"], detail["baseline_run"], detail["candidate_run"]
    queries = detail["queries"]
    deltas = [q["delta"] for q in queries if q["delta"] is not None]
    worst = sorted((q for q in queries if q["delta"] is not None), key=lambda q: (q["delta"], q["query_id"]))
    worst = [q for q in worst if q["delta"] < 0][: settings.worse_limit]
    # one interval per comparison: the family-adjusted interval the decision was read from (its bootstrap
    # interval of the delta stays in the warehouse and the JSON export)
    low, high = ab.get("interval_low"), ab.get("interval_high")
    level = _num(ab.get("interval_level")) or 0.95
    interval = (f"{fmt(low, '+')} to {fmt(high, '+')}" if low is not None and high is not None
                else "not computed")
    measure, dataset = ab["measure"], cand["dataset"]
    fp = detail["fingerprint"]
    counted = _units(fp["policies"])
    words = (
        f"On the {dataset} {counted['units']} (n = {ab['n']}{counted['n_of']}), {cand['retriever']} "
        f"{cand['version']} scored "
        f"{measure} {fmt(ab['candidate_mean'])} against {fmt(ab['baseline_mean'])} for the baseline "
        f"{base['version']}: a difference of {fmt(ab['delta'], '+')} ({numfmt.level(level)} decision interval "
        f"{interval}). "
        f"The {ab['test']} test gives p = {numfmt.p_value(ab['p_value'])}; the decision's adjusted p (the test its "
        f"interval inverts, corrected for the family) is {numfmt.p_value(ab['p_adjusted'])}; "
        f"the paired effect size d_z is {numfmt.effect(ab['d_z'])}. The candidate won on {ab['wins']} "
        f"{counted['decided']}, "
        f"tied on {ab['ties']} and lost on {ab['losses']}. Decision: {ab['decision']}."
    )
    numbers = [
        ("measure", measure), ("query set", dataset), ("n", ab["n"]),
        ("baseline", f"{base['version']} (run {base['run_id']}, {_day(base['logical_date'])})"),
        ("candidate", f"{cand['version']} (run {cand['run_id']}, {_day(cand['logical_date'])})"),
        ("baseline mean", fmt(ab["baseline_mean"])), ("candidate mean", fmt(ab["candidate_mean"])),
        ("delta", fmt(ab["delta"], "+")),
        (f"decision interval ({numfmt.level(level)})",
         f"[{fmt(low, '+')}, {fmt(high, '+')}]" if low is not None and high is not None else "not computed"),
        ("test", ab["test"]), ("p", numfmt.p_value(ab["p_value"])), ("p adjusted", numfmt.p_value(ab["p_adjusted"])),
        ("d_z", f"{numfmt.effect(ab['d_z'])} [{numfmt.effect(ab['d_z_ci_low'])}, {numfmt.effect(ab['d_z_ci_high'])}]"),
        ("wins / ties / losses", f"{ab['wins']} / {ab['ties']} / {ab['losses']}"),
        ("decision", ab["decision"]),
    ]
    for optional in ("severity", "criterion", "reason_code"):  # columns a newer schema may carry
        if ab.get(optional) is not None:
            numbers.append((optional, ab[optional]))
    judged = ab.get("judged_coverage")
    if judged:
        numbers.append((f"judged coverage ({judged['measure']})",
                        f"{fmt(judged['baseline'])} → {fmt(judged['candidate'])} ({fmt(judged['difference'], '+.3f')}; "
                        f"{judged['unjudged_documents']} unjudged documents in the candidate's top k)"))
    fingerprint = [("hash", fp["hash"]), ("gold-set / query-set version", fp["gold_set_version"]),
                   ("knowledge-base snapshot", fp["kb_snapshot_id"]), ("measures", ", ".join(fp["measures"])),
                   *((f"policy: {k}", _show(v)) for k, v in sorted(fp["policies"].items()))]
    return "ab.html", {
        "page": "ab", "ab": ab, "words": words, "numbers": numbers, "reasons": list(ab.get("reasons") or []),
        "policy": [(k, _show(v)) for k, v in sorted((ab.get("policy") or {}).items())],
        "fingerprint": fingerprint,
        "histogram": svg.histogram(
            deltas, x_label=f"per-{counted['unit']} delta of {measure} (candidate − baseline)",
            title=f"distribution of per-{counted['unit']} deltas ({len(deltas)} {counted['units']})"),
        "counted": counted,
        "wins": ab["wins"], "ties": ab["ties"], "losses": ab["losses"],
        "worst": [{"query_id": q["query_id"], "text": q["text"], "baseline": fmt(q["baseline"]),
                   "candidate": fmt(q["candidate"]), "delta": fmt(q["delta"], "+")} for q in worst],
        "worst_limit": settings.worst_limit,
        "trend_href": links.trend(cand["retriever"], measure, dataset),
        "report_href": links.report(cand["dag_id"], cand["dag_run_id"]),
        "retriever": cand["retriever"], "candidate": cand["version"], "baseline": base["version"],
        "segments": _segment_tables(ab.get("segments") or []),
        "conversations": conversation_view(fp["policies"], queries, base["version"], cand["version"], fmt),
    }


def _units(policies: dict[str, Any]) -> dict[str, str]:
    """What a comparison's numbers count: the queries of a gold set; on a conversation gold set (decided by
    conversation, ``conversation_unit``) the per-query values are turns, while n and wins, ties and losses
    count conversations."""
    if policies.get("conversation_unit"):
        return {"unit": "turn", "units": "turns", "decided": "conversations", "n_of": " conversations"}
    return {"unit": "query", "units": "queries", "decided": "queries", "n_of": ""}


def _segment_tables(rows: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """The comparison within each segment (``evalops.segments``), one table per facet with its family."""
    tables: dict[str, dict[str, Any]] = {}
    for r in rows:
        t = tables.setdefault(r["facet"], {"facet": r["facet"], "families": set(), "rows": []})
        t["families"].add(r.get("family") or "")
        t["rows"].append({
            "segment": r["segment"], "n": r["n"], "baseline": fmt(r.get("baseline_mean")),
            "candidate": fmt(r.get("candidate_mean")), "delta": fmt(r.get("delta"), "+.3f"),
            "p_adjusted": fmt(r.get("p_adjusted"), ".3g"), "decision": r.get("decision"),
            "judged": "–" if r.get("judged_baseline") is None else
            f"{fmt(r['judged_baseline'])} → {fmt(r['judged_candidate'])}",
        })
    return [{**t, "families": "; ".join(sorted(t["families"]))} for t in tables.values()]


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

    options["delivery_status"] = list(ALERT_STATUSES)
    return "alerts.html", {"page": "alerts", "rows": rows, "filters": chosen, "options": options,
                           "filter_names": ALERT_FILTERS}


def _options(rows: Sequence[dict[str, Any]], columns: Sequence[str]) -> dict[str, list[str]]:
    return {c: sorted({str(r[c]) for r in rows if r.get(c) is not None}) for c in columns}


def datadocs_page(engine: Engine, links: Links, settings: DashboardSettings) -> Page:
    days: dict[str, list[dict[str, Any]]] = {}
    for v in list_validations(settings.data_docs):
        days.setdefault(_day(v["when"]), []).append({
            **v, "when": _when(v["when"]), "href": links.datadocs_file(v["path"])})
    return "datadocs.html", {"page": "datadocs", "days": list(days.items()), "folder": str(settings.data_docs or "")}
