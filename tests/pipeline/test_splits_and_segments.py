"""Tuning/test split and per-segment results through the pipeline."""

from __future__ import annotations

from pathlib import Path

import pytest

from evalops.goldset import GoldSet, load_gold_set

pytestmark = pytest.mark.slow


def _specs(result):
    """The typed version specs of a run's result (``run_local`` returns their JSON form)."""
    from evalops.pipeline.specs import VersionSpec

    return [VersionSpec.from_xcom(v) for v in result["versions"]]

def test_dev_queries_are_not_alerted_on_and_a_dev_only_gain_is_warned(repo_root, planted_project):
    from evalops.pipeline.deciding import load_decisions
    from evalops.pipeline.store import engine_for
    from evalops.warehouse import load_ab_tests

    pads = planted_project.pads
    gold = load_gold_set(repo_root / "include" / "goldset")
    queries = gold.queries.copy()
    judged = sorted(set(gold.judgments["query_id"]))
    dev = set(judged[::3])
    queries["split"] = ["dev" if q in dev else "test" for q in queries["query_id"]]
    j = gold.judgments.sort_values(["query_id", "grade", "doc_id"], ascending=[True, False, True])
    baseline, candidate = {}, {}
    for q, rows in j.groupby("query_id"):
        docs = rows["doc_id"].tolist()
        own = [p for p in pads if p not in docs][:5]
        good = docs + own
        baseline[q] = (own + docs) if q in dev else good  # the baseline is poor on the dev queries only
        candidate[q] = good
    cfg, day2, result = planted_project(GoldSet.from_frames(queries, gold.judgments, source="split"), baseline,
                                        candidate, ["nDCG@10", "RR@10"], name="tuned")

    records = [r.to_record() for r in load_decisions(engine_for(cfg), _specs(result)) if r.family == "gold"]
    [record] = records
    comp = record["comparison"]
    answerable = set(gold.judgments.loc[gold.judgments["grade"] > 0, "query_id"])
    assert comp["n"] == len(answerable - dev)  # only the test queries are compared for alerts
    assert comp["decision"] == "no_change" and not result["alerts"]

    # per segment: type and language families, the dev/test split shows the gain on dev
    segments = record["segments"]
    facets = {(r["facet"], r["segment"]) for r in segments if r["measure"] == "nDCG@10"}
    assert {("type", "semantic"), ("type", "keyword"), ("language", "en"), ("language", "zh"),
            ("split", "dev"), ("split", "test")} <= facets
    by = {(r["facet"], r["segment"], r["measure"]): r for r in segments}
    assert by[("split", "dev", "nDCG@10")]["delta"] > 0.1
    assert by[("split", "test", "nDCG@10")]["delta"] == 0.0
    types = [r for r in segments if r["facet"] == "type"]
    assert {r["family_size"] for r in types} == {2 * len(types)}  # the facet's segments x both measures
    assert all(r["family"].startswith("type segments of tuned@2.0") for r in types)
    stored = load_ab_tests(engine_for(cfg), candidate_run_id=record["candidate_run_id"])
    assert len(stored[stored["measure"] == "nDCG@10"].iloc[0]["segments"]) == len(
        [r for r in segments if r["measure"] == "nDCG@10"])

    report = (Path(result["report"]).parent / "report.md").read_text()
    assert "WARNING: tuned 2.0 (gold): its parameters differ from the baseline's and nDCG@10 improved" in report
    assert "Results per segment" in report and "Per query type (gold)" in report
    assert "Judged@10" in report
    # each version's means per query type, the baseline's too
    assert "| semantic | tuned | 1.0 |" in report and "| keyword | tuned | 2.0 |" in report
