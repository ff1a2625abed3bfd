"""Fixtures shared by the whole suite."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]


def _shared_data_dir() -> Path:
    return Path(os.environ.get("EVALOPS_SHARED_DATA", REPO.parent / "shared" / "data"))


@pytest.fixture(scope="session")
def shared_data() -> Path:
    """The real IR collections beside the project (``../shared/data``).

    Tests that need them skip on a user's machine without the folder. In CI (``CI`` set) the folder is
    always present, so its absence is a failure, not a skip.
    """
    path = _shared_data_dir()
    if not (path / "scifact").is_dir():
        if os.environ.get("CI"):
            pytest.fail(f"{path} is missing in CI; the real collections must be beside the project")
        pytest.skip(f"real collections not found at {path}")
    return path


@pytest.fixture(scope="session")
def repo_root() -> Path:
    return REPO


@pytest.fixture
def postgres_schema():
    """``(engine, schema)``: a fresh, uniquely named schema on ``EVALOPS_TEST_POSTGRES_URL``, dropped after.

    Skips when the variable is unset; when it is set and the server is down, creating the schema fails
    the test rather than skipping it.
    """
    import uuid

    import sqlalchemy as sa

    url = os.environ.get("EVALOPS_TEST_POSTGRES_URL")
    if not url:
        pytest.skip("EVALOPS_TEST_POSTGRES_URL is not set")
    engine = sa.create_engine(url)
    schema = f"t_{uuid.uuid4().hex[:12]}"
    with engine.begin() as conn:
        conn.execute(sa.text(f'CREATE SCHEMA "{schema}"'))
    try:
        yield engine, schema
    finally:
        with engine.begin() as conn:
            conn.execute(sa.text(f'DROP SCHEMA "{schema}" CASCADE'))
        engine.dispose()
