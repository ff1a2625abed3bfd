"""Judge labels end to end through run_local: two versions on the sample gold set and the production sample,
scored with judge labels from the fake OpenAI-compatible server, cached in the warehouse."""

from __future__ import annotations

import json

import pytest
import yaml

from evalops.judges.fakeserver import FakeChatServer
from tests.dags.conftest import INCLUDE, make_home
from tests.judges.conftest import judge_comparisons

pytestmark = pytest.mark.slow


def _deploy_candidate(tmp_path):
    overlay = tmp_path / "candidates.yaml"
    shipped = yaml.safe_load((INCLUDE / "retrievers.yaml").read_text())["retrievers"]
    truncated = next(e for e in shipped if e["version"] == "2.0-truncated")
    overlay.write_text(yaml.safe_dump({"retrievers": [{**truncated, "deployed": True}]}))
    return overlay


def test_two_versions_scored_with_judge_labels_cached_and_costed(tmp_path, monkeypatch):
    from evalops.config import load_config
    from evalops.pipeline import RunContext, promote, run_local
    from evalops.pipeline.store import engine_for
    from evalops.warehouse.judgments import count_judgments, load_judge_runs

    env = make_home(tmp_path / "home", log_start="2024-05-29", log_days=4)
    monkeypatch.setenv("FAKE_JUDGE_KEY", "sk-never-written")
    with FakeChatServer() as server:
        env.update({"EVALOPS_JUDGE__KIND": "openai", "EVALOPS_JUDGE__BASE_URL": server.url,
                    "EVALOPS_JUDGE__MODEL": "fake-judge", "EVALOPS_JUDGE__API_KEY_ENV": "FAKE_JUDGE_KEY",
                    "EVALOPS_JUDGE__TOP_K": "3", "EVALOPS_JUDGE__PRODUCTION_QUERIES": "20",
                    "EVALOPS_JUDGE__PRICE_INPUT_PER_1K": "0.5", "EVALOPS_JUDGE__PRICE_OUTPUT_PER_1K": "1.5",
                    "EVALOPS_JUDGE__MAX_CONCURRENCY": "4", "EVALOPS_LOG_SAMPLE_SIZE": "40"})
        cfg = load_config(tmp_path / "home", environ=env)
        day1 = RunContext.for_day("2024-05-31")
        first = run_local(cfg, day1)
        assert first["judged"]["status"] == "judged"
        promote(cfg, retriever="handbook-search", run="latest", reason="day one", promoted_by="tests")

        cfg2 = load_config(tmp_path / "home", environ={**env, "EVALOPS_RETRIEVERS_OVERLAY": str(_deploy_candidate(tmp_path))})
        day2 = RunContext.for_day("2024-06-01")
        second = run_local(cfg2, day2)
        after_second = server.judging_requests
        engine = engine_for(cfg2)
        stored = count_judgments(engine)
        again = run_local(cfg2, day2)  # a re-run of the same DAG run: everything is in the cache
        assert server.judging_requests == after_second, "the re-run sent requests to the judge"
        assert count_judgments(engine) == stored

    runs = load_judge_runs(engine, day2.run_id)
    assert set(runs["scope"]) == {"gold", "production"}
    gold = runs[runs["scope"] == "gold"].iloc[0]
    assert gold["requests"] == 0 and gold["cache_hits"] == gold["items"] > 0  # the row of the re-run
    assert again["judged"]["scopes"]["gold"]["requests"] == 0
    assert second["judged"]["scopes"]["gold"]["requests"] > 0  # the candidate's new contexts
    assert second["judged"]["scopes"]["gold"]["input_tokens"] == 100 * second["judged"]["scopes"]["gold"]["requests"]
    assert gold["prompt"] == "context_relevance@1" and gold["judge"]["model"] == "fake-judge"

    results = gold["results"]
    assert set(results["versions"]) == {"1.0", "2.0-truncated"}
    for m in ("ContextPrecision@3", "P@3", "nDCG@3"):
        assert 0 <= results["versions"]["2.0-truncated"][m] <= 1
    measures = {c["measure"]: c for c in judge_comparisons(engine, gold["id"])}
    assert set(measures) == {"judge:ContextPrecision@3", "judge:P@3", "judge:nDCG@3"}
    assert all(c["baseline"] == "handbook-search@1.0" for c in measures.values())
    # The planted regression (half the index) loses relevant contexts by the judge's labels too.
    assert measures["judge:P@3"]["delta"] < 0

    agreement = gold["agreement"]
    assert agreement["pairs_with_human_grades"] > 0 and agreement["kind"] == "binary"
    assert len(agreement["confusion"]) == 2 and sum(map(sum, agreement["confusion"])) == agreement["n"]
    assert "zh" in agreement["per_language"]
    assert gold["gate"]["status"] in ("alerting", "descriptive") and gold["gate"]["threshold"] == 0.6
    production = runs[runs["scope"] == "production"].iloc[0]
    assert production["items"] > 0 and judge_comparisons(engine, production["id"])
    assert "kappa from the run's gold set" in production["gate"]["reason"]

    db = (tmp_path / "home" / ".evalops").rglob("*")
    for path in db:
        if path.is_file() and path.suffix in (".db", ".md", ".html", ".json"):
            assert b"sk-never-written" not in path.read_bytes(), path


def test_the_offline_judge_runs_with_no_server(tmp_path):
    from evalops.config import load_config
    from evalops.pipeline import RunContext, run_local
    from evalops.pipeline.store import engine_for
    from evalops.warehouse.judgments import load_judge_runs

    env = {"EVALOPS_HOME": str(tmp_path), "EVALOPS_GOLD_SET": str(INCLUDE / "goldset"),
           "EVALOPS_KNOWLEDGE_BASE": str(INCLUDE / "knowledge_base"), "EVALOPS_REGISTRY": str(INCLUDE / "retrievers.yaml"),
           "EVALOPS_LOG_SAMPLE_SIZE": "0", "EVALOPS_JUDGE__KIND": "lexical", "EVALOPS_JUDGE__GRADED": "true",
           "EVALOPS_JUDGE__SAMPLES": "2"}
    cfg = load_config(tmp_path, environ=env)
    out = run_local(cfg, RunContext.for_day("2024-05-31"))
    (row,) = load_judge_runs(engine_for(cfg)).to_dict("records")
    assert row["judge"]["offline"] and row["judge"]["kind"] == "lexical (offline, no model)"
    assert row["prompt"] == "context_relevance_graded@1" and row["cost"] == 0
    assert row["agreement"]["kind"] == "graded"
    # Two samples of a deterministic judge agree perfectly.
    assert row["agreement"]["self_consistency"]["krippendorff_alpha"] == pytest.approx(1.0)
    assert out["judged"]["scopes"]["gold"]["gate"] in ("alerting", "descriptive")


@pytest.mark.parametrize("threshold, alerts", [("0.6", False), ("-1", True)])
def test_the_report_shows_judge_results_labelled_and_gated(tmp_path, threshold, alerts):
    from evalops.config import load_config
    from evalops.pipeline import RunContext, promote, run_local
    from evalops.pipeline.store import engine_for
    from evalops.warehouse import list_alerts

    env = {"EVALOPS_JUDGE__AGREEMENT_THRESHOLD": threshold, "EVALOPS_HOME": str(tmp_path), "EVALOPS_GOLD_SET": str(INCLUDE / "goldset"),
           "EVALOPS_KNOWLEDGE_BASE": str(INCLUDE / "knowledge_base"), "EVALOPS_REGISTRY": str(INCLUDE / "retrievers.yaml"),
           "EVALOPS_LOG_SAMPLE_SIZE": "0", "EVALOPS_JUDGE__KIND": "lexical"}
    cfg = load_config(tmp_path, environ=env)
    run_local(cfg, RunContext.for_day("2024-05-31"))
    promote(cfg, retriever="handbook-search", run="latest", reason="day one", promoted_by="tests")
    cfg2 = load_config(tmp_path, environ={**env, "EVALOPS_RETRIEVERS_OVERLAY": str(_deploy_candidate(tmp_path))})
    run_local(cfg2, RunContext.for_day("2024-06-01"))
    report = (cfg2.report_dir / "cli_cli__2024-06-01" / "report.md").read_text()
    assert "judge:ContextPrecision@5" in report
    assert "lexical (offline, no model)" in report
    assert "judge agreement on gold" in report
    judge_alerts = [a for a in list_alerts(engine_for(cfg2)).to_dict("records") if str(a["measure"]).startswith("judge:")]
    if not alerts:
        assert "descriptive" in report  # the lexical judge does not reach kappa 0.6 on the sample gold set
        assert judge_alerts == []
    else:  # a gate every judge passes: the planted regression alerts on judge labels
        assert judge_alerts and {a["version"] for a in judge_alerts} == {"2.0-truncated"}
        assert all('"status": "alerting"' in json.dumps(a["payload"]) for a in judge_alerts)
