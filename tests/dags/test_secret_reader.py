"""One reader for every connection and secret (evalops.util.secrets), one error type: the judge's key, a
retriever's token, the warehouse and the webhook all read an Airflow connection the same way, and a
connection that is named but missing is a SecretError naming it and the variable that defines it."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from evalops.errors import ConfigError
from evalops.util.secrets import ConnectionFields, SecretError, env_secret

REPO = Path(__file__).resolve().parents[2]


def test_a_missing_variable_is_a_secret_error_naming_it():
    with pytest.raises(SecretError, match="auth: environment variable NOPE_TOKEN is not set or empty"):
        env_secret("NOPE_TOKEN", what="auth", environ={"NOPE_TOKEN": ""})
    assert issubclass(SecretError, ConfigError)
    assert env_secret("T", what="auth", environ={"T": "v"}) == "v"


def test_a_connection_s_password_is_not_in_its_repr():
    assert "s3cr3t" not in repr(ConnectionFields("c", "http", password="s3cr3t"))


CODE = """
import json, sys
from evalops.errors import ConfigError
from evalops.judges.openai import OpenAISettings, resolve_api_key
from evalops.retrievers.auth import AuthHeader
from evalops.util.secrets import SecretError
from evalops.warehouse import resolve_url
from evalops.alerting.notifiers import resolve_webhook_url

out = {}
out["judge"] = list(resolve_api_key(OpenAISettings(airflow_conn_id="judge_conn")))
out["retriever"] = AuthHeader(conn_id="judge_conn").resolve()[1].reveal()
out["warehouse"] = [resolve_url().source, resolve_url().url]
out["webhook"] = resolve_webhook_url("NO_SUCH_WEBHOOK_VARIABLE")
errors = {}
for name, call in {
    "judge": lambda: resolve_api_key(OpenAISettings(airflow_conn_id="missing_conn")),
    "retriever": lambda: AuthHeader(conn_id="missing_conn").resolve(),
}.items():
    try:
        call()
    except Exception as exc:
        errors[name] = [type(exc).__name__, str(exc)]
out["errors"] = errors
print(json.dumps(out))
"""


@pytest.mark.airflow
@pytest.mark.slow
def test_every_reader_reads_an_airflow_connection_the_same_way_and_fails_the_same_way(tmp_path):
    env = {k: v for k, v in os.environ.items() if not k.startswith(("EVALOPS_", "AIRFLOW"))}
    env.update({
        "PYTHONPATH": str(REPO),
        "AIRFLOW_HOME": str(tmp_path / "airflow"),
        "AIRFLOW__CORE__LOAD_EXAMPLES": "False",
        "AIRFLOW_CONN_JUDGE_CONN": json.dumps({"conn_type": "http", "host": "https://llm.example.test/v1",
                                               "password": "key-123456"}),
        "AIRFLOW_CONN_EVALOPS_WAREHOUSE": f"sqlite:///{tmp_path / 'wh.db'}",
        "AIRFLOW_CONN_EVALOPS_WEBHOOK": json.dumps({"conn_type": "http", "host": "https://hooks.example.test",
                                                    "password": "T0/B0/XYZ"}),
    })
    done = subprocess.run([sys.executable, "-c", CODE], env=env, cwd=tmp_path, capture_output=True, text=True,
                          timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    out = json.loads(done.stdout.strip().splitlines()[-1])
    assert out["judge"] == ["key-123456", "https://llm.example.test/v1"]
    assert out["retriever"] == "Bearer key-123456"
    assert out["warehouse"] == ["airflow", f"sqlite:///{tmp_path / 'wh.db'}"]
    assert out["webhook"] == "https://hooks.example.test/T0/B0/XYZ"
    for name in ("judge", "retriever"):
        kind, message = out["errors"][name]
        assert kind == "SecretError", out["errors"]
        assert "'missing_conn' is not defined" in message and "AIRFLOW_CONN_MISSING_CONN" in message, message
