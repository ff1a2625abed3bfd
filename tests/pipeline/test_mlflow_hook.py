"""The MLflow hook in a run (``mlflow`` in evalops.yaml): after the report, the gold versions' means (the
warehouse's) and the day's decisions reach a fake MLflow server; a server that refuses is a warning, or a failed
run under ``mlflow.required``, and never loses the report."""

from __future__ import annotations

import pytest

from evalops.goldset import load_gold_set
from evalops.tracking import mlflow_key
from tests.tracking.fake_mlflow import FakeMlflow


def _runs(gold, pads):
    relevant = gold.judgments[gold.judgments["grade"] > 0].groupby("query_id")["doc_id"].apply(list).to_dict()
    baseline, candidate = {}, {}
    for q in gold.queries["query_id"]:
        docs = relevant.get(q, [])
        fill = [p for p in pads if p not in docs][: max(0, 10 - len(docs))]
        baseline[q] = docs + fill
        candidate[q] = fill + docs  # the relevant ones pushed to the bottom: a regression
    return baseline, candidate


def test_a_run_logs_its_means_and_decisions_to_mlflow(repo_root, planted_project, monkeypatch):
    from evalops.pipeline.deciding import load_decisions
    from evalops.pipeline.specs import VersionSpec
    from evalops.pipeline.store import engine_for
    from evalops.warehouse import load_aggregates

    gold = load_gold_set(repo_root / "include" / "goldset")
    monkeypatch.setenv("MLFLOW_HOOK_TOKEN", "t0ken")
    with FakeMlflow() as server:
        cfg, day2, result = planted_project(
            gold, *_runs(gold, planted_project.pads), ["nDCG@10", "R@10"],
            extra=f"mlflow: {{tracking_uri: '{server.url}', experiment: rag, token_env: MLFLOW_HOOK_TOKEN}}\n")
    assert server.experiments == {"rag": "100"} and len(server.runs) == 2  # day 1 and day 2
    run = next(r for r in server.runs.values() if r["name"] == f"cli {day2.run_id}")
    assert run["status"] == "FINISHED" and run["tags"]["evalops.day"] == "2024-06-02"
    engine = engine_for(cfg)
    specs = [VersionSpec.from_xcom(v) for v in result["versions"]]
    decisions = load_decisions(engine, specs)
    assert decisions and all(
        run["tags"][f"evalops.decision.{mlflow_key(d.comparison.candidate_name)}.{mlflow_key(d.comparison.measure)}"]
        == d.comparison.decision
        for d in decisions if d.dataset != "production")
    assert run["tags"]["evalops.decision"] == "regression"
    for spec in specs:
        if spec.dataset == "production":
            continue
        stored = load_aggregates(engine, spec.run_id).set_index("measure")["mean"]
        assert run["metrics"][mlflow_key(spec.label, "nDCG@10")] == pytest.approx(float(stored["nDCG@10"]), abs=1e-12)
    assert {auth for *_, auth in server.calls} == {"Bearer t0ken"}


@pytest.mark.parametrize("required", [False, True])
def test_a_refusing_server_is_a_warning_or_under_required_a_failed_run(repo_root, planted_project, required, caplog):
    from evalops.pipeline.errors import IncompleteRunError

    gold = load_gold_set(repo_root / "include" / "goldset")
    fail = {"runs/create": (403, {"error_code": "PERMISSION_DENIED", "message": "no"})}
    with FakeMlflow(fail) as server:
        extra = f"mlflow: {{tracking_uri: '{server.url}', required: {str(required).lower()}}}\n"
        if required:
            with pytest.raises(IncompleteRunError, match="MLflow logging failed .*runs/create answered HTTP 403 "
                                                         "PERMISSION_DENIED"):
                planted_project(gold, *_runs(gold, planted_project.pads), ["nDCG@10"], extra=extra)
        else:
            planted_project(gold, *_runs(gold, planted_project.pads), ["nDCG@10"], extra=extra)
            assert "MLflow logging skipped (mlflow.required is false)" in caplog.text
    assert server.runs == {}
