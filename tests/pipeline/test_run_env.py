"""The run's environment (``evalops.pipeline.env``): what the steps after planning read of the settings, made
once, equal to what the settings say, and a bad policy refused when it is made."""

from __future__ import annotations

import dataclasses

import pytest

from evalops.config import load_config
from evalops.errors import ConfigError
from evalops.floors import FloorRule
from evalops.pipeline import registry
from evalops.pipeline.env import Measures, run_env
from evalops.pipeline.store import engine_for


def test_run_env_holds_what_the_settings_say(tmp_path):
    (tmp_path / "evalops.yaml").write_text(
        "k: 20\nmeasures: [MRR@10, nDCG@5]\nalert_measures: [nDCG@5]\ncontext_measures: [Tokens@5]\n"
        "failure_budget: 0.1\nregression: {alpha: 0.01, correction: bh}\n"
        "knowledge_base: {long_document_percentile: 90, sources: {field: source, k: 5}}\n")
    cfg = load_config(tmp_path, environ={})
    env = run_env(cfg)
    assert env.k == 20 and env.failure_budget == 0.1 and env.long_document_percentile == 90
    assert str(env.work_dir) == str(cfg.work_dir)
    assert env.engine() is engine_for(cfg)
    assert env.warehouse_url not in repr(env)  # a URL may hold a password
    assert env.sources is not None and env.sources.field == "source" and env.sources.k == 5
    for seed in (0, 20240601):
        assert env.policy(seed) == cfg.stats_policy(seed)
    m = env.measures
    assert m.canonical == ("RR@10", "nDCG@5")
    assert m.compared == registry.compared_measures(cfg) and m.scored == registry.scored_measures(cfg)
    assert m.text == registry.text_measures(cfg) == ["Tokens@5"]
    assert list(m.alerting) == registry.alerting_measures(cfg) == ["nDCG@5"]
    with pytest.raises(dataclasses.FrozenInstanceError):
        env.k = 5  # type: ignore[misc]


def test_run_env_holds_what_the_alert_step_reads(tmp_path):
    (tmp_path / "evalops.yaml").write_text(
        "report_dir: out/reports\nregression: {alpha: 0.01}\n"
        "alerting: {fail_on: [regression, floor], email_to: [ops@example.com], remind_every_days: 3}\n"
        "gold_set: {path: gold, floors: {nDCG@10: 0.3}, floor_on: lower_bound, floor_severity: warning}\n")
    cfg = load_config(tmp_path, environ={})
    env = run_env(cfg)
    assert env.report_dir == cfg.report_dir and env.alerting == cfg.alerting
    assert set(env.alerting.fail_on) == {"regression", "floor"} and env.alerting.remind_every_days == 3
    assert dict(env.alert_policy) == cfg.regression.model_dump(exclude={"min_effect"})
    assert env.alert_policy["alpha"] == 0.01
    assert dict(env.floors) == {"gold": FloorRule({"nDCG@10": 0.3}, "lower_bound", "warning")}
    with pytest.raises(TypeError):
        env.floors["other"] = FloorRule({})  # type: ignore[index]


def test_run_env_holds_what_the_report_step_reads(tmp_path):
    (tmp_path / "evalops.yaml").write_text(
        "shard_size: 25\nquery_score_retention_days: 30\n"
        "mlflow: {tracking_uri: 'http://127.0.0.1:5000', experiment: nightly, required: true}\n")
    cfg = load_config(tmp_path, environ={})
    env = run_env(cfg)
    assert env.home == cfg.home and env.shard_size == 25 and env.query_score_retention_days == 30
    assert env.mlflow == cfg.mlflow and env.mlflow.experiment == "nightly" and env.mlflow.required
    assert env.alert_policy["min_delta"] is None  # the report's default-margins line reads it


def test_run_env_holds_what_the_score_step_reads(tmp_path):
    (tmp_path / "evalops.yaml").write_text("memory_budget: 64MB\nrun_lease_seconds: 120\n"
                                           "judge: {kind: lexical, top_k: 7}\n")
    cfg = load_config(tmp_path, environ={})
    env = run_env(cfg)
    assert env.memory_budget_bytes == cfg.memory_budget_bytes == 64 * 2**20
    assert env.lease_seconds == cfg.lease_seconds == 120
    assert env.judge.kind == "lexical" and env.judge.top_k == 7


def test_no_secret_is_in_the_run_envs_repr(tmp_path, monkeypatch):
    """The warehouse and MLflow URLs may hold a password; the webhook URL and the PagerDuty routing key are
    secrets: the settings name their variables, the env holds the names, and none of them shows in its repr."""
    webhook, routing_key = "https://hooks.example.invalid/T000/B000/s3cr3t-hook", "r0uting-k3y-s3cr3t"
    monkeypatch.setenv("EVALOPS_WEBHOOK_URL", webhook)
    monkeypatch.setenv("EVALOPS_PAGERDUTY_ROUTING_KEY", routing_key)
    url = "postgresql+psycopg://evalops:pa55w0rd-s3cr3t@db.example.invalid/evalops"
    tracking = "https://ml:tr4ck-s3cr3t@mlflow.example.invalid"
    (tmp_path / "evalops.yaml").write_text(f"mlflow: {{tracking_uri: '{tracking}'}}\n")
    cfg = load_config(tmp_path, environ={"EVALOPS_WAREHOUSE_URL": url})
    env = run_env(cfg)
    assert env.warehouse_url == url  # the env holds them, never shows them
    assert "tr4ck-s3cr3t" in str(env.mlflow.tracking_uri)
    shown = repr(env)
    for secret in (url, "pa55w0rd-s3cr3t", webhook, "s3cr3t-hook", routing_key, "tr4ck-s3cr3t"):
        assert secret not in shown, secret
    assert "EVALOPS_WEBHOOK_URL" in shown  # the name of the variable is not a secret


def test_measures_keep_their_order():
    m = Measures(("RR@10",), context=("Tokens@5",), anchored=("SpanRecall@10",), judged=("Judged@10",))
    assert m.text == ["Tokens@5", "SpanRecall@10"]
    assert m.compared == ["RR@10", "Tokens@5", "SpanRecall@10"]
    assert m.scored == ["RR@10", "Judged@10", "Tokens@5", "SpanRecall@10"]


def test_a_bad_policy_is_refused_when_the_env_is_made(tmp_path):
    (tmp_path / "evalops.yaml").write_text("regression: {alpha: 2}\n")
    with pytest.raises(ConfigError, match="regression"):
        run_env(load_config(tmp_path, environ={}))


def test_the_dag_tasks_hand_each_step_what_it_takes():
    """The DAG's tasks make the RunEnv for the steps that take one (``_TAKE_RUN_ENV``) and the Config for the
    others: every step the tasks call is checked by its first parameter's annotation."""
    import ast
    import inspect
    from pathlib import Path

    pytest.importorskip("airflow.sdk")
    import evalops.pipeline as pipeline
    from evalops.airflow import tasks

    source = Path(tasks.__file__).read_text(encoding="utf-8")
    steps = {node.args[1].value for node in ast.walk(ast.parse(source))
             if isinstance(node, ast.Call) and getattr(node.func, "id", None) == "_call"
             and len(node.args) > 1 and isinstance(node.args[1], ast.Constant)}
    assert {"plan_run", "compare_version", "decide_run", "raise_alerts"} <= steps
    for step in sorted(steps):
        first = next(iter(inspect.signature(getattr(pipeline, step)).parameters.values()))
        wanted = "RunEnv" if step in tasks._TAKE_RUN_ENV else "Config"
        assert first.annotation == wanted, (step, first.annotation)
