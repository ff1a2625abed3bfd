"""Sources of the retrieved contexts and spread per segment through the pipeline: the shares equal a direct
count over the run files and the corpus, a version that takes its top 5 from one source alerts (naming the
source, escaped in every medium), the warehouse keeps the shares, and the spread equals numpy."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import numpy as np
import pytest

from tests.dashboard.sources_builder import HOSTILE

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def sourced_run(tmp_path_factory, repo_root):
    """Day 1 scores both versions and promotes 1.0; day 2 compares 2.0, which fills its top 5 with
    error-code chunks (relabelled with a hostile source name in a copy of the sample corpus)."""
    from tests.dashboard.sources_builder import build_sourced_project

    built = build_sourced_project(tmp_path_factory.mktemp("sources"), repo_root)
    return tuple(built[k] for k in ("cfg", "day2", "result", "rows", "baseline", "candidate", "gold"))


def _direct_count(ranked, rows, gold, k=5):
    """Shares by hand: the top k of every judged query, each document's source from the corpus rows."""
    label = {r["_id"]: r["metadata"]["source"] for r in rows}
    judged_queries = set(gold.judgments["query_id"])
    counts = Counter(label[d] for q, docs in ranked.items() if q in judged_queries for d in docs[:k])
    total = sum(counts.values())
    return {s: c / total for s, c in counts.items()}


def _specs(result):
    from evalops.pipeline.specs import VersionSpec

    return {(s.version): s for s in (VersionSpec.from_xcom(v) for v in result["versions"])}


def test_source_shares_equal_a_direct_count_and_the_warehouse_keeps_them(sourced_run):
    from evalops.pipeline.sources import read_sources
    from evalops.pipeline.store import engine_for
    from evalops.warehouse import load_source_shares, source_share_history

    cfg, day2, result, rows, baseline, candidate, gold = sourced_run
    spec = _specs(result)["2.0"]
    record = read_sources(cfg, day2, spec.run_id)
    got = {s["source"]: s["share"] for s in record["shares"]}
    assert got == pytest.approx(_direct_count(candidate, rows, gold))
    assert got == {HOSTILE: 1.0}
    base = {s["source"]: s["share"] for s in record["baseline"]}
    assert base == pytest.approx(_direct_count(baseline, rows, gold))
    # precision: the candidate's error-code documents judged relevant among those judged, by hand
    grades = {(q, d): g for q, d, g in gold.judgments[["query_id", "doc_id", "grade"]].itertuples(index=False)}
    top = [(q, d) for q, docs in candidate.items() for d in docs[:5] if (q, d) in grades]
    [share] = record["shares"]
    assert share["judged"] == len(top) and share["relevant"] == sum(grades[p] >= 1 for p in top)
    stored = load_source_shares(engine_for(cfg), spec.run_id)
    assert {r["source"]: r["share"] for r in stored if r["share"]} == got
    assert {r["source"]: r["baseline_share"] for r in stored} == pytest.approx(base)
    assert all(r["k"] == 5 and r["field"] == "source" and r["bound"] == 0.3 for r in stored)
    history = source_share_history(engine_for(cfg), retriever="s")
    assert {(h["version"], h["logical_date"].date().isoformat()) for h in history} >= {
        ("2.0", "2024-06-02"), ("1.0", "2024-06-01")}


def test_a_version_that_takes_its_top_5_from_one_source_alerts_naming_it_escaped(sourced_run):
    from evalops.alerting.message import slack_text
    from evalops.pipeline.store import engine_for
    from evalops.warehouse import list_alerts

    cfg, _day2, result, *_ = sourced_run
    raised = [a for a in result["alerts"] if a["kind"] == "source_share"]
    assert raised and all("s 2.0" in a["title"] for a in raised)
    assert any(HOSTILE in a["title"] for a in raised)  # the title names the source (plain text)
    stored = [a for a in list_alerts(engine_for(cfg), kind="source_share").itertuples(index=False)]
    assert {a.payload["source"] for a in stored} >= {HOSTILE}
    hostile = next(a for a in stored if a.payload["source"] == HOSTILE)
    assert hostile.payload["candidate_share"] == 1.0 and hostile.payload["shift"] > 0.3
    text = slack_text(hostile.message)
    assert "<script>" not in text and "<!channel>" not in text and "&lt;script&gt;" in text
    # the 1.0 baseline on day 1 and the baseline version itself raise nothing
    assert not [a for a in stored if a.version == "1.0"]


def test_report_shows_sources_and_spread_escaped(sourced_run):
    _cfg, _day2, result, *_ = sourced_run
    folder = Path(result["report"]).parent
    md = (folder / "report.md").read_text(encoding="utf-8")
    html = (folder / "report.html").read_text(encoding="utf-8")
    assert "## Sources of the retrieved contexts" in md and "## Spread per segment" in md
    assert "policy-handbook" in md and "beyond the bound" in md
    assert "<script>" not in md and "&lt;script>window.__pwned=1&lt;/script>err\\|\\*\\[x\\]" in md  # a cell
    assert "<script>" not in html and "&lt;script&gt;window.__pwned=1&lt;/script&gt;err|*[x]" in html
    assert "Sources of the retrieved contexts" in html and "Spread per segment" in html
    assert "relevant-document length" in md and "75th percentile" in md  # the long-document rule, recorded


def test_spread_per_segment_equals_numpy_on_the_per_query_values(sourced_run):
    from evalops.pipeline.queries import query_attributes
    from evalops.pipeline.store import engine_for
    from evalops.warehouse import load_scores, load_segment_spreads

    cfg, _day2, result, *_ = sourced_run
    spec = _specs(result)["2.0"]
    engine = engine_for(cfg)
    spreads = load_segment_spreads(engine, spec.run_id)
    scores = load_scores(engine, spec.run_id, ["nDCG@10"])
    by_query = dict(zip(scores["query_id"], scores["value"], strict=False))
    attributes = query_attributes(cfg, spec.dataset)
    facets = {r["facet"] for r in spreads}
    assert {"type", "language", "length"} <= facets
    assert {r["segment"] for r in spreads if r["facet"] == "length"} == {"long", "other"}
    for row in (r for r in spreads if r["measure"] == "nDCG@10" and r["facet"] == "language"):
        values = np.array([v for q, v in by_query.items() if attributes[q]["language"] == row["segment"]
                           and not np.isnan(v)])
        assert row["n"] == len(values)
        assert row["mean"] == pytest.approx(values.mean())
        assert row["std"] == pytest.approx(values.std(ddof=1))
        assert row["var"] == pytest.approx(values.var(ddof=1))
        assert [row["p10"], row["median"], row["p90"]] == pytest.approx(np.quantile(values, [0.1, 0.5, 0.9]))
