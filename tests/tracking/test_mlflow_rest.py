"""evalops.tracking: measures and decisions logged through MLflow's REST API, against a fake MLflow server on
127.0.0.1 that checks what the real one checks (keys, batch limits, no NaN, JSON bodies)."""

from __future__ import annotations

import pytest

from evalops.abtest import compare_runs
from evalops.data import Run
from evalops.errors import ConfigError
from evalops.metrics import evaluate
from evalops.stats import Policy
from evalops.tracking import (
    MlflowTracker,
    TrackingError,
    log_to_mlflow,
    mlflow_key,
    overall_decision,
)
from tests.tracking.fake_mlflow import FakeMlflow

QRELS = {"q1": {"a": 1}, "q2": {"b": 1}, "q3": {"c": 1}, "q4": {"d": 2}}
BASE = Run.from_dict({"q1": {"a": 2.0}, "q2": {"x": 1.0}, "q3": {"c": 1.0}, "q4": {"d": 1.0}})
CAND = Run.from_dict({"q1": {"x": 2.0}, "q2": {"b": 1.0}, "q3": {"y": 1.0}, "q4": {"z": 1.0}})


def test_a_run_s_means_and_decisions_reach_the_server():
    measures = ["P@1", "nDCG@10"]
    comparisons = compare_runs(QRELS, BASE, [CAND], measures, Policy(seed=1), baseline_name="bm25 v1",
                               candidate_names=["dense v2"])
    means = {name: {m: evaluate(QRELS, run, measures).aggregates[m].mean for m in measures}
             for name, run in (("bm25 v1", BASE), ("dense v2", CAND))}
    with FakeMlflow() as server, MlflowTracker(server.url, token="s3cret") as tracker:
        run_id = log_to_mlflow(tracker, "retrieval", "2024-06-01 sf", measures=means, comparisons=comparisons,
                               tags={"evalops.fingerprint": "abc"})
        again = log_to_mlflow(tracker, "retrieval", "2024-06-02 sf", measures=means, comparisons=comparisons)
    run = server.runs[run_id]
    assert server.experiments == {"retrieval": "100"} and run["experiment_id"] == "100" and again != run_id
    assert run["status"] == "FINISHED" and run["name"] == "2024-06-01 sf"
    # hand count: base finds q1, q3, q4 at rank 1 (3 of 4), the candidate q2 only
    assert run["metrics"]["bm25 v1/P_1"] == 0.75 and run["metrics"]["dense v2/P_1"] == 0.25
    assert run["metrics"]["dense v2/P_1/delta"] == pytest.approx(-0.5, abs=1e-12)
    assert run["metrics"]["dense v2/nDCG_10"] == pytest.approx(means["dense v2"]["nDCG@10"], abs=1e-12)
    assert run["params"]["evalops.measure.P_1"] == "P@1" and run["params"]["evalops.version.dense v2"] == "dense v2"
    decisions = {c.measure: c.decision for c in comparisons}
    assert run["tags"]["evalops.decision.dense v2.P_1"] == decisions["P@1"]
    assert run["tags"]["evalops.decision"] == overall_decision(decisions.values())
    assert run["tags"]["evalops.fingerprint"] == "abc" and run["tags"]["mlflow.runName"] == "2024-06-01 sf"
    assert {auth for *_, auth in server.calls} == {"Bearer s3cret"}
    endpoints = [e for _, e, _, _ in server.calls]
    assert endpoints[:4] == ["experiments/get-by-name", "experiments/create", "runs/create", "runs/log-batch"]
    assert endpoints.count("experiments/create") == 1  # the second run finds the experiment


def test_a_large_batch_is_split_at_mlflow_s_limits():
    means = {f"v{i}": {f"P@{k}": k / 100 for k in range(1, 26)} for i in range(100)}  # 2,500 metrics
    with FakeMlflow() as server, MlflowTracker(server.url) as tracker:
        run_id = log_to_mlflow(tracker, "e", "big", measures=means)
    batches = [b for _, e, b, _ in server.calls if e == "runs/log-batch"]
    assert [len(b["metrics"]) for b in batches] == [1000, 1000, 500]
    assert len(server.runs[run_id]["metrics"]) == 2500 and server.runs[run_id]["tags"]["evalops.decision"] == \
        "no_comparison"
    assert {None} == {auth for *_, auth in server.calls}  # no token: no Authorization header


def test_an_undefined_mean_is_left_out_not_sent_as_nan():
    with FakeMlflow() as server, MlflowTracker(server.url) as tracker:
        run_id = log_to_mlflow(tracker, "e", "r", measures={"v": {"P@1": float("nan"), "R@10": 0.5}})
    assert server.runs[run_id]["metrics"] == {"v/R_10": 0.5}


def test_a_refusal_names_the_endpoint_status_and_code_and_no_secret():
    fail = {"runs/log-batch": (400, {"error_code": "INVALID_PARAMETER_VALUE", "message": "bad\x1b[31m <key>"})}
    with (FakeMlflow(fail) as server,
          MlflowTracker(server.url.replace("http://", "http://me:pw@"), token="s3cret") as tracker,
          pytest.raises(TrackingError) as caught):
        log_to_mlflow(tracker, "e", "r", measures={"v": {"P@1": 1.0}})
    message = str(caught.value)
    assert "runs/log-batch answered HTTP 400 INVALID_PARAMETER_VALUE: bad[31m <key>" in message
    assert "\x1b" not in message and "s3cret" not in message and "pw" not in message
    assert [e for _, e, _, _ in server.calls].count("runs/log-batch") == 1  # a 400 is not retried


def test_an_unreachable_server_is_a_tracking_error():
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    with (MlflowTracker(f"http://127.0.0.1:{port}", timeout=2, max_retries=0) as tracker,
          pytest.raises(TrackingError, match=r"experiments/get-by-name failed: connection")):
        tracker.experiment_id("e")


@pytest.mark.parametrize("uri", ["file:///tmp/mlruns", "127.0.0.1:5000", "databricks"])
def test_a_tracking_uri_that_is_not_a_server_is_refused(uri):
    with pytest.raises(ConfigError, match="mlflow.tracking_uri"):
        MlflowTracker(uri)


def test_keys_and_the_overall_decision():
    assert mlflow_key("bm25@v1", "nDCG(gain=exp)@10") == "bm25_v1/nDCG_gain_exp__10"
    assert overall_decision(["no_change", "regression", "improvement"]) == "regression"
    assert overall_decision(["inconclusive", "improvement"]) == "improvement"
    assert overall_decision([]) == "no_comparison"
