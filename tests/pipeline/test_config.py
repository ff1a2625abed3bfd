from __future__ import annotations

from pathlib import Path

import pytest

from evalops.config import Config, find_project, iter_settings, load_config, settings_table
from evalops.errors import ConfigError


def test_defaults_know_nothing_of_the_demo(tmp_path):
    cfg = load_config(tmp_path, environ={})
    assert cfg.gold_set is None and cfg.gold_sets == {}
    assert cfg.knowledge_base.path is None and cfg.query_logs.path is None
    assert cfg.registry == tmp_path / "retrievers.yaml"
    assert cfg.report_dir == tmp_path / ".evalops" / "reports"
    assert cfg.data_docs == tmp_path / ".evalops" / "work" / "data_docs"
    assert cfg.regression.alpha == 0.05 and cfg.regression.correction == "holm"
    assert cfg.gold_set.rules.allowed_grades == "auto" if cfg.gold_set else True
    assert cfg.source == "defaults"
    with pytest.raises(ConfigError, match="no gold set is configured; set gold_set.path"):
        cfg.require_gold_sets()
    with pytest.raises(ConfigError, match="knowledge_base.path is not set"):
        cfg.knowledge_base_path()


def test_yaml_then_environment_wins(tmp_path):
    (tmp_path / "evalops.yaml").write_text(
        "gold_set:\n  path: /data/gold\n  default_type: semantic\n  rules: {min_queries: 10, allowed_grades: [0, 1]}\n"
        "k: 50\nmeasures: [nDCG@10, P@5]\nregression:\n  alpha: 0.01\n  correction: bh\n"
        "alerting:\n  email_to: [oncall@example.com]\n"
    )
    cfg = load_config(tmp_path, environ={"EVALOPS_K": "20", "EVALOPS_REGRESSION__MIN_DELTA": "0.03",
                                         "EVALOPS_REPORT_DIR": "out/reports",
                                         "EVALOPS_GOLD_SET__RULES__MIN_QUERIES": "30"})
    assert cfg.gold_set.path == Path("/data/gold") and cfg.gold_set.default_type == "semantic"
    assert cfg.gold_set.rules.min_queries == 30 and cfg.gold_set.rules.allowed_grades == (0, 1)
    assert cfg.gold_sets == {"gold": cfg.gold_set}
    assert cfg.k == 20
    assert cfg.measures == ("nDCG@10", "P@5")
    assert cfg.regression.alpha == 0.01 and cfg.regression.correction == "bh"
    assert cfg.regression.min_delta == 0.03
    assert cfg.alerting.email_to == ("oncall@example.com",)
    assert cfg.report_dir == tmp_path / "out" / "reports"
    assert "evalops.yaml" in cfg.source and "EVALOPS_K" in cfg.source


def test_environment_forms(tmp_path):
    env = {"EVALOPS_GOLD_SET": "data/scifact", "EVALOPS_GOLD_SET__DEFAULT_TYPE": "semantic",
           "EVALOPS_KNOWLEDGE_BASE": "data/scifact/corpus.jsonl", "EVALOPS_MEASURES": "nDCG@10, P@5",
           "EVALOPS_ALERTING__EMAIL_TO": "a@example.com,b@example.com", "EVALOPS_REGRESSION__ALPHA": "0.02",
           "EVALOPS_RETRIEVERS_OVERLAY": "mine.yaml"}
    cfg = load_config(tmp_path, environ=env)
    assert cfg.gold_set.path == tmp_path / "data" / "scifact" and cfg.gold_set.default_type == "semantic"
    assert cfg.knowledge_base.path == tmp_path / "data" / "scifact" / "corpus.jsonl"
    assert cfg.measures == ("nDCG@10", "P@5")
    assert cfg.alerting.email_to == ("a@example.com", "b@example.com")
    assert cfg.regression.alpha == 0.02
    assert cfg.registry_files() == [tmp_path / "retrievers.yaml", tmp_path / "mine.yaml"]


def test_dotenv_is_read_and_the_environment_wins(tmp_path):
    (tmp_path / ".env").write_text("EVALOPS_K=7\nEVALOPS_SHARD_SIZE=3\nOTHER=x\n")
    cfg = load_config(tmp_path, environ={"EVALOPS_K": "9"})
    assert (cfg.k, cfg.shard_size) == (9, 3)


def test_several_gold_sets(tmp_path):
    (tmp_path / "evalops.yaml").write_text(
        "gold_set: {path: en}\ngold_sets:\n  zh: {path: zh, default_type: semantic}\n")
    cfg = load_config(tmp_path, environ={})
    assert list(cfg.gold_sets) == ["gold", "zh"]
    assert cfg.gold_set_named("zh").path == tmp_path / "zh"
    with pytest.raises(ConfigError, match="no gold set named 'fr'"):
        cfg.gold_set_named("fr")


def test_evalops_home_overrides_the_callers_home(tmp_path):
    cfg = load_config("/somewhere/else", environ={"EVALOPS_HOME": str(tmp_path)})
    assert cfg.home == tmp_path.resolve()


def test_find_project_walks_up(tmp_path):
    (tmp_path / "evalops.yaml").write_text("k: 10\n")
    deep = tmp_path / "a" / "b"
    deep.mkdir(parents=True)
    assert find_project(deep) == tmp_path.resolve()
    assert find_project(tmp_path.parent) is None or find_project(tmp_path.parent) != tmp_path


@pytest.mark.parametrize(
    "yaml_text, message",
    [
        ("k: ten\n", "evalops.yaml:1: k: Input should be a valid integer"),
        ("regression:\n  alfa: 0.1\n", "evalops.yaml:2: unknown setting 'regression.alfa'; known: alert_on, alert_on_query_drops, alpha"),
        ("colour: blue\n", "evalops.yaml:1: unknown setting 'colour'"),
        ("gold_set:\n  path: g\n  rules:\n    min_queries: many\n", "evalops.yaml:4: gold_set.rules.min_queries"),
        ("gold_set:\n  path: g\n  rules:\n    colour: 1\n", "unknown setting 'gold_set.rules.colour'"),
        ("gold_set:\n  path: g\n  rules:\n    allowed_grades: lots\n", "allowed_grades must be 'auto' or a list"),
        ("gold_set:\n  path: g\n  default_type: fuzzy\n", "gold_set.default_type: Input should be 'semantic'"),
        ("gold_set:\n  path: g\n  floors:\n    nDCG@10: 1.3\n",
         "evalops.yaml:3: gold_set.floors: nDCG@10: the floor must be a number between 0 and 1; got 1.3"),
        ("gold_set:\n  path: g\n  floors: {nDCG@x: 0.3}\n", "evalops.yaml:3: gold_set.floors: nDCG@x: malformed measure"),
        ("gold_set:\n  path: g\n  floors: {P@5: 0.3}\n", "gold_set.floors.P@5: P@5 is not among the measures"),
        ("gold_sets:\n  extra:\n    path: g\n    floors: {P@5: 0.3}\n", "gold_sets.extra.floors.P@5: P@5 is not among"),
        ("gold_set:\n  path: g\n  floor_on: median\n", "evalops.yaml:3: gold_set.floor_on: Input should be 'mean' or 'lower_bound'"),
        ("retrievers: r.yaml\n", "the key 'retrievers' is now 'registry'"),
        ("k: [1\n", "not valid YAML"),
        ("- a\n- b\n", "must be a mapping"),
    ],
)
def test_bad_file_names_the_file_the_line_and_the_key(tmp_path, yaml_text, message):
    path = tmp_path / "evalops.yaml"
    path.write_text(yaml_text)
    with pytest.raises(ConfigError) as err:
        load_config(tmp_path, environ={})
    assert message in str(err.value)
    assert str(path) in str(err.value)


@pytest.mark.parametrize("env, message", [
    ({"EVALOPS_SHARD_SIZE": "many"}, "environment variable EVALOPS_SHARD_SIZE: shard_size"),
    ({"EVALOPS_GOLD_SET__RULES__MIN_QUERIES": "x"}, "environment variable EVALOPS_GOLD_SET__RULES__MIN_QUERIES"),
    ({"EVALOPS_GOLD_SETT__PATH": "x"}, "EVALOPS_GOLD_SETT__PATH: unknown setting 'gold_sett'"),
    ({"EVALOPS_REGRESSION__ALPHA": "lots"}, "environment variable EVALOPS_REGRESSION__ALPHA: regression.alpha"),
])
def test_bad_environment_value_names_the_variable(tmp_path, env, message):
    with pytest.raises(ConfigError, match=message):
        load_config(tmp_path, environ=env)


def test_floors_are_read_with_canonical_measure_names(tmp_path):
    (tmp_path / "evalops.yaml").write_text("gold_set:\n  path: g\n  floors: {MRR@10: 0.5, nDCG@10: 0.3}\n"
                                           "  floor_on: lower_bound\nmeasures: [nDCG@10, MRR@10]\n")
    cfg = load_config(tmp_path, environ={})
    assert cfg.gold_set.floors == {"RR@10": 0.5, "nDCG@10": 0.3}
    assert (cfg.gold_set.floor_on, cfg.gold_set.floor_severity) == ("lower_bound", "critical")


def test_to_dict_has_no_secret(tmp_path):
    cfg = load_config(tmp_path, environ={"EVALOPS_WEBHOOK_URL": "https://hooks.example/T/B/xyzzy-t0k3n"})
    assert "xyzzy" not in repr(cfg.to_dict()) and "xyzzy" not in repr(cfg)


def test_an_alpha_outside_zero_one_is_refused_when_loaded(tmp_path):
    (tmp_path / "evalops.yaml").write_text("regression:\n  alpha: 2\n")
    with pytest.raises(ConfigError, match=r"evalops.yaml:2: regression.alpha: Input should be less than 1"):
        load_config(tmp_path, environ={})


@pytest.mark.parametrize("yaml_text, message", [
    ("regression:\n  correction: bonferroni\n", "regression policy: correction must be one of holm, bh"),
])
def test_bad_regression_policy_is_refused_by_the_stats_policy(tmp_path, yaml_text, message):
    (tmp_path / "evalops.yaml").write_text(yaml_text)
    cfg = load_config(tmp_path, environ={})
    with pytest.raises(ConfigError, match=message):
        cfg.stats_policy(20240601)


def test_stats_policy_carries_every_setting_and_the_seed(tmp_path):
    cfg = load_config(tmp_path, environ={"EVALOPS_REGRESSION__ALPHA": "0.01", "EVALOPS_REGRESSION__CORRECTION": "bh",
                                         "EVALOPS_REGRESSION__MARGINS": '{"P@5": 0.02}',
                                         "EVALOPS_REGRESSION__ALERT_ON": "critical",
                                         "EVALOPS_REGRESSION__INTERVAL": "t",
                                         "EVALOPS_REGRESSION__MIN_COVERAGE": "0.8"})
    policy = cfg.stats_policy(20240601)
    assert (policy.alpha, policy.correction, policy.min_delta, policy.seed) == (0.01, "bh", None, 20240601)
    # no min_delta: each measure's default margin (evalops.stats.margins), nDCG 0.02
    assert policy.margins == {"P@5": 0.02} and policy.margin("P@5") == 0.02 and policy.margin("nDCG@10") == 0.02
    assert (policy.alert_on, policy.interval, policy.min_coverage) == ("critical", "t", 0.8)
    assert load_config(tmp_path, environ={}).stats_policy(0).interval == "robust"


def test_removed_alert_modes_are_refused_with_what_to_use_instead(tmp_path):
    from evalops.errors import ConfigError

    with pytest.raises(ConfigError, match="Remove alert_on_query_drops"):
        load_config(tmp_path, environ={"EVALOPS_REGRESSION__ALERT_ON_QUERY_DROPS": "true"}).stats_policy(0)
    with pytest.raises(ConfigError, match="alert_on: either .* was removed"):
        load_config(tmp_path, environ={"EVALOPS_REGRESSION__ALERT_ON": "either"}).stats_policy(0)


def test_min_effect_is_refused_with_what_replaced_it(tmp_path):
    from evalops.errors import ConfigError

    for environ in ({"EVALOPS_REGRESSION__MIN_EFFECT": "0.2"},):
        with pytest.raises(ConfigError, match="min_effect .* was removed: materiality is now min_delta"):
            load_config(tmp_path, environ=environ).stats_policy(0)
    (tmp_path / "evalops.yaml").write_text("regression:\n  min_effect: 0.3\n")
    with pytest.raises(ConfigError, match="Replace min_effect with min_delta"):
        load_config(tmp_path, environ={}).stats_policy(0)


def test_contract_rules_are_recordable(tmp_path):
    (tmp_path / "evalops.yaml").write_text("gold_set: {path: g, rules: {min_queries: 5}}\n"
                                           "knowledge_base: {path: kb, rules: {max_empty_share: 0.05}}\n")
    rules = load_config(tmp_path, environ={}).contract_rules()
    assert rules["gold_sets"]["gold"]["min_queries"] == 5
    assert rules["gold_sets"]["gold"]["allowed_grades"] == "auto"
    assert rules["knowledge_base"] == {"min_documents": 1, "max_empty_share": 0.05}
    assert rules["query_logs"]["max_malformed_share"] == 0.01


def test_settings_table_lists_every_setting():
    table = settings_table()
    for key, var, _default, _doc in iter_settings():
        assert f"`{key}`" in table and var in table
    assert "`EVALOPS_GOLD_SET__DEFAULT_TYPE`" in table
    assert "(or `EVALOPS_GOLD_SET`)" in table


def test_the_project_template_lists_every_setting_and_loads_to_the_defaults(tmp_path):
    from evalops.project import init_project

    init_project(tmp_path / "p", gold_set="data", knowledge_base="data/corpus.jsonl")
    text = (tmp_path / "p" / "evalops.yaml").read_text()
    for key, *_ in iter_settings():
        assert key.split(".")[-1] in text, key
    cfg = load_config(tmp_path / "p", environ={})
    defaults = load_config(tmp_path / "q", environ={})
    assert cfg.gold_set.path == tmp_path / "p" / "data"
    assert cfg.model_dump(exclude={"home", "gold_set", "gold_sets", "knowledge_base", "registry", "report_dir",
                                   "work_dir", "data_docs"}) == \
        defaults.model_dump(exclude={"home", "gold_set", "gold_sets", "knowledge_base", "registry", "report_dir",
                                     "work_dir", "data_docs"})
    assert isinstance(cfg, Config)


def test_memory_budget_is_parsed_as_the_command_line_parses_it(tmp_path):
    assert load_config(tmp_path, environ={}).memory_budget_bytes == 1 << 30
    assert load_config(tmp_path, environ={"EVALOPS_MEMORY_BUDGET": "512MB"}).memory_budget_bytes == 512 << 20
    (tmp_path / "evalops.yaml").write_text("memory_budget: 2GB\n")
    assert load_config(tmp_path, environ={}).memory_budget_bytes == 2 << 30
    (tmp_path / "evalops.yaml").write_text("memory_budget: 1000\n")
    with pytest.raises(ConfigError, match="memory_budget.*below 16MB"):
        load_config(tmp_path, environ={})
    with pytest.raises(ConfigError, match="EVALOPS_MEMORY_BUDGET.*not a size; write it like 512MB"):
        load_config(tmp_path / "q", environ={"EVALOPS_MEMORY_BUDGET": "lots"})
