"""Context measures through the pipeline: scored from the snapshot's text, compared in their direction."""

from __future__ import annotations

from pathlib import Path

import pytest

from evalops.goldset import load_gold_set

pytestmark = pytest.mark.slow


def _specs(result):
    """The typed version specs of a run's result (``run_local`` returns their JSON form)."""
    from evalops.pipeline.specs import VersionSpec

    return [VersionSpec.from_xcom(v) for v in result["versions"]]

def test_context_measures_are_compared_with_their_direction(repo_root, planted_project):
    from evalops.context import context_values
    from evalops.pipeline.deciding import load_decisions
    from evalops.pipeline.judging import _documents
    from evalops.pipeline.store import engine_for
    from evalops.warehouse import RunKey, find_run, load_scores

    gold = load_gold_set(repo_root / "include" / "goldset")
    pads = planted_project.pads
    j = gold.judgments.sort_values(["query_id", "grade", "doc_id"], ascending=[True, False, True])
    baseline, candidate = {}, {}
    for q, rows in j.groupby("query_id"):
        docs = rows["doc_id"].tolist()
        baseline[q] = docs[:1]
        candidate[q] = docs[:1] + [p for p in pads if p not in docs][:9]  # the same first context, nine more
    cfg, day2, result = planted_project(gold, baseline, candidate, ["nDCG@10"],
                                        extra="context_measures: [Tokens@10, Redundancy@10, QueryCoverage@10]\n")
    decisions = load_decisions(engine_for(cfg), _specs(result))
    by = {r["comparison"]["measure"]: r for r in (d.to_record() for d in decisions)}
    tokens = by["Tokens@10"]
    assert tokens["family"] == "gold-descriptive" and not tokens["comparison"]["alert"]
    c = tokens["comparison"]
    assert c["higher_is_better"] is False and c["delta"] > 0  # more tokens: worse
    assert c["reasons"][0].startswith("lower is better")
    # token counts lie outside [-1, 1]: no betting interval, and too skewed for the t-interval on this small
    # gold set, so the robust rule does not decide (descriptive either way)
    assert (c["decision"], c["reason_code"]) == ("inconclusive", "skewed_small_sample")
    cov = by["QueryCoverage@10"]["comparison"]
    assert cov["higher_is_better"] is True and cov["delta"] >= 0 and cov["decision"] != "regression"
    assert c["judged_coverage"] is None  # texts, not judgments

    # the stored per-query values are context_values over the snapshot's texts of each top 10
    run = find_run(engine_for(cfg), RunKey(day2.dag_id, day2.run_id, "planted", "2.0", "gold"))
    stored = load_scores(engine_for(cfg), run.id, ["Tokens@10"])
    texts = _documents(cfg, next(s["snapshot_id"] for s in result["versions"]))
    queries = dict(zip(gold.queries["query_id"], gold.queries["text"]))
    expected = context_values(["Tokens@10"], {q: queries[q] for q in candidate}, candidate, texts)
    got = dict(zip(stored["query_id"], stored["value"]))
    assert got == pytest.approx(dict(zip(expected.query_ids.tolist(), expected.per_query["Tokens@10"].tolist())))
    report = (Path(result["report"]).parent / "report.md").read_text()
    assert "Tokens@10" in report and "lower is better" in report
