"""The dashboard's "Sources and spread" page: each version's latest source shares of the top-k slots with
their precision and shift against the baseline (``evalops.sources``), the share history, and the mean with
its spread per segment, the long-document segment included (``evalops.spread``).

Source names are untrusted text from the knowledge base; the templates autoescape them like every value.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from evalops.dashboard.links import Links
from evalops.util import numfmt
from evalops.warehouse import dashboard as wh
from evalops.warehouse.breakdowns import (
    load_segment_spreads,
    load_source_shares,
    source_share_history,
)

if TYPE_CHECKING:  # pragma: no cover
    from sqlalchemy.engine import Engine

    from evalops.dashboard.render import DashboardSettings

__all__ = ["sources_page"]

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


def sources_page(engine: Engine, links: Links, settings: DashboardSettings) -> tuple[str, dict[str, Any]]:
    versions = []
    for run in wh.dashboard_latest_runs(engine):
        if run["status"] not in ("succeeded", "partial"):
            continue
        shares = load_source_shares(engine, run["run_id"])
        spreads = load_segment_spreads(engine, run["run_id"])
        if not shares and not spreads:
            continue
        policy = shares[0] if shares else None
        versions.append({
            "retriever": run["retriever"], "version": run["version"], "dataset": run["dataset"],
            "day": run["logical_date"].isoformat()[:10],
            "policy": None if policy is None else {"field": policy["field"], "k": policy["k"],
                                                   "bound": _points(policy["bound"]).lstrip("+")},
            "shares": [_share_row(r) for r in shares],
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
