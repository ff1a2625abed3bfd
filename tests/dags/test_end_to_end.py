"""The evaluation DAG end to end, in-process on SQLite: two days, a re-run, then a knowledge-base change.

One scenario (one child process, five ``dag.test()`` runs) backs every test in this module:

1. day 1 (2024-05-31): the shipped registry (handbook-search 1.0 deployed);
2. promote_baseline for 1.0 (run "latest");
3. day 2 (2024-06-01): the candidates deployed too (2.0-hybrid, 2.0-truncated with a planted
   regression: half the index, and the 3.0 vector, hybrid and rerank versions over wordllama's vectors);
4. day 2 again: must not change a single row count;
5. day 3 (2024-06-02): one knowledge-base document edited, so the stored baseline is stale;
6. day 4 (2024-06-03): an ad-hoc run of one candidate given in the params (half the index, a planted
   regression) against the current baseline.
"""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path

import pytest

from tests.dags.conftest import DAGS, INCLUDE, make_home

pytestmark = [pytest.mark.airflow, pytest.mark.slow]

DAY1, DAY2, DAY3, DAY4 = (dt.datetime(2024, 5, 31 + i, tzinfo=dt.timezone.utc) if i == 0 else
                          dt.datetime(2024, 6, i, tzinfo=dt.timezone.utc) for i in range(4))
VECTOR_VERSIONS = ("3.0-vector", "3.0-hybrid", "3.0-rerank")
ADHOC = {"name": "handbook-search", "version": "3.0-adhoc", "adapter": "builtin", "deployed": False,
         "owner": "someone", "params": {"kind": "bm25", "k1": 0.9, "b": 0.4, "index_fraction": 0.5}}


@pytest.fixture(scope="module")
def scenario(tmp_path_factory):
    from evalops.config import load_config
    from evalops.airflow.runner import run_steps_in_subprocess
    from evalops.pipeline.demo import plan_demo

    root = tmp_path_factory.mktemp("e2e")
    env = make_home(root)
    kb = root / "kb_changed"
    kb.mkdir()
    lines = (INCLUDE / "knowledge_base" / "corpus.jsonl").read_text(encoding="utf-8").splitlines()
    doc = json.loads(lines[0])
    doc["text"] += " Updated: this policy was revised."
    (kb / "corpus.jsonl").write_text("\n".join([json.dumps(doc, ensure_ascii=False)] + lines[1:]) + "\n",
                                     encoding="utf-8")

    cfg = load_config(root, environ=env)
    plan = plan_demo(cfg, DAY1, DAY2, dags=DAGS)
    day2 = plan.steps[-1]
    steps = plan.steps + [
        day2,
        {"dag_id": "retrieval_eval", "logical_date": DAY3.isoformat(),
         "env": {**day2["env"], "EVALOPS_KNOWLEDGE_BASE": str(kb)}},
        {"dag_id": "retrieval_eval", "logical_date": DAY4.isoformat(), "conf": {"candidate": ADHOC},
         "env": {**day2["env"], "EVALOPS_KNOWLEDGE_BASE": str(kb), "EVALOPS_LOG_SAMPLE_SIZE": "0"}},
    ]
    results = run_steps_in_subprocess(DAGS, steps, workdir=root / "airflow", log_path=root / "airflow.log",
                                      env=env, inherit_evalops_env=False)
    with pytest.MonkeyPatch.context() as mp:
        mp.delenv("EVALOPS_WAREHOUSE_URL", raising=False)  # the warehouse is the scenario's SQLite file
        yield {"cfg": load_config(root, environ=env), "results": results, "plan": plan, "root": root}


def _engine(scenario):
    from evalops.pipeline.store import engine_for

    return engine_for(scenario["cfg"])


def _run(scenario, day: dt.datetime, version: str, dataset: str = "gold"):
    from evalops.warehouse import RunKey, find_run

    run_id = next(r["run_id"] for r in scenario["results"]
                  if r["dag_id"] == "retrieval_eval" and r["logical_date"] == day.isoformat())
    return find_run(_engine(scenario), RunKey("retrieval_eval", run_id, "handbook-search", version, dataset))


def _decisions(scenario, day: dt.datetime, version: str) -> dict[str, str]:
    from evalops.warehouse import load_ab_tests

    frame = load_ab_tests(_engine(scenario), candidate_run_id=_run(scenario, day, version).id)
    return dict(zip(frame["measure"], frame["decision"]))


def test_every_dag_run_succeeds(scenario):
    assert [(r["dag_id"], r["state"]) for r in scenario["results"]] == [
        ("retrieval_eval", "success"), ("promote_baseline", "success"), ("retrieval_eval", "success"),
        ("retrieval_eval", "success"), ("retrieval_eval", "success"), ("retrieval_eval", "success"),
    ]


def test_regressed_candidate_is_flagged_and_the_better_one_is_not(scenario):
    truncated = _decisions(scenario, DAY2, "2.0-truncated")
    hybrid = _decisions(scenario, DAY2, "2.0-hybrid")
    assert truncated["nDCG@10"] == "regression"
    assert "regression" not in hybrid.values()
    assert _decisions(scenario, DAY2, "1.0") == {}  # the baseline version is never compared with itself
    from evalops.warehouse import load_ab_tests

    frame = load_ab_tests(_engine(scenario), candidate_run_id=_run(scenario, DAY2, "2.0-truncated").id)
    ndcg = frame[frame["measure"] == "nDCG@10"].iloc[0]
    # the family: the alert measure x the five candidates; the other measures are descriptive
    assert (ndcg["family"], ndcg["family_size"], ndcg["margin"]) == ("gold", 5, 0.02)  # nDCG's default margin
    assert ndcg["severity"] in ("critical", "warning") and ndcg["interval_high"] < 0
    assert ndcg["interval_level"] == pytest.approx(1 - 0.05 / 5)  # Holm: the smallest p of five
    assert set(frame.loc[frame["measure"] != "nDCG@10", "family"]) == {"gold-descriptive"}


def test_warehouse_holds_runs_scores_ab_results_and_one_alert_after_day_two(scenario):
    counts = scenario["results"][2]["counts"]
    assert counts["eval_runs"] >= 6 + 1  # day 2's six gold runs and day 1's
    assert counts["query_scores"] > 0 and counts["run_aggregates"] > 0
    assert counts["ab_tests"] >= 15  # three measures x five candidate versions on the gold set
    assert counts["alerts"] == 1
    from evalops.warehouse import list_alerts

    alerts = list_alerts(_engine(scenario), since=DAY2.date())
    first = alerts[alerts["day"] == DAY2.date()]
    assert list(first["kind"]) == ["regression"] and list(first["version"]) == ["2.0-truncated"]
    assert "handbook-search" in first["message"].iloc[0] and "nDCG@10" in first["message"].iloc[0]


def test_rerunning_day_two_changes_no_row_count(scenario):
    after_day2, after_rerun = scenario["results"][2]["counts"], scenario["results"][3]["counts"]
    assert after_rerun == after_day2


def test_knowledge_base_change_rescores_the_stale_baseline_and_the_report_says_so(scenario):
    from evalops.pipeline.context import RunContext
    from evalops.pipeline.workdir import report_location
    from evalops.warehouse import find_baseline, load_ab_tests

    rescored = _run(scenario, DAY3, "1.0")
    assert rescored.status == "succeeded"
    assert rescored.fingerprint.kb_snapshot_id != _run(scenario, DAY2, "1.0").fingerprint.kb_snapshot_id
    lookup = find_baseline(_engine(scenario), "handbook-search", rescored.fingerprint)
    assert lookup.status == "current" and lookup.baseline.run_id == rescored.id
    assert "stale" in lookup.baseline.reason and "kb_snapshot_id" in lookup.baseline.reason
    # the candidates are compared with the re-scored run, never across fingerprints
    ab = load_ab_tests(_engine(scenario), candidate_run_id=_run(scenario, DAY3, "2.0-truncated").id)
    assert set(ab["baseline_run_id"]) == {rescored.id}

    day3 = next(r for r in scenario["results"] if r["logical_date"] == DAY3.isoformat())
    run = RunContext("retrieval_eval", day3["run_id"], DAY3, DAY3, DAY3)
    report = (report_location(scenario["cfg"], run)).replace("report.html", "report.md")
    text = open(report, encoding="utf-8").read()
    assert "stored baseline handbook-search 1.0" in text and "is stale (kb_snapshot_id" in text
    assert "re-scored under the new fingerprint" in text
    assert "1 changed" in text  # the knowledge-base diff since the baseline


def test_publish_report_emits_the_results_asset_with_the_decisions(scenario):
    from evalops.pipeline.results import clear_candidates

    day2 = scenario["results"][2]
    events = [e for e in day2["asset_events"] if e["asset"] == "retrieval-eval-results"]
    assert len(events) == 1
    extra = events[0]["extra"]
    assert extra["schema"] == 1 and extra["run"]["run_id"] == day2["run_id"]
    assert extra["report"].endswith("report.html")
    decided = {(d["version"], d["measure"]): d["decision"] for d in extra["decisions"] if d["dataset"] == "gold"}
    assert decided == {(v, m): d for v in ("1.0", "2.0-hybrid", "2.0-truncated", *VECTOR_VERSIONS)
                       for m, d in _decisions(scenario, DAY2, v).items()}
    assert [a["kind"] for a in extra["alerts"]] == ["regression"]
    assert extra["all_clear"] is False  # 2.0-truncated regressed
    # the hybrid's gains on 76 queries are too skewed for the t-interval and the betting interval cannot tell
    # them at the family's level: inconclusive, so it is not all clear (the robust rule fails closed)
    assert {d for (v, _), d in decided.items() if v == "2.0-hybrid"} == {"inconclusive"}
    assert {c["version"] for c in clear_candidates(extra)} == set()
    assert {v["run_id"] for v in extra["versions"] if v["version"] == "2.0-hybrid" and v["dataset"] == "gold"} == {
        _run(scenario, DAY2, "2.0-hybrid").id}


def test_an_adhoc_candidate_is_scored_alone_against_the_current_baseline(scenario):
    from evalops.pipeline.workdir import report_location
    from evalops.pipeline.context import RunContext
    from evalops.warehouse import find_baseline
    from evalops.warehouse._db import transaction
    from evalops.warehouse.runs import select_runs
    from evalops.warehouse.models import EvalRunModel

    day4 = scenario["results"][5]
    with transaction(_engine(scenario), "reading runs") as conn:
        mine = select_runs(conn, EvalRunModel.__table__.c.dag_run_id == day4["run_id"])
    assert sorted((r.key.version, r.key.dataset) for r in mine) == [("3.0-adhoc", "gold")]
    adhoc = _run(scenario, DAY4, "3.0-adhoc")
    assert adhoc.contracts["adhoc_candidate"] == "handbook-search@3.0-adhoc"
    assert adhoc.contracts["trigger"] == {"type": "manual", "asset_events": []}
    assert _decisions(scenario, DAY4, "3.0-adhoc")["nDCG@10"] == "regression"
    # compared with the current baseline (day 3's re-score), which stays the baseline
    baseline = _run(scenario, DAY3, "1.0")
    lookup = find_baseline(_engine(scenario), "handbook-search", adhoc.fingerprint)
    assert lookup.status == "current" and lookup.baseline.run_id == baseline.id
    run = RunContext("retrieval_eval", day4["run_id"], DAY4, DAY4, DAY4)
    text = open(report_location(scenario["cfg"], run).replace("report.html", "report.md"), encoding="utf-8").read()
    assert "ad-hoc run: only the candidate handbook-search@3.0-adhoc" in text


def _embedding_counts(scenario, day: dt.datetime) -> dict[str, int]:
    """Documents the (last) run of ``day`` embedded and read from the cache, over every shard of every version
    and dataset (the shards' ``embeddings`` counts)."""
    from evalops.pipeline.workdir import safe_name

    result = next(r for r in scenario["results"] if r["dag_id"] == "retrieval_eval"
                  and r["logical_date"] == day.isoformat())
    folder = Path(scenario["cfg"].work_dir) / "runs" / "retrieval_eval" / safe_name(result["run_id"]) / "scores"
    shards = [json.loads(p.read_text()) for p in folder.glob("run-*/shard-*.json")]
    assert shards, folder
    return {k: sum((s.get("embeddings") or {}).get(k, 0) for s in shards) for k in ("embedded", "cached")}


def test_the_vector_versions_embed_each_snapshot_once(scenario):
    n_docs = len((INCLUDE / "knowledge_base" / "corpus.jsonl").read_text(encoding="utf-8").splitlines())
    assert _embedding_counts(scenario, DAY1) == {"embedded": 0, "cached": 0}  # 1.0 is BM25
    # day 2's re-run (it shares the first day-2 run's folder): every vector of the snapshot from the cache
    day2 = _embedding_counts(scenario, DAY2)
    assert day2["embedded"] == 0 and day2["cached"] > 0 and day2["cached"] % n_docs == 0
    day3 = _embedding_counts(scenario, DAY3)  # one document edited: embedded alone, the rest from the cache
    assert day3["embedded"] == 1 and (day3["embedded"] + day3["cached"]) % n_docs == 0
    (encoder,) = (Path(scenario["cfg"].work_dir) / "embeddings").iterdir()
    assert len(list(encoder.glob("*.npz"))) == 2  # one file per knowledge-base snapshot


def test_the_vector_hybrid_and_rerank_versions_are_decided_on_the_gold_set(scenario):
    from evalops.warehouse import load_ab_tests

    for version in VECTOR_VERSIONS:
        frame = load_ab_tests(_engine(scenario), candidate_run_id=_run(scenario, DAY2, version).id)
        ndcg = frame[frame["measure"] == "nDCG@10"].iloc[0]
        # better on average (+0.07 .. +0.11) but not provably so at 76 queries in a family of 5
        assert ndcg["delta"] > 0.05 and ndcg["decision"] == "inconclusive", (version, ndcg.to_dict())
