"""Every secret is resolved by evalops.util.secrets.resolve_secret: a connection the settings name is the one
source; otherwise the variable, then the connection by its default name. The callers (judge, MLflow,
notifiers, warehouse, retrievers, Airflow hooks) read no environment variable themselves and import no
private reader."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from evalops.alerting.channels import resolve_pagerduty_key
from evalops.alerting.notifiers import resolve_webhook_url
from evalops.judges.openai import OpenAISettings, resolve_api_key
from evalops.retrievers.auth import AuthHeader
from evalops.util import secrets
from evalops.util.secrets import ConnectionFields, SecretError, resolve_secret

REPO = Path(__file__).resolve().parents[2]
CONNECTIONS = {"named": ConnectionFields("named", "http", host="https://judge.example/v1", password=" k3y\n"),
               "hook": ConnectionFields("hook", "http", host="https://hooks.example/x"),
               "empty": ConnectionFields("empty", "http")}


@pytest.fixture
def airflow(monkeypatch):
    looked_up = []

    def read_connection(conn_id, *, what, required=True):
        looked_up.append((conn_id, required))
        found = CONNECTIONS.get(conn_id)
        if found is None and required:
            raise SecretError(f"{what}: Airflow connection {conn_id!r} is not defined")
        return found

    monkeypatch.setattr(secrets, "read_connection", read_connection)
    return looked_up


def test_a_named_connection_is_the_one_source_and_must_exist(airflow):
    found = resolve_secret("judge", env="KEY", conn_id="named", environ={"KEY": "from-env"})
    assert found.value == "k3y" and found.connection is CONNECTIONS["named"] and "k3y" not in repr(found)
    with pytest.raises(SecretError, match="judge: Airflow connection 'missing' is not defined"):
        resolve_secret("judge", env="KEY", conn_id="missing", environ={"KEY": "from-env"})


def test_otherwise_the_variable_comes_first_then_the_default_connection(airflow):
    assert resolve_secret("hook", env="URL", conn_id="hook", named=False, environ={"URL": " u "}).value == "u"
    assert airflow == []
    found = resolve_secret("hook", env="URL", conn_id="hook", named=False, environ={"URL": ""},
                           from_connection=lambda c: c.host)
    assert found.value == "https://hooks.example/x" and airflow == [("hook", False)]
    assert resolve_secret("hook", env="URL", conn_id="missing", named=False, environ={}).value is None


def test_required_and_not_found_names_the_variable_or_the_connection(airflow):
    with pytest.raises(SecretError, match="auth: environment variable TOKEN is not set or empty"):
        resolve_secret("auth", env="TOKEN", required=True, environ={"TOKEN": "  "})
    with pytest.raises(SecretError, match="auth: Airflow connection 'empty' has no password to use as the token"):
        resolve_secret("auth", conn_id="empty", required=True)


def test_the_callers_resolve_through_it(airflow, monkeypatch):
    monkeypatch.setenv("JUDGE_KEY", "j")
    monkeypatch.setenv("HOOK_URL", "https://hooks.example/env")
    monkeypatch.setenv("PD_KEY", " p ")
    monkeypatch.setenv("RETRIEVER_TOKEN", "t")
    assert resolve_api_key(OpenAISettings(api_key_env="JUDGE_KEY", base_url="https://b/v1")) == ("j", "https://b/v1")
    assert resolve_api_key(OpenAISettings(airflow_conn_id="named")) == ("k3y", "https://judge.example/v1")
    assert resolve_webhook_url("HOOK_URL") == "https://hooks.example/env"
    assert resolve_webhook_url("NO_SUCH_VARIABLE", conn_id="hook") == "https://hooks.example/x"
    assert resolve_pagerduty_key("PD_KEY") == "p"
    assert AuthHeader(env="RETRIEVER_TOKEN").resolve()[1].reveal() == "Bearer t"
    assert AuthHeader(conn_id="named").resolve()[1].reveal() == "Bearer k3y"


CALLERS = ["evalops/judges/openai.py", "evalops/tracking.py", "evalops/alerting/notifiers.py",
           "evalops/alerting/channels.py", "evalops/retrievers/auth.py", "evalops/warehouse/config.py",
           "evalops/airflow/hooks.py"]


@pytest.mark.parametrize("path", CALLERS)
def test_callers_read_no_variable_and_import_no_private_reader(path):
    tree = ast.parse((REPO / path).read_text(encoding="utf-8"))
    own = ".".join(Path(path).with_suffix("").parts[:2])  # a private name of its own package is its own
    environ = [n.lineno for n in ast.walk(tree) if isinstance(n, ast.Attribute) and n.attr in ("environ", "getenv")]
    others = [n for n in ast.walk(tree) if isinstance(n, ast.ImportFrom)
              and (n.module or "").startswith("evalops") and not (n.module or "").startswith(own)]
    private = [f"{n.module}.{a.name}" for n in others for a in n.names if a.name.startswith("_")]
    assert not environ and not private, f"{path}: os.environ at lines {environ}, private imports {private}"
