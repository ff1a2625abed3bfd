"""Where the warehouse lives: env var, Airflow connection, or the project-local SQLite default."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from evalops.errors import ConfigError
from evalops.warehouse import connect, create_warehouse_engine, current_revision, resolve_url, upgrade
from evalops.warehouse.config import connection_url, normalise_url


def test_the_env_var_wins(monkeypatch, tmp_path):
    monkeypatch.setenv("EVALOPS_WAREHOUSE_URL", f"sqlite:///{tmp_path / 'x.db'}")
    resolved = resolve_url()
    assert resolved.source == "env" and resolved.url.endswith("x.db")


def test_the_default_is_a_project_local_sqlite_file(monkeypatch, tmp_path):
    monkeypatch.delenv("EVALOPS_WAREHOUSE_URL", raising=False)
    monkeypatch.delenv("AIRFLOW_CONN_EVALOPS_WAREHOUSE", raising=False)
    monkeypatch.chdir(tmp_path)
    resolved = resolve_url()
    assert resolved.source == "default"
    assert resolved.url == f"sqlite:///{tmp_path / '.evalops' / 'warehouse.db'}"
    engine = connect()
    try:
        upgrade(engine)
        assert current_revision(engine) is not None
    finally:
        engine.dispose()
    assert (tmp_path / ".evalops" / "warehouse.db").is_file()


def test_postgres_urls_get_the_psycopg_driver():
    assert normalise_url("postgresql://u:p@h:5432/db") == "postgresql+psycopg://u:p@h:5432/db"
    assert normalise_url("postgres://u@h/db").startswith("postgresql+psycopg://")
    assert resolve_url("postgresql://u:secret@h/db").masked() == "postgresql+psycopg://u:***@h/db"


@pytest.mark.parametrize("url", ["mysql://u@h/db", "not a url"])
def test_unsupported_or_malformed_urls_are_config_errors(url):
    with pytest.raises(ConfigError):
        normalise_url(url)


def test_airflow_connections_map_to_sqlalchemy_urls():
    class Conn:
        conn_type = "postgres"
        login, password, host, port, schema = "evalops", "s3cret", "db.internal", 5433, "metrics"

    assert connection_url(Conn()) == "postgresql+psycopg://evalops:s3cret@db.internal:5433/metrics"
    Conn.conn_type, Conn.host = "sqlite", "/data/warehouse.db"
    assert connection_url(Conn()) == "sqlite:////data/warehouse.db"
    Conn.host, Conn.schema = "", "/data/from-uri.db"  # how Airflow parses sqlite:////data/from-uri.db
    assert connection_url(Conn()) == "sqlite:////data/from-uri.db"
    Conn.conn_type = "mysql"
    with pytest.raises(ConfigError, match="postgres or sqlite"):
        connection_url(Conn())


def test_the_default_engine_creates_its_folder(tmp_path):
    target = tmp_path / "nested" / "deeper" / "w.db"
    engine = create_warehouse_engine(f"sqlite:///{target}")
    try:
        upgrade(engine)
    finally:
        engine.dispose()
    assert target.is_file()


@pytest.mark.slow
@pytest.mark.airflow
def test_the_airflow_connection_is_used_when_the_env_var_is_absent(tmp_path):
    # A fresh interpreter: importing Airflow is slow and must not leak into this process.
    target = tmp_path / "from-airflow.db"
    env = {
        **os.environ,
        "AIRFLOW_HOME": str(tmp_path / "airflow"),
        "AIRFLOW__CORE__LOAD_EXAMPLES": "False",
        "AIRFLOW_CONN_EVALOPS_WAREHOUSE": f"sqlite:///{target}",
        "PYTHONPATH": str(Path(__file__).resolve().parents[2]),
    }
    env.pop("EVALOPS_WAREHOUSE_URL", None)
    code = "from evalops.warehouse import resolve_url; r = resolve_url(); print(r.source, r.url)"
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=120, check=True)
    assert out.stdout.split() == ["airflow", f"sqlite:///{target}"]


def test_airflow_is_not_imported_without_a_reason(monkeypatch, tmp_path):
    monkeypatch.delenv("EVALOPS_WAREHOUSE_URL", raising=False)
    monkeypatch.delenv("AIRFLOW_CONN_EVALOPS_WAREHOUSE", raising=False)
    monkeypatch.chdir(tmp_path)
    code = (
        "import sys; from evalops.warehouse import resolve_url; r = resolve_url(); "
        "print(r.source, 'airflow' in sys.modules)"
    )
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[2])}
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=60, check=True)
    assert out.stdout.split() == ["default", "False"]
