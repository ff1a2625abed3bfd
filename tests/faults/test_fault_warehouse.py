"""A warehouse that accepts connections and never answers, and one whose statements run too long."""

from __future__ import annotations

import os

import pytest
from tests.faults.servers import BlackHole

from evalops.errors import ConfigError, WarehouseError
from evalops.warehouse import create_warehouse_engine
from evalops.warehouse._db import transaction


@pytest.fixture
def hole():
    h = BlackHole()
    yield h
    h.stop()


def test_a_black_hole_postgres_port_fails_at_the_connect_timeout(hole, monkeypatch):
    monkeypatch.setenv("EVALOPS_WAREHOUSE_CONNECT_TIMEOUT", "1")
    engine = create_warehouse_engine(f"postgresql://evalops@127.0.0.1:{hole.port}/warehouse")
    with pytest.raises(WarehouseError, match="reading failed and was rolled back"):
        with transaction(engine, "reading") as conn:
            conn.exec_driver_sql("SELECT 1")


def test_timeouts_in_the_url_win_over_the_defaults():
    from sqlalchemy.engine import make_url

    from evalops.warehouse.config import _postgres_connect_args

    default = _postgres_connect_args(make_url("postgresql://u@h/db"), {})
    assert default == {"connect_timeout": 10,
                       "options": "-c statement_timeout=600000 -c idle_in_transaction_session_timeout=600000 "
                                  "-c lock_timeout=60000",
                       "keepalives": 1, "keepalives_idle": 30, "keepalives_interval": 10, "keepalives_count": 3,
                       "tcp_user_timeout": 605000}  # the client deadline: the statement timeout + 5 s
    given = _postgres_connect_args(
        make_url("postgresql://u@h/db?connect_timeout=3&keepalives_idle=5&options=-c%20statement_timeout%3D5000"), {})
    assert "connect_timeout" not in given and "keepalives_idle" not in given
    assert given["options"] == ("-c statement_timeout=5000 -c idle_in_transaction_session_timeout=600000 "
                                "-c lock_timeout=60000")
    assert given["tcp_user_timeout"] == 10000


def test_a_bad_timeout_setting_is_a_config_error(monkeypatch):
    monkeypatch.setenv("EVALOPS_WAREHOUSE_STATEMENT_TIMEOUT", "soon")
    with pytest.raises(ConfigError, match="EVALOPS_WAREHOUSE_STATEMENT_TIMEOUT: expected a number of seconds"):
        create_warehouse_engine("postgresql://u@127.0.0.1:1/db")


@pytest.mark.postgres
def test_a_statement_past_the_statement_timeout_is_cancelled(monkeypatch):
    url = os.environ.get("EVALOPS_TEST_POSTGRES_URL")
    if not url:
        pytest.skip("EVALOPS_TEST_POSTGRES_URL is not set")
    monkeypatch.setenv("EVALOPS_WAREHOUSE_STATEMENT_TIMEOUT", "0.3")
    monkeypatch.setenv("EVALOPS_WAREHOUSE_IDLE_TIMEOUT", "0.7")
    engine = create_warehouse_engine(url)
    try:
        with engine.connect() as conn:
            assert conn.exec_driver_sql("SHOW statement_timeout").scalar_one() == "300ms"
            assert conn.exec_driver_sql("SHOW idle_in_transaction_session_timeout").scalar_one() == "700ms"
        with pytest.raises(WarehouseError, match="statement timeout"):
            with transaction(engine, "a long query") as conn:
                conn.exec_driver_sql("SELECT pg_sleep(30)")
    finally:
        engine.dispose()
