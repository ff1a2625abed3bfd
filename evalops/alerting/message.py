"""Plain-text alert bodies. One format serves the task log, the chat webhook and the e-mail.

Numbers are printed by :mod:`evalops.util.numfmt` (the one policy of every medium), ``n/a`` when undefined.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from evalops.util import numfmt
from evalops.util.safetext import plain

__all__ = ["regression_message", "worst_query_rows", "format_p", "slack_text", "QUERY_TEXT_LIMIT", "MESSAGE_LIMIT"]

QUERY_TEXT_LIMIT = 200  # characters of one query's text in an alert
MESSAGE_LIMIT = 3500  # characters of a whole message (Slack cuts a text block near 4,000)


def slack_text(text: str, limit: int = MESSAGE_LIMIT) -> str:
    """``text`` safe for Slack's mrkdwn: control and bidi characters dropped, cut at ``limit`` with a
    marker, then ``&``, ``<`` and ``>`` escaped as Slack requires, so no ``<!channel>``, ``<@user>`` or
    ``<http://...|label>`` can be formed by untrusted text."""
    text = plain(text, limit, keep_newlines=True)
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


NA = "n/a"


def format_p(p: Any) -> str:
    """:func:`evalops.util.numfmt.p_value`, ``n/a`` when undefined."""
    return numfmt.p_value(p, NA)


def _f(value: Any, digits: int = numfmt.DECIMALS, signed: bool = False) -> str:
    return numfmt.number(value, digits, signed, NA)


def worst_query_rows(
    worst: Sequence[Any],
    query_text: Mapping[str, str],
    scrub: Callable[[str], str],
    limit: int,
) -> list[dict[str, Any]]:
    """Normalise a comparison's worst queries to dicts with scrubbed text.

    Accepts rows as mappings (``query_id``, ``baseline``, ``candidate``) or as ``(query_id, baseline,
    candidate)`` tuples. ``delta`` is candidate minus baseline.
    """
    rows: list[dict[str, Any]] = []
    for item in list(worst)[:limit]:
        if isinstance(item, Mapping):
            qid = str(item.get("query_id"))
            base = item.get("baseline")
            cand = item.get("candidate")
        else:
            qid, base, cand = str(item[0]), item[1], item[2]
        base = None if base is None else float(base)
        cand = None if cand is None else float(cand)
        delta = None if base is None or cand is None else cand - base
        text = query_text.get(qid)
        rows.append(
            {
                "query_id": qid,
                "baseline": base,
                "candidate": cand,
                "delta": delta,
                "text": plain(scrub(text), QUERY_TEXT_LIMIT) if text is not None else None,
            }
        )
    return rows


_CRITERIA = {
    "material": "the whole interval lies below -margin",
    "significant": "significant drop, size uncertain (the interval is below 0 but reaches past -margin)",
    "material_estimate": "material but not yet significant (the estimate is past -margin; alert_on: either)",
    "query_drops": "significantly many queries lost more than query_drop",
    "broken_queries": "significantly more queries lost query_drop or more than gained that much (exact sign test)",
}


def _rule_lines(n: Mapping[str, Any]) -> list[str]:
    """The rule's reading: severity, the criterion that fired, the decision interval, margin and family."""
    if n.get("severity") is None and n.get("interval_low") is None:
        return []
    level = n.get("interval_level")
    family = n.get("family_size")
    criterion = n.get("criterion")
    # an inconclusive comparison that alerts (unjudged, partial_run) has no severity of its own: its decision
    # and reason code say what it is
    head = (f"severity: {n['severity']}   criterion: {criterion or 'n/a'}"
            + (f" ({_CRITERIA[criterion]})" if criterion in _CRITERIA else "")
            if n.get("severity") else
            f"decision: {n.get('decision') or 'n/a'} ({n.get('reason_code') or 'no reason code'})")
    return [
        head,
        f"decision interval: {_f(n.get('interval_low'), signed=True)} .. {_f(n.get('interval_high'), signed=True)}"
        f" at {numfmt.level(level, NA)}   margin: {numfmt.margin(n.get('margin'), NA)}   family size: {family or NA}",
    ]


def _judged_lines(n: Mapping[str, Any], policy: Mapping[str, Any] | None = None) -> list[str]:
    """Judged coverage of both sides at the measure's cutoff (``evalops.judged.holes``), when the comparison has it;
    with the delta under the other bound, whether the two bounds agree, and when they do not, why the judged
    delta decided (the coverage fell by no more than ``max_judged_coverage_drop``)."""
    j = n.get("judged_coverage")
    if not j:
        return []
    line = (f"judged coverage ({j['measure']}): baseline {_f(j['baseline'], 3)} -> candidate {_f(j['candidate'], 3)} "
            f"({_f(j['difference'], 3, signed=True)}); {j['unjudged_documents']} unjudged documents in the "
            "top k of either version")
    bounds = numfmt.bounds(j, lambda x: _f(x, signed=True))
    if bounds is None:
        return [line]
    line += f"; delta {_f(n['delta'], signed=True)} as judged, {bounds}"
    limit = (policy or {}).get("max_judged_coverage_drop")
    drop = -j["difference"] if j.get("difference") is not None else None
    if drop is not None and limit is not None and drop <= limit:
        return [line + f" (the judged coverage fell by {_f(drop, 3)}, within max_judged_coverage_drop "
                       f"{numfmt.margin(limit)}, so the judged delta decides)"]
    return [line]


def regression_message(
    *,
    title: str,
    context: Any,
    measure: str,
    numbers: Mapping[str, Any],
    reasons: Sequence[str],
    policy: Mapping[str, Any],
    worst: Sequence[Mapping[str, Any]],
) -> str:
    n = numbers
    lines = [
        title,
        f"retriever: {context.retriever}   version: {context.version}   baseline version: "
        f"{context.baseline_version or 'n/a'}   query set: {context.query_set}",
        f"{measure}: {_f(n['baseline_mean'])} -> {_f(n['candidate_mean'])}   delta {_f(n['delta'], signed=True)}"
        # one interval per comparison: the decision interval (in the rule's lines) when the rule read one
        + ("" if n.get("interval_low") is not None else
           f" (95% CI {_f(n.get('delta_ci_low'), signed=True)} .. {_f(n.get('delta_ci_high'), signed=True)})"),
        *_rule_lines(n),
        *_judged_lines(n, policy),
        f"p (reported test) = {format_p(n['p_value'])}   adjusted p (decision) = {format_p(n['p_adjusted'])}   "
        f"d_z = {numfmt.effect(n['effect_size_dz'], NA)}   n = {n['n']}   "
        f"wins/ties/losses = {n['wins']}/{n['ties']}/{n['losses']}",
    ]
    if policy:
        lines.append("policy: " + ", ".join(f"{k}={v}" for k, v in policy.items()))
    if reasons:
        lines.append("why: " + "; ".join(reasons))
    if worst:
        lines.append("worst queries (baseline -> candidate):")
        for row in worst:
            text = f'  "{row["text"]}"' if row.get("text") else ""
            lines.append(f"  {row['query_id']}: {_f(row['baseline'])} -> {_f(row['candidate'])}{text}")
    lines.append(f"fingerprint: {context.fingerprint}")
    lines.append(f"report: {context.report_location or 'not written'}")
    return "\n".join(lines)
