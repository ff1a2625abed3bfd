"""deploy/postgres/init-databases.sh, run for real against the test server with unique names.

The postgres image runs the same script once, over its local socket, when the data volume is new.
"""

from __future__ import annotations

import os
import secrets
import shutil
import subprocess
import uuid
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
SCRIPT = REPO / "deploy" / "postgres" / "init-databases.sh"


@pytest.mark.postgres
def test_init_script_creates_two_databases_each_owned_by_its_own_role(postgres_url):
    import sqlalchemy as sa

    if shutil.which("psql") is None:
        pytest.fail("psql is required to run the init script (it is what the postgres image uses)")
    url = sa.make_url(postgres_url)
    tag = uuid.uuid4().hex[:10]
    names = {
        "AIRFLOW_DB_NAME": f"evalops_init_af_{tag}", "AIRFLOW_DB_USER": f"evalops_init_afu_{tag}",
        "WAREHOUSE_DB_NAME": f"evalops_init_wh_{tag}", "WAREHOUSE_DB_USER": f"evalops_init_whu_{tag}",
    }
    env = {
        **os.environ, **names,
        "POSTGRES_USER": url.username or "postgres",
        "PGHOST": url.host or "127.0.0.1", "PGPORT": str(url.port or 5432),
        "AIRFLOW_DB_PASSWORD": "it's quoted",  # a quote must not break the SQL
        "WAREHOUSE_DB_PASSWORD": secrets.token_hex(12),
    }
    admin = sa.create_engine(postgres_url, isolation_level="AUTOCOMMIT")
    try:
        result = subprocess.run(["bash", str(SCRIPT)], env=env, capture_output=True, text=True, timeout=60)
        assert result.returncode == 0, result.stderr
        with admin.connect() as conn:
            owners = dict(conn.execute(
                sa.text("SELECT datname, pg_get_userbyid(datdba) FROM pg_database WHERE datname LIKE :p"),
                {"p": f"evalops_init_%_{tag}"},
            ).all())
            public_connect = conn.execute(
                sa.text("SELECT datname FROM pg_database WHERE datname LIKE :p "
                        "AND has_database_privilege('public', oid, 'CONNECT')"),
                {"p": f"evalops_init_%_{tag}"},
            ).scalars().all()
        assert owners == {names["AIRFLOW_DB_NAME"]: names["AIRFLOW_DB_USER"],
                          names["WAREHOUSE_DB_NAME"]: names["WAREHOUSE_DB_USER"]}
        assert public_connect == [], "other roles must not connect to either database"
        # The warehouse owner can create its schema (the evalops migrations need that).
        owner_url = url.set(database=names["WAREHOUSE_DB_NAME"], username=names["WAREHOUSE_DB_USER"])
        owner = sa.create_engine(owner_url)
        try:
            with owner.begin() as conn:
                conn.execute(sa.text("CREATE TABLE probe (id integer PRIMARY KEY)"))
        finally:
            owner.dispose()
    finally:
        with admin.connect() as conn:
            for db in (names["AIRFLOW_DB_NAME"], names["WAREHOUSE_DB_NAME"]):
                conn.execute(sa.text(f'DROP DATABASE IF EXISTS "{db}" WITH (FORCE)'))
            for role in (names["AIRFLOW_DB_USER"], names["WAREHOUSE_DB_USER"]):
                conn.execute(sa.text(f'DROP ROLE IF EXISTS "{role}"'))
        admin.dispose()


def test_init_script_refuses_to_run_without_the_passwords(tmp_path):
    env = {k: v for k, v in os.environ.items() if not k.endswith("_DB_PASSWORD")}
    env["PATH"] = f"{tmp_path}:{env.get('PATH', '')}"
    (tmp_path / "psql").write_text("#!/bin/sh\necho psql must not be reached >&2\nexit 3\n")
    (tmp_path / "psql").chmod(0o755)
    result = subprocess.run(["bash", str(SCRIPT)], env=env, capture_output=True, text=True, timeout=30)
    assert result.returncode != 0
    assert "AIRFLOW_DB_PASSWORD" in result.stderr and "psql must not be reached" not in result.stderr
