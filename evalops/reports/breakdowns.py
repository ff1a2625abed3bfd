"""The report's sections on sources and spread: each version's source shares of the top-k slots with their
precision and shift (``evalops.sources``), and the spread of each measure per segment (``evalops.spread``).

Source names are untrusted text from the knowledge base: they only ever go into table cells, which every
renderer escapes (never into our own sentences, whose `code` spans a renderer keeps).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from evalops.reports.blocks import Cell, Section, Table
from evalops.reports.model import VersionScores
from evalops.util import numfmt

__all__ = ["sources_section", "spread_section"]

_FACETS = {"type": "query type", "language": "language", "split": "split", "segment": "log segment",
           "length": "relevant-document length"}


def _pct(value: Any) -> str:
    v = numfmt.defined(value)
    return numfmt.DASH if v is None else f"{100 * v:.1f}%"


def sources_section(sources: Sequence[Mapping[str, Any]]) -> Section | None:
    """One table of every version's sources, the baseline's share and the shift beside the candidate's."""
    if not sources:
        return None
    section = Section("Sources of the retrieved contexts")
    policy = sources[0]["policy"]
    section.paragraphs.append(
        f"Each source's share of the top-{int(policy['k'])} slots (pooled over the queries), the precision of its "
        "judged documents there, and the shift against the baseline's share under the same labels. "
        + ("No bound: shifts are reported, never alerted on." if policy.get("max_shift") is None else
           f"A shift beyond {100 * float(policy['max_shift']):.1f} points alerts (`source_share`)."))
    bounded = policy.get("max_shift") is not None
    rows = []
    weak = False
    for record in sources:
        shifts = {s["source"]: s for s in record.get("shifts") or []}
        names = sorted({s["source"] for s in record["shares"]} | set(shifts))
        shares = {s["source"]: s for s in record["shares"]}
        total = sum(int(s["slots"]) for s in record["shares"])  # every filled slot of the version
        # production samples are labelled by clicks and citations, which mark positives only: a precision
        # over them would read 1.0 whatever the version retrieved, so none is shown
        positives_only = record.get("dataset") == "production"
        weak = weak or positives_only
        for name in names:
            share = shares.get(name, {})
            shift = shifts.get(name)
            precision = None if positives_only else share.get("precision")
            row = [
                record["retriever"], record["version"], record.get("dataset", ""), name,
                f"{share.get('slots', 0)} of {total}", _pct(share.get("share", 0.0)),
                "–" if precision is None else f"{numfmt.number(precision)} ({share['relevant']}/{share['judged']})",
                "–" if shift is None else _pct(shift["baseline"]),
                "–" if shift is None else f"{100 * shift['shift']:+.1f} pt",
            ]
            if bounded:
                row.append(Cell("beyond the bound", "regression") if shift and shift["breached"]
                           else ("within" if shift else "–"))
            rows.append(row)
        for note in record.get("notes") or []:
            section.paragraphs.append(note)
    if weak:
        section.paragraphs.append("No precision on the production sample: its click and citation labels mark "
                                  "relevant documents only.")
    header = ["retriever", "version", "queries", "source", "slots", "share", "precision (relevant/judged)",
              "baseline share", "shift"] + (["bound"] if bounded else [])
    section.tables.append(("", Table(header, rows)))
    return section


def spread_section(versions: Sequence[VersionScores]) -> Section | None:
    """The mean beside the spread of each measure, per segment of each facet, for each version."""
    rows = []
    for v in versions:
        for r in v.segments:
            if "std" not in r:
                continue  # written before the spread was kept
            rows.append([_FACETS.get(r["facet"], r["facet"]), r["segment"], v.retriever, v.version, r["measure"],
                         str(r["n"]), numfmt.number(r.get("mean")), numfmt.number(r.get("std")),
                         numfmt.number(r.get("var")), numfmt.number(r.get("p10")), numfmt.number(r.get("median")),
                         numfmt.number(r.get("p90"))])
    if not rows:
        return None
    section = Section("Spread per segment")
    section.paragraphs.append(
        "How each segment's per-query values spread around the mean: standard deviation and variance (sample, "
        "ddof 1) and the 10th, 50th and 90th percentiles. The `long` length segment holds the queries whose "
        "relevant documents are long (the rule is under the policies).")
    section.tables.append(("", Table(["facet", "segment", "retriever", "version", "measure", "n", "mean", "sd",
                                      "variance", "p10", "median", "p90"], rows)))
    return section
