"""The conversation view of an A/B page: shown when the comparison was decided by conversation.

A comparison on a conversational gold set (its fingerprint's policies hold ``conversation_unit``,
:mod:`evalops.conversations.pipeline`) was decided on conversation means; its page adds, from the stored
per-turn values: each conversation's mean on both sides and its delta (worst first), and the drift by turn
depth (both sides' mean per-turn value at each depth, a table and a static SVG).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from evalops.conversations.model import parse_turn_id
from evalops.conversations.report import depth_chart
from evalops.conversations.stats import conversation_means, depth_profile

__all__ = ["conversation_view"]


def conversation_view(policies: Mapping[str, Any], queries: Sequence[Mapping[str, Any]], baseline: str,
                      candidate: str, fmt: Any) -> dict[str, Any] | None:
    """The section's rows and chart, or None when the comparison is not by conversation."""
    if not policies.get("conversation_unit"):
        return None
    from markupsafe import Markup

    rows = [q for q in queries if q.get("baseline") is not None and q.get("candidate") is not None
            and parse_turn_id(q["query_id"]) is not None]
    if not rows:
        return None
    ids = [str(q["query_id"]) for q in rows]
    conv_of = {q: parse_turn_id(q)[0] for q in ids}  # type: ignore[index]
    depth_of = {q: parse_turn_id(q)[1] for q in ids}  # type: ignore[index]
    b = [float(q["baseline"]) for q in rows]
    c = [float(q["candidate"]) for q in rows]
    convs, b_means, turns = conversation_means(ids, b, conv_of)
    _, c_means, _ = conversation_means(ids, c, conv_of)
    table = sorted(({"conversation": str(k), "turns": int(n), "baseline": bm, "candidate": cm, "delta": cm - bm}
                    for k, n, bm, cm in zip(convs.tolist(), turns.tolist(), b_means.tolist(), c_means.tolist(),
                                            strict=True)),
                   key=lambda r: (r["delta"], r["conversation"]))
    b_depth, c_depth = depth_profile(ids, b, depth_of), depth_profile(ids, c, depth_of)
    unit = policies["conversation_unit"]
    return {
        "unit": unit.get("unit", "conversation") if isinstance(unit, Mapping) else "conversation",
        "count": len(table), "turns": len(ids),
        "rows": [{**r, "baseline": fmt(r["baseline"]), "candidate": fmt(r["candidate"]), "delta": fmt(r["delta"], "+")}
                 for r in table],
        "depth": [{"depth": bp.depth, "turns": bp.turns, "baseline": fmt(bp.mean), "candidate": fmt(cp.mean),
                   "delta": fmt(cp.mean - bp.mean, "+")} for bp, cp in zip(b_depth, c_depth, strict=False)],
        "chart": Markup(depth_chart([(f"baseline {baseline}", b_depth), (f"candidate {candidate}", c_depth)],
                                    "mean per-turn value by turn depth", width=520)),
    }
