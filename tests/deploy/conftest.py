"""Fixtures for the deployment tests: throw-away PostgreSQL databases and a real airflow standalone."""

from __future__ import annotations

import os
import uuid
from collections.abc import Callable, Iterator

import pytest

POSTGRES_ENV = "EVALOPS_TEST_POSTGRES_URL"


@pytest.fixture(scope="session")
def postgres_url() -> str:
    """The server named by ``EVALOPS_TEST_POSTGRES_URL``: skip when unset, fail when set but unreachable."""
    url = os.environ.get(POSTGRES_ENV)
    if not url:
        pytest.skip(f"{POSTGRES_ENV} is not set")
    import sqlalchemy as sa

    engine = sa.create_engine(url)
    try:
        with engine.connect() as conn:
            conn.execute(sa.text("SELECT 1"))
    except sa.exc.OperationalError as exc:
        pytest.fail(f"{POSTGRES_ENV}={url} is set but the server is unreachable: {exc}")
    finally:
        engine.dispose()
    return url


@pytest.fixture
def fresh_database(postgres_url: str) -> Iterator[Callable[[str], str]]:
    """Factory: ``fresh_database("meta")`` creates a uniquely named database and returns its URL.

    Every database it created is dropped at teardown (``WITH (FORCE)`` closes leftover connections).
    """
    import sqlalchemy as sa

    admin = sa.create_engine(postgres_url, isolation_level="AUTOCOMMIT")
    created: list[str] = []

    def create(role: str) -> str:
        name = f"evalops_{role}_{uuid.uuid4().hex[:12]}"
        with admin.connect() as conn:
            conn.execute(sa.text(f'CREATE DATABASE "{name}"'))
        created.append(name)
        return sa.make_url(postgres_url).set(database=name).render_as_string(hide_password=False)

    try:
        yield create
    finally:
        with admin.connect() as conn:
            for name in created:
                conn.execute(sa.text(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))
        admin.dispose()
