"""The report's content as format-neutral sections of text and tables; the renderers only escape and lay out.

Keeping content here means the markdown and the HTML report can never disagree about what they say.
"""

from __future__ import annotations

from typing import Any

from evalops.reports.blocks import TONES, Bullet, Cell, Section, Table
from evalops.reports.breakdowns import sources_section, spread_section
from evalops.reports.model import ABResult, ReportData, VersionScores
from evalops.util import numfmt

__all__ = ["Bullet", "Cell", "Section", "Table", "decision_interval", "decision_text", "report_sections", "fmt_num",
           "fmt_p"]

fmt_num = numfmt.number  # the names this module exported before evalops.util.numfmt
fmt_p = numfmt.p_value


def _ci(lo: Any, hi: Any, signed: bool = False) -> str:
    if lo is None or hi is None:
        return ""
    return f" [{fmt_num(lo, signed=signed)}, {fmt_num(hi, signed=signed)}]"


def _measures(versions: list[VersionScores]) -> list[str]:
    seen: dict[str, None] = {}
    for v in versions:
        for m in v.aggregates:
            seen.setdefault(m, None)
    return list(seen)


def _version_table(versions: list[VersionScores]) -> Table:
    measures = _measures(versions)
    rows = []
    for v in versions:
        # the n the measures averaged over (no-answer queries may be excluded by policy), of the judged queries
        # (judged coverage counts every judged query, no-answer ones too: it does not say what the measures used)
        used = {a.get("n") for m, a in v.aggregates.items()
                if a and a.get("n") is not None and not m.startswith("Judged@")}
        n = "–" if v.n_queries is None else str(v.n_queries)
        if len(used) == 1 and v.n_queries is not None and min(used) < v.n_queries:
            n = f"{used.pop()} of {v.n_queries}"
        if v.n_failed:
            n += f" ({v.n_failed} failed, excluded)"
        if v.n_retries:
            n += f" ({v.n_retries} retries)"
        cells = [v.retriever, v.version, v.role, v.status, n]
        for m in measures:
            agg = v.aggregates.get(m)
            cells.append("–" if not agg else fmt_num(agg.get("mean")) + _ci(agg.get("ci_low"), agg.get("ci_high")))
        rows.append(cells)
    return Table(["retriever", "version", "role", "status", "queries"] + [f"{m} (95% CI)" for m in measures], rows)


def _segment_mean_tables(versions: list[VersionScores]) -> list[tuple[str, Table]]:
    """Each version's means per query type (then language, split), one table per facet, by segment."""
    out = []
    for facet in ("type", "language", "split", "length"):
        rows_of = [(v, [r for r in v.segments if r["facet"] == facet]) for v in versions]
        if not any(rows for _, rows in rows_of):
            continue
        measures = list(dict.fromkeys(r["measure"] for _, rows in rows_of for r in rows))
        segments = list(dict.fromkeys(r["segment"] for _, rows in rows_of for r in rows))
        table = []
        for v, rows in rows_of:
            by = {(r["segment"], r["measure"]): r for r in rows}
            for segment in segments:
                if not any((segment, m) in by for m in measures):
                    continue
                n = next((by[(segment, m)]["n"] for m in measures if (segment, m) in by), None)
                table.append([segment, v.retriever, v.version, "–" if n is None else str(n)]
                             + [fmt_num(by[(segment, m)]["mean"]) if (segment, m) in by else "–" for m in measures])
        out.append((f"Per {_FACET_TITLES.get(facet, facet)}",
                    Table([facet, "retriever", "version", "n"] + measures, table)))
    return out


def _ab_row(r: ABResult) -> list[Any]:
    c = r.comparison
    return [
        r.retriever,
        f"{r.baseline_version} → {r.candidate_version}",
        c.measure + ("" if c.higher_is_better else " (lower is better)"),
        str(c.n),
        fmt_num(c.baseline_mean),
        fmt_num(c.candidate_mean),
        fmt_num(c.delta, signed=True),
        fmt_p(c.p_value),
        fmt_p(c.p_adjusted),
        numfmt.effect(c.effect_size_dz),
        f"{c.wins}/{c.ties}/{c.losses}",
        _rule_interval(r),
        numfmt.margin(c.margin),
        "–" if c.family_size is None else f"{c.family_size}" + (f" ({r.family})" if r.family else ""),
        Cell(decision_text(c.decision, c.severity, c.criterion, c.reason_code),
             c.decision if c.decision in TONES else None),
        _judged(c.judged_coverage),
    ]


def _ab_table(results: list[ABResult]) -> Table:
    rows = [_ab_row(r) for r in results]
    # one interval per comparison: the decision interval (a bootstrap one when the policy's interval is
    # bootstrap); the comparison's separate bootstrap interval of the delta stays in the warehouse and JSON
    header = ["retriever", "baseline → candidate", "measure", "n", "baseline", "candidate", "delta",
              "p (reported test)", "adjusted p (decision)", "d_z", "W/T/L", "decision interval", "margin", "family", "decision",
              "judged coverage"]
    # on a page at 1280 px: the decision and what it read (delta, interval, adjusted p) right after the
    # measure, then the means and n; the test's own p, d_z, W/T/L, margin, family and judged coverage go
    # into the details line under each row (markdown keeps the columns above in their places)
    return Table(header, rows, shown=(0, 1, 2, 14, 6, 11, 8, 4, 5, 3))


def _judged(j: dict[str, Any] | None) -> str:
    """Judged@k of both sides at the measure's cutoff, their difference and the unjudged documents."""
    if not j:
        return "–"
    bounds = numfmt.bounds(j, lambda x: fmt_num(x, 4, signed=True))
    return (f"{j['measure']} {fmt_num(j['baseline'], 3)} → {fmt_num(j['candidate'], 3)} "
            f"({fmt_num(j['difference'], 3, signed=True)}; {j['unjudged_documents']} unjudged"
            + ("" if bounds is None else f"; {bounds}") + ")")


def _floors_section(floors: list[dict[str, Any]]) -> Section | None:
    """Every version's absolute floors (evalops.floors): the value checked, the floor and whether it holds."""
    if not floors:
        return None
    section = Section("Absolute floors")
    breached = [f for f in floors if f["breached"]]
    section.paragraphs.append(
        "A floor holds with or without a baseline: the value checked (the mean, or the lower bound of its 95% "
        "interval, per gold set's floor_on) must be at or above it. "
        + (f"{len(breached)} breached." if breached else "Every floor holds."))
    rows = [[f"{f['retriever']} {f['version']}", f["dataset"], f["measure"], f["on"], fmt_num(f["value"], 4),
             fmt_num(f["floor"], 4), f"BREACHED ({f['severity']})" if f["breached"] else "holds"] for f in floors]
    section.tables.append(("", Table(["version", "gold set", "measure", "checked on", "value", "floor", "result"],
                                     rows)))
    return section


_FACET_TITLES = {"type": "query type", "language": "language", "split": "split (dev / test)",
                 "segment": "log segment", "length": "relevant-document length (long documents)"}


def _segments_section(results: list[ABResult]) -> Section | None:
    """The comparisons within each segment, one table per facet and query set; each names its family."""
    by_facet: dict[tuple[str, str], list[tuple[ABResult, dict[str, Any]]]] = {}
    for r in results:
        for row in r.segments:
            by_facet.setdefault((r.query_set, row["facet"]), []).append((r, row))
    if not by_facet:
        return None
    section = Section("Results per segment")
    section.paragraphs.append(
        "Each comparison read within each query type, language, split and log segment. Descriptive: these "
        "never alert. The comparisons of one facet for one candidate form one family, corrected together "
        "(named under each table); judged coverage (Judged@k at the measure's cutoff) is shown beside each."
    )
    for (query_set, facet), pairs in sorted(by_facet.items(), key=lambda kv: (kv[0][0] != "gold", kv[0])):
        rows = [[r.retriever, f"{r.baseline_version} → {r.candidate_version}", row["measure"], row["segment"],
                 str(row["n"]), fmt_num(row["baseline_mean"]), fmt_num(row["candidate_mean"]),
                 fmt_num(row["delta"], signed=True) + _ci(row["delta_ci_low"], row["delta_ci_high"], signed=True),
                 fmt_p(row["p_adjusted"]), row["decision"] + (f" ({row['reason_code']})" if row.get("reason_code") else ""),
                 "–" if row.get("judged_baseline") is None else
                 f"{fmt_num(row['judged_baseline'], 3)} → {fmt_num(row['judged_candidate'], 3)}"]
                for r, row in pairs]
        families = sorted({row["family"] for _, row in pairs})
        section.tables.append((
            f"Per {_FACET_TITLES.get(facet, facet)} ({query_set}); families: " + "; ".join(families),
            Table(["retriever", "baseline → candidate", "measure", facet, "n", "baseline", "candidate",
                   "delta (95% CI)", "adjusted p (decision)", "decision", "judged coverage"], rows)))
    return section


def _holes_section(holes: dict[str, Any], limit: int = 10) -> Section | None:
    """The unjudged documents of the compared versions sent to the annotation queue, highest priority first."""
    sets = holes.get("query_sets") or {}
    if not sets:
        return None
    section = Section("Holes in the judgments")
    policy = holes.get("policy") or {}
    section.paragraphs.append(
        f"Unjudged documents in the top {policy.get('cutoff', '?')} of the compared versions count as "
        f"non-relevant. {holes.get('rows', 0)} are in the annotation queue (source hole; "
        f"{holes.get('added', 0)} new): {holes.get('queue', '')}. Priority: {policy.get('priority', '')}."
    )
    for dataset, retrievers in sorted(sets.items()):
        for retriever, entry in sorted(retrievers.items()):
            rows = [[str(h["query_id"]), str(h["doc_id"]), fmt_num(h["priority"], 3), ", ".join(h["versions"]),
                     "–" if h.get("proposed_grade") is None else str(h["proposed_grade"])]
                    for h in entry.get("top", [])[:limit]]
            judge = f"; proposed grades by {entry['judged_by']}" if entry.get("judged_by") else ""
            section.tables.append((f"{retriever} ({dataset}): {entry['holes']} holes{judge}",
                                   Table(["query", "document", "priority", "in versions", "proposed grade"], rows)))
    return section


def _not_compared(data: ReportData) -> list[str]:
    """Why versions have no A/B rows, one sentence per situation: a retriever without a baseline (the
    planner's words), candidates that failed (named, with their failed queries), candidates whose baseline
    failed in this run, and, when nothing else explains it, every deployed version being its baseline."""
    results = {(r.retriever, r.candidate_version, r.query_set) for r in data.ab_results}
    baselines = [v for v in data.versions if v.role.startswith("baseline")]
    failed, orphaned = [], []
    for v in data.versions:
        if v.role != "candidate" or (v.retriever, v.version, v.query_set) in results:
            continue
        if v.status == "failed":
            counts = (f"{v.n_failed} of {v.n_queries} {v.query_set} queries failed" if v.n_failed
                      else f"{v.query_set}: scoring failed")
            failed.append((f"{v.retriever} {v.version}", counts))
        elif any(b.status == "failed" and (b.retriever, b.query_set) == (v.retriever, v.query_set) for b in baselines):
            orphaned.append(f"{v.retriever} {v.version} ({v.query_set})")
    out = list(data.no_baseline)
    if len(failed) == 1:
        out.append(f"{failed[0][0]} was not compared because it failed ({failed[0][1]}).")
    elif failed:
        out.append("Not compared because they failed: " + "; ".join(f"{n} ({c})" for n, c in failed) + ".")
    if orphaned:
        out.append("Not compared because their baseline failed in this run: " + "; ".join(orphaned) + ".")
    if not data.ab_results and not out and not any(v.role in ("candidate", "deployed") for v in data.versions):
        out.append("No candidate was compared (every deployed version is its retriever's baseline).")
    return out


def decision_interval(low: Any, high: Any, level: Any = None, missing: str = numfmt.DASH) -> str:
    """The family-adjusted interval a decision was read from, with its level (``-0.0431 .. -0.0102 at
    98.33%``): the one interval a comparison shows in reports, alerts and the CLI."""
    if numfmt.defined(low) is None or numfmt.defined(high) is None:
        return missing
    at = "" if numfmt.defined(level) is None else f" at {numfmt.level(level)}"
    return f"{fmt_num(low, signed=True)} .. {fmt_num(high, signed=True)}{at}"


def decision_text(decision: str, *qualifiers: str | None) -> str:
    """A decision as tables print it: a regression in capitals, then its severity, criterion and reason
    code in parentheses (``REGRESSION (critical) (margin)``, ``inconclusive (underpowered)``)."""
    return (decision.upper() if decision == "regression" else decision) + "".join(f" ({x})" for x in qualifiers if x)


def _rule_interval(r: ABResult) -> str:
    c = r.comparison
    return decision_interval(c.interval_low, c.interval_high, c.interval_level)


def _worst_tables(results: list[ABResult], limit: int) -> list[tuple[str, Table]]:
    """Worst queries for each candidate's first measure (the primary one) on each query set, and for every
    other gold-set regression."""
    shown: list[tuple[str, Table]] = []
    firsts: set[tuple[str, str, str]] = set()
    for r in results:
        key = (r.retriever, r.candidate_version, r.query_set)
        primary = key not in firsts
        firsts.add(key)
        decision = r.comparison.decision
        if not r.worst_queries or not (primary or (decision == "regression" and r.query_set == "gold")):
            continue
        rows = [
            [str(w.get("query_id")), fmt_num(w.get("baseline")), fmt_num(w.get("candidate")),
             fmt_num(w.get("delta"), signed=True), str(w.get("text") or "")]
            for w in r.worst_queries[:limit]
        ]
        caption = (
            f"{r.retriever} {r.candidate_version} vs {r.baseline_version} on {r.comparison.measure}, "
            f"{r.query_set} queries ({decision})"
        )
        shown.append((caption, Table(["query", "baseline", "candidate", "delta", "text"], rows)))
    return shown


def report_sections(data: ReportData, *, worst_limit: int = 5) -> list[Section]:
    """The report's sections in reading order: what this run could not do, the summary, what changed, the
    fingerprint and policies, the measures, the A/B results, then each section that has something to say
    (floors, worst queries, segments, sources, spread, judgment holes, notes)."""
    gold = [v for v in data.versions if v.query_set == "gold"]
    sections = (
        _failed_steps_section(data.failed_steps),  # before anything else: what this run could not do
        _summary_section(data),
        _changes_section(data),
        _fingerprint_section(data),
        _measures_section(gold),
        _production_section([v for v in data.versions if v.query_set != "gold"]),
        _ab_section(data),
        _floors_section(data.floors),
        _worst_section(data.ab_results, worst_limit),
        _segments_section(data.ab_results),
        # sources of the retrieved contexts and spread per segment
        sources_section(data.sources),
        spread_section(gold),
        _holes_section(data.holes),
        _notes_section(data.notes),
    )
    return [section for section in sections if section is not None]


def _failed_steps_section(failed_steps: list[str]) -> Section | None:
    """The steps this run could not do, one alert each; none when every step ran."""
    if not failed_steps:
        return None
    failed = Section("Failed steps")
    failed.bullets += [Bullet(f"FAILED: {line}", "alert") for line in failed_steps]
    return failed


def _summary_section(data: ReportData) -> Section:
    """The run, its fingerprint, its alerts (delivered, stored or suppressed) and its warnings."""
    summary = Section("Summary")
    summary.paragraphs.append(
        f"Run `{data.run_key}` for {data.day}, generated {data.generated_at}. Fingerprint `{data.fingerprint}`."
    )
    if data.alerts:
        summary.bullets += [
            Bullet(f"ALERT ({a.get('kind')}): {a.get('title')}"
                   + (f" — not sent again: {a['suppressed']}" if a.get("suppressed")
                      else "" if a.get("delivered", True) else " — stored, not delivered"), "alert")
            for a in data.alerts
        ]
    else:
        summary.bullets.append(Bullet("No alerts."))
    summary.bullets += [Bullet(f"WARNING: {w}", "warning") for w in data.warnings]
    return summary


def _changes_section(data: ReportData) -> Section:
    """What changed since the baseline (stale baselines first), or why nothing did."""
    changed = Section("What changed since the baseline")
    changed.bullets += [Bullet(line) for line in data.stale_baselines + data.changes]
    if not changed.bullets:
        has_baseline = any(v.role.startswith("baseline") for v in data.versions)
        changed.bullets.append(Bullet("Nothing: same fingerprint, same versions as the stored baselines."
                                      if has_baseline or not data.no_baseline
                                      else "Nothing to compare with (see the A/B results)."))
    return changed


def _fingerprint_section(data: ReportData) -> Section:
    """The fingerprint's components and every policy the run applied, one table each."""
    fp = Section("Fingerprint and policies")
    components = [[k, _plain(v)] for k, v in data.fingerprint_components.items()]
    fp.tables.append(("Fingerprint components", Table(["component", "value"], components)))
    fp.tables.append(("Policies", Table(["policy", "value"], [[k, _plain(v)] for k, v in data.policies.items()])))
    return fp


def _measures_section(gold: list[VersionScores]) -> Section:
    """The measures of each version scored on the gold set, their chart and their means per segment."""
    measures = Section("Measures per version (gold set)")
    if gold:
        measures.tables.append(("", _version_table(gold)))
        measures.charts.append("means")
        measures.tables += _segment_mean_tables(gold)
    else:
        measures.paragraphs.append("No version was scored on the gold set.")
    return measures


def _production_section(prod: list[VersionScores]) -> Section | None:
    """The versions scored on sampled production queries, apart from the gold set; none without any."""
    if not prod:
        return None
    production = Section("Production queries (implicit-feedback labels)")
    production.paragraphs.append(
        "Sampled production queries judged by clicks and citations (weak labels). Kept apart from the "
        "gold set: these numbers are not comparable with the table above."
    )
    production.tables.append(("", _version_table(prod)))
    return production


def _ab_section(data: ReportData) -> Section:
    """The A/B results: coverage first, the gold and production tables, what was not compared, and the
    rule's conclusion in words."""
    ab = Section("A/B results against the baseline")
    gold_ab = [r for r in data.ab_results if r.query_set == "gold"]
    prod_ab = [r for r in data.ab_results if r.query_set != "gold"]
    # before any number: how many judged queries each side answered, and how the rest were treated
    seen: set[str] = set()
    for r in data.ab_results:
        line = f"{r.retriever} {r.candidate_version} ({r.query_set}): {r.coverage}" if r.coverage else None
        if line and line not in seen:
            seen.add(line)
            ab.paragraphs.append(line)
    if gold_ab:
        ab.tables.append(("Gold set", _ab_table(gold_ab)))
        ab.charts.append("deltas")
    if prod_ab:
        ab.tables.append(("Production queries (implicit-feedback labels)", _ab_table(prod_ab)))
    ab.paragraphs += _not_compared(data)
    if data.ab_results:
        # the rule's conclusion in words, one line per comparison (the reason the decision was taken)
        ab.bullets.extend(
            Bullet(f"{r.retriever} {r.candidate_version} {c.measure} ({r.query_set}): {c.decision}: {c.reasons[-1]}")
            for r in data.ab_results if (c := r.comparison).reasons
        )
    return ab


def _worst_section(results: list[ABResult], limit: int) -> Section | None:
    """The worst queries of each comparison; none when no comparison has any."""
    worst = _worst_tables(results, limit)
    return Section("Worst queries", tables=worst) if worst else None


def _notes_section(notes: list[str]) -> Section | None:
    """The run's notes, one bullet each; none without any."""
    return Section("Notes", bullets=[Bullet(n) for n in notes]) if notes else None


def _plain(value: Any) -> str:
    if isinstance(value, (list, tuple)):
        return ", ".join(str(v) for v in value)
    if isinstance(value, dict):
        return ", ".join(f"{k}={v}" for k, v in value.items())
    return str(value)
