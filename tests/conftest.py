"""Fixtures shared by the whole suite."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]

POSTGRES_VAR = "EVALOPS_TEST_POSTGRES_URL"
LOCAL_POSTGRES = "postgresql+psycopg://postgres@127.0.0.1:5432/test"


def _postgres_answers(url: str, timeout: float = 2.0) -> str | None:
    """None when the server at ``url`` accepts a connection within ``timeout`` seconds, else why not."""
    import socket

    try:
        socket.create_connection(("127.0.0.1", 5432), timeout=timeout).close()
    except OSError as exc:
        return f"nothing answers at 127.0.0.1:5432 ({exc.strerror or exc})"
    try:
        import psycopg

        psycopg.connect(url.replace("+psycopg", ""), connect_timeout=max(1, round(timeout))).close()
    except Exception as exc:  # the driver's error says why (no database 'test', authentication, ...)
        return f"127.0.0.1:5432 refused the connection ({str(exc).strip().splitlines()[0]})"
    return None


# `make test` (the README's command) runs the PostgreSQL tests whenever a local server answers, not only
# under .ci/run, which sets the variable; a machine without PostgreSQL skips them and the suite still passes.
_POSTGRES_NOTE: str
if os.environ.get(POSTGRES_VAR):
    _POSTGRES_NOTE = f"PostgreSQL tests: run against {POSTGRES_VAR} (set in the environment)"
else:
    _why_not = _postgres_answers(LOCAL_POSTGRES)
    if _why_not is None:
        os.environ[POSTGRES_VAR] = LOCAL_POSTGRES
        _POSTGRES_NOTE = (f"PostgreSQL tests: run against {LOCAL_POSTGRES} (it answered; set {POSTGRES_VAR} to "
                          "use another server)")
    else:
        _POSTGRES_NOTE = (f"PostgreSQL tests: SKIPPED, {_why_not}; to include them, start PostgreSQL with a "
                          f"database 'test' at 127.0.0.1:5432, or set {POSTGRES_VAR}=postgresql+psycopg://USER@HOST:PORT/DB")


def pytest_sessionstart(session):
    """Say at the start of the session (with -q too) which database-backed tests run, or why they are skipped."""
    reporter = session.config.pluginmanager.get_plugin("terminalreporter")
    if reporter is not None:
        reporter.write_line(_POSTGRES_NOTE)


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


# every field of a comparison that has no default, as an undecided comparison of no queries: a test names
# only the fields it is about (``comparison_of(decision="regression", delta=-0.1)``)
_BLANK_COMPARISON = {
    "measure": "nDCG@10", "baseline_name": "baseline", "candidate_name": "candidate", "n": 0,
    "baseline_mean": None, "candidate_mean": None, "delta": None, "delta_ci_low": None, "delta_ci_high": None,
    "relative_change": None, "test": "", "test_method": "", "statistic": None, "p_value": None,
    "p_adjusted": None, "effect_size_dz": None, "effect_size_ci": None, "effect_size_gz": None, "wins": 0,
    "ties": 0, "losses": 0, "decision": "inconclusive", "reasons": [], "worst_queries": [],
}


def comparison_of(**fields):
    """A hand-made :class:`evalops.stats.Comparison`: the named fields (JSON values, public names allowed)
    over an undecided comparison of no queries."""
    from evalops.stats import Comparison

    return Comparison.from_record({**_BLANK_COMPARISON, **fields})
