"""The conversation report: markdown and a self-contained HTML page (no script, one inline SVG per measure).

Sections: the recorded policy (unit = conversation), the decisions (n = conversations), the drift by turn
depth (a table and a line chart per measure: mean per-turn value at each depth, one line per version) and
the per-conversation means. Every text that came from a file (version names, conversation ids) is escaped
for its medium: :func:`evalops.util.safetext.markdown_inline` in markdown, :func:`html.escape` in HTML.
"""

from __future__ import annotations

import html
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from evalops.conversations.evaluate import ConversationResults
from evalops.conversations.stats import DepthPoint
from evalops.util import numfmt
from evalops.util.safetext import markdown_inline

__all__ = ["depth_chart", "depth_chart_svg", "render_html", "render_markdown", "write_report"]

_COLOURS = ("#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#8c564b")


def _decision(c: Any) -> str:
    extra = ", ".join(x for x in (c.severity, c.criterion, c.reason_code) if x)
    return c.decision + (f" ({extra})" if extra else "") + (" ALERT" if c.alert else "")


def _rows(results: ConversationResults) -> dict[str, list[list[str]]]:
    """The report's tables as rows of plain (unescaped) text."""
    tables: dict[str, list[list[str]]] = {"decisions": [], "depth": [], "conversations": []}
    for c in results.comparisons:
        tables["decisions"].append([c.measure, c.candidate_name, str(c.n), numfmt.number(c.baseline_mean),
                                    numfmt.number(c.candidate_mean), numfmt.number(c.delta, signed=True),
                                    (f"{numfmt.number(c.interval_low, signed=True)} .. "
                                     f"{numfmt.number(c.interval_high, signed=True)}"),
                                    f"{c.wins}/{c.ties}/{c.losses}", _decision(c)])
    for m in results.measures:
        depths = sorted({p.depth for v in results.versions for p in results.scores[(v, m)].depth})
        for v in results.versions:
            at = {p.depth: p for p in results.scores[(v, m)].depth}
            tables["depth"].append([m, v, *(f"{numfmt.number(at[d].mean)} ({at[d].turns})" if d in at else numfmt.DASH
                                            for d in depths)])
        first = results.scores[(results.baseline, m)]
        for i, conv in enumerate(first.conversation_ids):
            tables["conversations"].append([m, conv, str(first.conversation_turns[i]), *(
                numfmt.number(dict(zip(results.scores[(v, m)].conversation_ids,
                                       results.scores[(v, m)].conversation_means, strict=False)).get(conv))
                for v in results.versions)])
    return tables


def _max_depth(results: ConversationResults) -> int:
    return max((p.depth for s in results.scores.values() for p in s.depth), default=1)


def _headers(results: ConversationResults) -> dict[str, list[str]]:
    return {
        "decisions": ["measure", "candidate", "n (conversations)", "baseline", "candidate mean", "delta",
                      "decision interval", "wins/ties/losses", "decision"],
        "depth": ["measure", "version", *(f"turn {d}" for d in range(1, _max_depth(results) + 1))],
        "conversations": ["measure", "conversation", "judged turns", *results.versions],
    }


def _policy_lines(results: ConversationResults) -> list[str]:
    p = results.policy.to_dict()
    queries = ", ".join(f"{k}: {v}" for k, v in results.policy.queries)
    d = results.describe
    return [(f"Statistical unit: **{p['unit']}** (each conversation's judged turns averaged, {p['aggregate']}); "
             f"unjudged turns: {p['unjudged_turns']}; history: {p['history']}."),
            f"Query policy per version: {queries}.",
            (f"{d.get('conversations')} conversations, {d.get('turns')} turns ({d.get('judged_turns')} judged), "
             f"deepest turn {d.get('max_depth')}; gold set {results.gold_version}.")]


def render_markdown(results: ConversationResults) -> str:
    """The report as markdown (text from files escaped)."""
    tables, headers = _rows(results), _headers(results)
    titles = {"decisions": "Decisions by conversation (baseline " + markdown_inline(results.baseline) + ")",
              "depth": "Drift by turn depth (mean per-turn value, turns in brackets)",
              "conversations": "Per-conversation means"}
    out = ["# Conversations", "", *(_policy_lines(results)), ""]
    for key in ("decisions", "depth", "conversations"):
        out += [f"## {titles[key]}", "", "| " + " | ".join(headers[key]) + " |",
                "|" + "---|" * len(headers[key])]
        out += ["| " + " | ".join(markdown_inline(cell) for cell in row) + " |" for row in tables[key]]
        out.append("")
    return "\n".join(out)


def depth_chart_svg(results: ConversationResults, measure: str, width: int = 420, height: int = 220) -> str:
    """A line chart of the mean per-turn value by depth, one line per version (static SVG, escaped labels)."""
    return depth_chart([(v, results.scores[(v, measure)].depth) for v in results.versions],
                       f"{measure} by turn depth", width, height)


def depth_chart(series: Sequence[tuple[str, Sequence[DepthPoint]]], title: str, width: int = 420,
                height: int = 220) -> str:
    """A line chart of (name, mean by depth) series: one line each, turn depth on x (static SVG; every text
    escaped)."""
    left, right, top, bottom = 44, 120, 14, 30
    depth = max([2, *(p.depth for _, points in series for p in points)])
    hi = max([1e-9, *(p.mean for _, points in series for p in points)])

    def x(d: float) -> float:
        return left + (d - 1) / (depth - 1) * (width - left - right)

    def y(v: float) -> float:
        return top + (1 - v / hi) * (height - top - bottom)

    parts = [(f'<svg xmlns="http://www.w3.org/2000/svg" class="depth-chart" role="img" width="{width}" '
              f'height="{height}" viewBox="0 0 {width} {height}"><title>{html.escape(title)}</title>'),
             f'<line x1="{left}" y1="{y(0):.1f}" x2="{width - right}" y2="{y(0):.1f}" stroke="#888"/>',
             f'<line x1="{left}" y1="{top}" x2="{left}" y2="{y(0):.1f}" stroke="#888"/>',
             f'<text x="4" y="{top + 8}" font-size="10">{hi:.2f}</text>',
             f'<text x="4" y="{y(0):.1f}" font-size="10">0</text>']
    for d in range(1, depth + 1):
        parts.append(f'<text x="{x(d) - 14:.1f}" y="{height - 8}" font-size="10">turn {d}</text>')
    for i, (name, points) in enumerate(series):
        colour = _COLOURS[i % len(_COLOURS)]
        pts = [(x(p.depth), y(p.mean)) for p in points]
        parts.append(f'<polyline class="series" fill="none" stroke="{colour}" stroke-width="2" points="'
                     + " ".join(f"{a:.1f},{b:.1f}" for a, b in pts) + '"/>')
        parts += [f'<circle cx="{a:.1f}" cy="{b:.1f}" r="3" fill="{colour}"/>' for a, b in pts]
        parts.append(f'<text x="{width - right + 8}" y="{top + 14 * (i + 1)}" font-size="11" fill="{colour}">'
                     f'{html.escape(name)}</text>')
    parts.append("</svg>")
    return "".join(parts)


def render_html(results: ConversationResults) -> str:
    """The report as one HTML page: no script, no external resource (a strict Content-Security-Policy)."""
    tables, headers = _rows(results), _headers(results)
    def table(key: str) -> str:
        head = "".join(f"<th>{html.escape(h)}</th>" for h in headers[key])
        body = "".join("<tr>" + "".join(f"<td>{html.escape(c)}</td>" for c in row) + "</tr>" for row in tables[key])
        return f'<table id="{key}"><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>'
    policy = "".join(f"<p>{html.escape(line.replace('**', ''))}</p>" for line in _policy_lines(results))
    charts = "".join(f'<figure>{depth_chart_svg(results, m)}<figcaption>{html.escape(m)}: mean per-turn value by '
                     "turn depth</figcaption></figure>" for m in results.measures)
    return ("<!doctype html><html lang=\"en\"><head><meta charset=\"utf-8\">"
            "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src 'unsafe-inline'\">"
            "<title>evalops: conversations</title><style>body{font-family:sans-serif;margin:1.5em}"
            "table{border-collapse:collapse;margin:.5em 0 1.5em}td,th{border:1px solid #ccc;padding:2px 8px}"
            "figure{display:inline-block;margin:0 1em 1em 0}</style></head><body>"
            f"<h1>Conversations</h1><section id=\"policy\">{policy}</section>"
            f"<h2>Decisions by conversation (baseline {html.escape(results.baseline)})</h2>{table('decisions')}"
            f"<h2>Drift by turn depth</h2><div id=\"depth-charts\">{charts}</div>{table('depth')}"
            f"<h2>Per-conversation means</h2>{table('conversations')}</body></html>")


def write_report(results: ConversationResults, folder: str | Path) -> dict[str, Path]:
    """``conversations.md``, ``conversations.html`` and ``conversations.json`` in ``folder``."""
    import json

    f = Path(folder)
    f.mkdir(parents=True, exist_ok=True)
    paths = {"markdown": f / "conversations.md", "html": f / "conversations.html", "json": f / "conversations.json"}
    paths["markdown"].write_text(render_markdown(results), encoding="utf-8")
    paths["html"].write_text(render_html(results), encoding="utf-8")
    paths["json"].write_text(json.dumps(results.to_dict(), indent=1, allow_nan=False, default=str), encoding="utf-8")
    return paths
