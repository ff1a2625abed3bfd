"""The settings a DAG reads at parse time: same keys and precedence as evalops.config, validated alike."""

from __future__ import annotations

import datetime as dt

import pytest

from evalops.config import load_config
from evalops.airflow.dags._parse import DEFAULT_TASK_TIMEOUT, ParseSettingError, retry_delay, task_timeouts

TASKS = ["migrate_warehouse", "score", "publish_report"]


def _seconds(found: dict[str, dt.timedelta]) -> dict[str, float]:
    return {k: v.total_seconds() for k, v in found.items()}


def test_default_is_the_config_default(tmp_path):
    assert _seconds(task_timeouts(tmp_path, TASKS, {})) == {t: DEFAULT_TASK_TIMEOUT for t in TASKS}
    assert load_config(tmp_path, environ={}).task_timeout == DEFAULT_TASK_TIMEOUT


def test_yaml_then_environment_like_the_config(tmp_path):
    (tmp_path / "evalops.yaml").write_text("task_timeout: 600\ntask_timeouts:\n  score: 120\n", encoding="utf-8")
    env = {"EVALOPS_TASK_TIMEOUTS__PUBLISH_REPORT": "60"}
    found = _seconds(task_timeouts(tmp_path, TASKS, env))
    assert found == {"migrate_warehouse": 600, "score": 120, "publish_report": 60}
    cfg = load_config(tmp_path, environ=env)
    assert cfg.task_timeout == 600 and cfg.task_timeouts == {"score": 120, "publish_report": 60}
    # the environment wins over the file, for the default and for one task
    env = {"EVALOPS_TASK_TIMEOUT": "300", "EVALOPS_TASK_TIMEOUTS__SCORE": "90"}
    assert _seconds(task_timeouts(tmp_path, TASKS, env)) == {"migrate_warehouse": 300, "score": 90,
                                                             "publish_report": 300}
    cfg = load_config(tmp_path, environ=env)
    assert cfg.task_timeout == 300 and cfg.task_timeouts["score"] == 90


@pytest.mark.parametrize("value", ["0", "-5", "soon", "nan", "inf"])
def test_a_bad_value_names_the_variable(tmp_path, value):
    with pytest.raises(ParseSettingError, match=f"EVALOPS_TASK_TIMEOUTS__SCORE: expected a .*{value!r}"):
        task_timeouts(tmp_path, TASKS, {"EVALOPS_TASK_TIMEOUTS__SCORE": value})


def test_a_bad_yaml_value_names_the_file_and_key(tmp_path):
    (tmp_path / "evalops.yaml").write_text("task_timeout: never\n", encoding="utf-8")
    with pytest.raises(ParseSettingError, match=r"evalops.yaml: task_timeout: expected a number"):
        task_timeouts(tmp_path, TASKS, {})


def test_retry_delay():
    assert retry_delay({}) == dt.timedelta(seconds=60)
    assert retry_delay({"EVALOPS_RETRY_DELAY_SECONDS": "1"}) == dt.timedelta(seconds=1)
    with pytest.raises(ParseSettingError, match="EVALOPS_RETRY_DELAY_SECONDS"):
        retry_delay({"EVALOPS_RETRY_DELAY_SECONDS": "x"})


def test_project_name_prefixes_names_and_reads_like_the_config(tmp_path):
    from evalops.airflow.assets import name_for
    from evalops.config.env import parse_time_settings

    assert parse_time_settings(tmp_path, [], {})["project_name"] is None
    assert name_for(None, "knowledge-base") == "knowledge-base"  # one project per Airflow: the plain names
    (tmp_path / "evalops.yaml").write_text("project_name: support\n", encoding="utf-8")
    assert parse_time_settings(tmp_path, [], {})["project_name"] == "support"
    assert parse_time_settings(tmp_path, [], {"EVALOPS_PROJECT_NAME": "search"})["project_name"] == "search"
    assert load_config(tmp_path, environ={}).project_name == "support"
    assert name_for("support", "retrieval_eval") == "support.retrieval_eval"


@pytest.mark.parametrize("value", ["two words", "a.b", "-lead", "x" * 65, "s/lash"])
def test_a_bad_project_name_names_where_it_came_from(tmp_path, value):
    from evalops.config.env import parse_time_settings
    from evalops.errors import ConfigError

    with pytest.raises(ParseSettingError, match=f"EVALOPS_PROJECT_NAME: {value!r} is not a project name"):
        parse_time_settings(tmp_path, [], {"EVALOPS_PROJECT_NAME": value})
    (tmp_path / "evalops.yaml").write_text(f"project_name: {value!r}\n", encoding="utf-8")
    with pytest.raises(ParseSettingError, match=r"evalops.yaml: project_name: .* is not a project name"):
        parse_time_settings(tmp_path, [], {})
    with pytest.raises(ConfigError, match=r"evalops.yaml:1: project_name: .* is not a project name"):
        load_config(tmp_path, environ={})
