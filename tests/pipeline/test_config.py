from __future__ import annotations

from pathlib import Path

import pytest

from evalops.config import load_config
from evalops.errors import ConfigError


def test_defaults_point_at_include_under_home(tmp_path):
    cfg = load_config(tmp_path, environ={})
    assert cfg.gold_set == tmp_path / "include" / "goldset"
    assert cfg.retrievers == tmp_path / "include" / "retrievers.yaml"
    assert cfg.report_dir == tmp_path / ".evalops" / "reports"
    assert cfg.regression.alpha == 0.05 and cfg.regression.correction == "holm"
    assert cfg.source == "defaults"


def test_yaml_then_environment_wins(tmp_path):
    (tmp_path / "evalops.yaml").write_text(
        "gold_set: /data/gold\nk: 50\nmeasures: [nDCG@10, P@5]\nregression:\n  alpha: 0.01\n  correction: bh\n"
        "alerting:\n  email_to: [oncall@example.com]\n"
    )
    cfg = load_config(tmp_path, environ={"EVALOPS_K": "20", "EVALOPS_MIN_DELTA": "0.03",
                                         "EVALOPS_REPORT_DIR": "out/reports"})
    assert cfg.gold_set == Path("/data/gold")
    assert cfg.k == 20
    assert cfg.measures == ("nDCG@10", "P@5")
    assert cfg.regression.alpha == 0.01 and cfg.regression.correction == "bh"
    assert cfg.regression.min_delta == 0.03
    assert cfg.alerting.email_to == ("oncall@example.com",)
    assert cfg.report_dir == tmp_path / "out" / "reports"
    assert "evalops.yaml" in cfg.source and "EVALOPS_K" in cfg.source


def test_evalops_home_overrides_the_callers_home(tmp_path):
    cfg = load_config("/somewhere/else", environ={"EVALOPS_HOME": str(tmp_path)})
    assert cfg.home == tmp_path.resolve()


@pytest.mark.parametrize(
    "yaml_text, message",
    [
        ("k: ten\n", "k: expected an integer"),
        ("regression:\n  alfa: 0.1\n", "unknown setting 'regression.alfa'"),
        ("colour: blue\n", "unknown setting 'colour'"),
        ("k: [1\n", "not valid YAML"),
        ("- a\n- b\n", "must be a mapping"),
    ],
)
def test_bad_file_names_the_problem(tmp_path, yaml_text, message):
    path = tmp_path / "evalops.yaml"
    path.write_text(yaml_text)
    with pytest.raises(ConfigError, match=message.replace("(", r"\(").replace(")", r"\)")) as err:
        load_config(tmp_path, environ={})
    assert "evalops.yaml" in str(err.value) or "configuration" in str(err.value)


def test_bad_environment_value_names_the_variable(tmp_path):
    with pytest.raises(ConfigError, match="EVALOPS_SHARD_SIZE: expected an integer"):
        load_config(tmp_path, environ={"EVALOPS_SHARD_SIZE": "many"})


def test_to_dict_has_no_secret(tmp_path):
    cfg = load_config(tmp_path, environ={"EVALOPS_WEBHOOK_URL": "https://hooks.example/T/B/xyzzy-t0k3n"})
    assert "xyzzy" not in repr(cfg.to_dict()) and "xyzzy" not in repr(cfg)


@pytest.mark.parametrize("yaml_text, message", [
    ("regression:\n  alpha: 2\n", "regression policy: alpha must be between 0 and 1"),
    ("regression:\n  correction: bonferroni\n", "regression policy: correction must be one of holm, bh"),
])
def test_bad_regression_policy_is_refused_by_the_stats_policy(tmp_path, yaml_text, message):
    (tmp_path / "evalops.yaml").write_text(yaml_text)
    cfg = load_config(tmp_path, environ={})
    with pytest.raises(ConfigError, match=message):
        cfg.stats_policy(20240601)


def test_stats_policy_carries_every_setting_and_the_seed(tmp_path):
    cfg = load_config(tmp_path, environ={"EVALOPS_ALPHA": "0.01", "EVALOPS_CORRECTION": "bh",
                                         "EVALOPS_MARGINS": "P@5=0.02", "EVALOPS_ALERT_ON": "either",
                                         "EVALOPS_ALERT_ON_QUERY_DROPS": "true", "EVALOPS_MIN_COVERAGE": "0.8"})
    policy = cfg.stats_policy(20240601)
    assert (policy.alpha, policy.correction, policy.min_delta, policy.seed) == (0.01, "bh", 0.01, 20240601)
    assert policy.margins == {"P@5": 0.02} and policy.margin("P@5") == 0.02 and policy.margin("nDCG@10") == 0.01
    assert (policy.alert_on, policy.alert_on_query_drops, policy.min_coverage) == ("either", True, 0.8)


def test_min_effect_is_refused_with_what_replaced_it(tmp_path):
    from evalops.errors import ConfigError

    for environ in ({"EVALOPS_MIN_EFFECT": "0.2"},):
        with pytest.raises(ConfigError, match="min_effect .* was removed: materiality is now min_delta"):
            load_config(tmp_path, environ=environ).stats_policy(0)
    (tmp_path / "evalops.yaml").write_text("regression:\n  min_effect: 0.3\n")
    with pytest.raises(ConfigError, match="Replace min_effect with min_delta"):
        load_config(tmp_path, environ={}).stats_policy(0)
