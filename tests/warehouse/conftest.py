"""Warehouse fixtures: every test that takes ``engine`` runs on SQLite and on PostgreSQL.

PostgreSQL runs when ``EVALOPS_TEST_POSTGRES_URL`` names a server (``.ci/run`` sets it; ``tests/conftest.py``
sets it to the local server when one answers at 127.0.0.1:5432). The session
creates its own uniquely named database there and drops it at the end; with the variable set and the
server unreachable the tests fail instead of skipping.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from warehouse_helpers import Seeder, create_pg_database, drop_pg_database, server_url

BACKENDS = ["sqlite", pytest.param("postgresql", marks=pytest.mark.postgres)]


@pytest.fixture(scope="session")
def pg_url() -> Iterator[str]:
    """A migrated PostgreSQL database shared by the session (tables are emptied before each test)."""
    from evalops.warehouse import create_warehouse_engine, upgrade

    url = create_pg_database(server_url())
    engine = create_warehouse_engine(url)
    try:
        upgrade(engine)
        yield url
    finally:
        engine.dispose()
        drop_pg_database(url)


@pytest.fixture(params=BACKENDS)
def backend(request: pytest.FixtureRequest) -> str:
    return request.param


@pytest.fixture
def engine(backend: str, request: pytest.FixtureRequest, tmp_path):
    """A migrated, empty warehouse on the parametrised backend."""
    from sqlalchemy import text

    from evalops.warehouse import create_warehouse_engine, upgrade
    from evalops.warehouse.models import Base

    if backend == "sqlite":
        eng = create_warehouse_engine(f"sqlite:///{tmp_path / 'warehouse.db'}")
        upgrade(eng)
    else:
        eng = create_warehouse_engine(request.getfixturevalue("pg_url"))
        names = ", ".join(t.name for t in Base.metadata.sorted_tables)
        with eng.begin() as conn:
            conn.execute(text(f"TRUNCATE {names} RESTART IDENTITY CASCADE"))
    yield eng
    eng.dispose()


@pytest.fixture
def empty_url(backend: str, tmp_path) -> Iterator[str]:
    """The URL of an empty database (never migrated) on the parametrised backend."""
    if backend == "sqlite":
        yield f"sqlite:///{tmp_path / 'empty.db'}"
        return
    url = create_pg_database(server_url(), prefix="evalops_wh_empty")
    try:
        yield url
    finally:
        drop_pg_database(url)


@pytest.fixture
def seed(engine) -> Seeder:
    return Seeder(engine)
