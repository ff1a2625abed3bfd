"""Fail closed (evalops.config.closed): a warehouse, judge or notifier setting that is set but empty stops the
load with an error naming where it was set, instead of falling back to a default (an empty
EVALOPS_WAREHOUSE_URL used to mean a fresh local SQLite warehouse, so a fork's gate passed with "no baseline
yet"); a secret the settings reference and the process lacks is refused before a run does any work."""

from __future__ import annotations

import pytest

from evalops.config import load_config, process_setting
from evalops.errors import ConfigError
from evalops.util.secrets import SecretError
from evalops.warehouse import resolve_url


@pytest.mark.parametrize(("environ", "says"), [
    ({"EVALOPS_WAREHOUSE_URL": ""}, "environment variable EVALOPS_WAREHOUSE_URL: warehouse_url is set but empty"),
    ({"EVALOPS_WAREHOUSE_URL": "  "}, "environment variable EVALOPS_WAREHOUSE_URL: warehouse_url is set but empty"),
    ({"EVALOPS_JUDGE__BASE_URL": ""}, "environment variable EVALOPS_JUDGE__BASE_URL: judge.base_url is set but empty"),
    ({"EVALOPS_ALERTING__EMAIL_TO": ""}, "EVALOPS_ALERTING__EMAIL_TO: alerting.email_to is set but empty"),
    ({"EVALOPS_ALERTING": ""}, "environment variable EVALOPS_ALERTING: alerting is set but empty"),
], ids=["warehouse", "warehouse-blank", "judge", "notifier", "section"])
def test_an_empty_variable_is_refused_naming_it(tmp_path, environ, says):
    with pytest.raises(ConfigError, match=says.replace("(", r"\(")):
        load_config(tmp_path, environ=environ)


def test_an_empty_variable_elsewhere_keeps_its_default(tmp_path):
    assert load_config(tmp_path, environ={"EVALOPS_K": ""}).k == 100  # not a warehouse, judge or notifier


def test_an_empty_warehouse_url_in_dotenv_yaml_or_secrets_is_refused(tmp_path):
    (tmp_path / ".env").write_text("EVALOPS_WAREHOUSE_URL=\n")
    with pytest.raises(ConfigError, match=f"{tmp_path / '.env'}: variable EVALOPS_WAREHOUSE_URL: warehouse_url is set"):
        load_config(tmp_path, environ={})
    (tmp_path / ".env").unlink()
    (tmp_path / "evalops.yaml").write_text("k: 10\nwarehouse_url: ''\n")
    with pytest.raises(ConfigError, match=f"{tmp_path / 'evalops.yaml'}:2: warehouse_url is set but empty"):
        load_config(tmp_path, environ={})
    (tmp_path / "evalops.yaml").write_text("alerting:\n  webhook_env: ''\n")
    with pytest.raises(ConfigError, match="evalops.yaml:2: alerting.webhook_env is set but empty"):
        load_config(tmp_path, environ={})
    (tmp_path / "evalops.yaml").unlink()
    secrets = tmp_path / "secrets"
    secrets.mkdir()
    (secrets / "EVALOPS_WAREHOUSE_URL").write_text("\n")
    with pytest.raises(ConfigError, match="secrets file .*EVALOPS_WAREHOUSE_URL: warehouse_url is set but empty"):
        load_config(tmp_path, environ={"EVALOPS_SECRETS_DIR": str(secrets)})


def test_an_empty_string_that_is_the_default_is_not_refused(tmp_path):
    # `evalops init` writes judge.base_url: "" (its default), commented out; uncommented it stays valid
    (tmp_path / "evalops.yaml").write_text("judge:\n  kind: lexical\n  base_url: ''\n  model: ''\n")
    assert load_config(tmp_path, environ={}).judge.kind == "lexical"


def test_allow_local_names_the_project_s_warehouse(tmp_path):
    cfg = load_config(tmp_path, environ={"EVALOPS_WAREHOUSE_URL": ""}, allow_local=True)
    assert cfg.warehouse_url == f"sqlite:///{tmp_path.resolve() / '.evalops' / 'warehouse.db'}"
    assert cfg.notes and "EVALOPS_WAREHOUSE_URL" in cfg.notes[0] and "--allow-local" in cfg.notes[0]
    # it lets only the warehouse through
    with pytest.raises(ConfigError, match="EVALOPS_JUDGE__MODEL"):
        load_config(tmp_path, environ={"EVALOPS_WAREHOUSE_URL": "", "EVALOPS_JUDGE__MODEL": ""}, allow_local=True)
    # a URL that is set is used as it is
    given = load_config(tmp_path, environ={"EVALOPS_WAREHOUSE_URL": "sqlite:///x.db"}, allow_local=True)
    assert given.warehouse_url == "sqlite:///x.db" and not given.notes


def test_a_reader_without_a_project_refuses_an_empty_url_too(tmp_path):
    with pytest.raises(ConfigError, match="environment variable EVALOPS_WAREHOUSE_URL: warehouse_url is set"):
        process_setting("warehouse_url", {"EVALOPS_WAREHOUSE_URL": ""})
    (tmp_path / "EVALOPS_WAREHOUSE_URL").write_text("")
    with pytest.raises(ConfigError, match="the secrets file EVALOPS_WAREHOUSE_URL"):
        process_setting("warehouse_url", {"EVALOPS_SECRETS_DIR": str(tmp_path)})
    assert process_setting("warehouse_url", {}) is None  # unset: the default chain, as before


def test_resolve_url_refuses_an_empty_variable(monkeypatch):
    monkeypatch.setenv("EVALOPS_WAREHOUSE_URL", "")
    with pytest.raises(ConfigError, match="EVALOPS_WAREHOUSE_URL"):
        resolve_url()


OPENAI = "judge:\n  kind: openai\n  base_url: http://127.0.0.1:9/v1\n  model: m\n"


@pytest.mark.parametrize(("settings", "environ", "says"), [
    (OPENAI, {"OPENAI_API_KEY": ""}, "judge.api_key_env .*environment variable OPENAI_API_KEY is not set or empty"),
    (OPENAI + "  api_key_env: MY_JUDGE_KEY\n", {}, "environment variable MY_JUDGE_KEY is not set or empty"),
    ("alerting:\n  webhook_env: MY_HOOK\n", {}, "alerting.webhook_env .*MY_HOOK is not set or empty"),
    ("alerting:\n  webhook_env: MY_HOOK\n", {"MY_HOOK": ""}, "MY_HOOK is not set or empty"),
], ids=["judge-key-empty", "judge-key-named-absent", "webhook-named-absent", "webhook-named-empty"])
def test_a_referenced_secret_that_is_missing_is_refused(tmp_path, settings, environ, says):
    (tmp_path / "evalops.yaml").write_text(settings)
    cfg = load_config(tmp_path, environ={})
    with pytest.raises(SecretError, match=says):
        cfg.check_secrets(environ)


@pytest.mark.parametrize(("settings", "environ"), [
    (OPENAI, {}),  # the default variable, absent: a keyless local endpoint; the judge's preflight tells
    (OPENAI, {"OPENAI_API_KEY": "sk-x"}),
    ("alerting:\n  webhook_env: MY_HOOK\n", {"MY_HOOK": "https://hooks.example/x"}),
    ("k: 10\n", {"EVALOPS_WEBHOOK_URL": ""}),  # the default webhook variable may stay empty (docker-compose)
])
def test_secrets_that_are_present_or_not_referenced_pass(tmp_path, settings, environ):
    (tmp_path / "evalops.yaml").write_text(settings)
    load_config(tmp_path, environ=environ).check_secrets(environ)
