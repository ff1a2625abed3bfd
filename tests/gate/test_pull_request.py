"""``evalops gate --pull-request``: compares with the shared warehouse's baselines and writes nothing there.

Day 1 (a normal ``evalops run`` and ``evalops promote``) leaves a promoted baseline, handbook-search 1.0, in
the shared warehouse. Then two pull-request gates run on the same day with different run ids, each deploying
the planted regression (2.0-truncated): each fails with exit 4 and writes its JUnit XML and its markdown
summary, and the shared warehouse is unchanged, every row of every table (and, on SQLite, the file's bytes).
A webhook configured to a local server receives nothing. The same on PostgreSQL when a server answers.
"""

from __future__ import annotations

import hashlib
import json
import os
import uuid
import xml.etree.ElementTree as ET

import pytest
from click.testing import CliRunner

from evalops.cli import main
from evalops.exitcodes import ExitCode
from tests.alerting.hook_server import hook_server, url_of
from tests.cli.test_gate import DAY1, DAY2, _registry, project_env
from tests.warehouse.warehouse_helpers import scratch_pg_database

pytestmark = pytest.mark.slow

_POSTGRES = os.environ.get("EVALOPS_TEST_POSTGRES_URL")  # read at import, as the pipeline's PostgreSQL tests do


def _invoke(args, env):
    return CliRunner().invoke(main, args, env=env, catch_exceptions=False)


def _promoted_project(home, url=None):
    """A project in ``home`` whose shared warehouse (``url``, default SQLite in ``home``) holds day 1's run of
    1.0, promoted; returns the environment of day 2, which also deploys the planted regression."""
    env = project_env(home)
    if url is not None:
        env["EVALOPS_WAREHOUSE_URL"] = url
    first = _invoke(["run", "--date", DAY1], env)
    assert first.exit_code == 0, first.output
    promoted = _invoke(["promote", "handbook-search", "1.0", "--reason", "day 1", "--by", "tests"], env)
    assert promoted.exit_code == 0, promoted.output
    return {**env, "EVALOPS_REGISTRY": _registry(home / "day2.yaml", {"1.0", "2.0-truncated"})}


def dump(url: str) -> dict[str, list[tuple]]:
    """Every row of every warehouse table (and the schema revision), ordered by primary key."""
    import sqlalchemy as sa

    from evalops.pipeline.store import dispose_engines
    from evalops.warehouse.models import Base

    dispose_engines()  # the pipeline's pooled connections closed: SQLite's WAL is checkpointed into the file
    engine = sa.create_engine(url.replace("postgresql://", "postgresql+psycopg://"))
    out = {}
    try:
        with engine.connect() as conn:
            existing = set(sa.inspect(conn).get_table_names())
            for name, table in sorted(Base.metadata.tables.items()):
                assert name in existing, name
                out[name] = [tuple(r) for r in conn.execute(
                    sa.select(table).order_by(*table.primary_key.columns))]
            out["evalops_alembic_version"] = [tuple(r) for r in conn.execute(
                sa.text("SELECT version_num FROM evalops_alembic_version"))]
    finally:
        engine.dispose()
    return out


def _file_sha(path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _pull_request_gate(env, home, tmp_path, run_id):
    """One pull-request gate of day 2 with ``run_id``; returns (result, JSON output, JUnit root, summary)."""
    junit, summary, out = (tmp_path / f"{run_id}.xml", tmp_path / f"{run_id}.md", tmp_path / f"{run_id}.json")
    result = _invoke(["gate", "--pull-request", "--run-id", run_id, "--date", DAY2, "--junit-xml", str(junit),
                      "--summary-md", str(summary), "--format", "json", "-o", str(out)], env)
    return result, json.loads(out.read_text()), ET.parse(junit).getroot(), summary.read_text()


def _check_two_gates(env, home, tmp_path):
    """Two pull-request gates the same day: each fails on the planted regression, with its own run key,
    folder, JUnit XML and summary."""
    suites = set()
    for run_id in ("gh-pr7-1001", "gh-pr8-1002"):
        result, payload, junit, summary = _pull_request_gate(env, home, tmp_path, run_id)
        assert result.exit_code == ExitCode.REGRESSION == 4, result.output
        assert payload["pull_request"]["run_id"] == run_id
        assert payload["pull_request"]["copied"]["baselines"] == 1 and payload["pull_request"]["copied"]["query_scores"] > 0
        assert payload["gate"]["exit_code"] == 4
        failing = [c for c in payload["gate"]["cases"] if c["outcome"] == "failure"]
        assert [(c["version"], c["measure"], c["kind"]) for c in failing] == [("2.0-truncated", "nDCG@10", "regression")]
        assert failing[0]["baseline_version"] == "1.0" and failing[0]["delta"] < 0
        (suite,) = junit.findall("testsuite")
        suites.add(suite.get("name"))
        assert suite.get("name") == f"evalops cli/pr__{run_id}"
        failures = [case for case in suite.findall("testcase") if case.find("failure") is not None]
        assert [(c.get("classname"), c.get("name")) for c in failures] == [("handbook-search@2.0-truncated", "nDCG@10")]
        assert summary.startswith("### evalops gate 2024-06-01: FAILED (exit 4, regression)")
        rows = [line for line in summary.splitlines() if line.startswith("| failure ")]
        assert len(rows) == 1 and "2.0-truncated" in rows[0] and "nDCG@10" in rows[0] and "→" in rows[0]
        assert len(summary.splitlines()) < 20 and max(len(line) for line in summary.splitlines()) < 400
        folder = home / ".evalops" / "pr" / run_id
        assert payload["report"].startswith(str(folder)) and (folder / "warehouse.db").is_file()
    assert len(suites) == 2


def test_two_pull_request_gates_the_same_day_leave_the_sqlite_warehouse_unchanged(tmp_path):
    home = tmp_path / "project"
    home.mkdir()
    env = _promoted_project(home)
    url = env["EVALOPS_WAREHOUSE_URL"]
    before, before_bytes = dump(url), _file_sha(home / "warehouse.db")
    assert before["baselines"] and before["eval_runs"] and not before["ab_tests"]
    _check_two_gates(env, home, tmp_path)
    assert dump(url) == before
    assert _file_sha(home / "warehouse.db") == before_bytes
    assert not (home / ".evalops" / "reports" / "cli_pr__gh-pr7-1001").exists()  # production reports untouched


@pytest.fixture
def postgres_url():
    if not _POSTGRES:
        pytest.skip("EVALOPS_TEST_POSTGRES_URL is not set")
    with scratch_pg_database(_POSTGRES, "evalops_pr") as url:
        yield url


@pytest.fixture
def read_only_url(postgres_url):
    """``postgres_url`` through a role that may only read (what docs/deployment.md tells CI jobs to use)."""
    from sqlalchemy import create_engine, text
    from sqlalchemy.engine import make_url

    role = f"evalops_ci_{uuid.uuid4().hex[:8]}"
    owner = create_engine(postgres_url, isolation_level="AUTOCOMMIT")
    database = make_url(postgres_url).database
    with owner.connect() as conn:
        conn.execute(text(f"CREATE ROLE {role} LOGIN"))
        conn.execute(text(f'GRANT CONNECT ON DATABASE "{database}" TO {role}'))
        conn.execute(text(f"GRANT USAGE ON SCHEMA public TO {role}"))
    try:
        yield role, make_url(postgres_url).set(username=role, password=None).render_as_string(hide_password=False)
    finally:
        from evalops.pipeline.store import dispose_engines

        dispose_engines()
        with owner.connect() as conn:
            conn.execute(text(f"REVOKE ALL ON ALL TABLES IN SCHEMA public FROM {role}"))
            conn.execute(text(f"REVOKE ALL ON SCHEMA public FROM {role}"))
            conn.execute(text(f'REVOKE ALL ON DATABASE "{database}" FROM {role}'))
            conn.execute(text(f"DROP ROLE {role}"))
        owner.dispose()


@pytest.mark.postgres
def test_two_pull_request_gates_the_same_day_leave_the_postgres_warehouse_unchanged(tmp_path, postgres_url,
                                                                                     read_only_url):
    """The day-1 run and promotion write through the owner; the pull-request gates read through a role
    granted SELECT only, so any write would fail them, and the dump shows none."""
    from sqlalchemy import create_engine, text

    home = tmp_path / "project"
    home.mkdir()
    env = _promoted_project(home, postgres_url)
    role, url = read_only_url
    owner = create_engine(postgres_url)
    with owner.begin() as conn:
        conn.execute(text(f"GRANT SELECT ON ALL TABLES IN SCHEMA public TO {role}"))
    owner.dispose()
    before = dump(postgres_url)
    assert before["baselines"] and before["query_scores"]
    _check_two_gates({**env, "EVALOPS_WAREHOUSE_URL": url}, home, tmp_path)
    assert dump(postgres_url) == before


def test_a_pull_request_gate_sends_no_alert(tmp_path):
    """The webhook of the settings (a local server) receives nothing from a pull-request gate that raises a
    regression alert; the same gate without --pull-request sends it (the server and the alert are real)."""
    home = tmp_path / "project"
    home.mkdir()
    env = _promoted_project(home)
    with hook_server() as server:
        hooked = {**env, "EVALOPS_WEBHOOK_URL": url_of(server)}
        result, payload, _, _ = _pull_request_gate(hooked, home, tmp_path, "no-alert")
        assert result.exit_code == ExitCode.REGRESSION, result.output
        assert [a["kind"] for a in payload["alerts"]] == ["regression"]  # raised, in its own warehouse only
        assert server.received == []
        normal = _invoke(["gate", "--date", DAY2, "--junit-xml", str(tmp_path / "normal.xml")], hooked)
        assert normal.exit_code == ExitCode.REGRESSION, normal.output
        assert len(server.received) == 1


def test_a_fork_s_pull_request_without_the_warehouse_fails_closed(tmp_path):
    """EVALOPS_WAREHOUSE_URL set but empty (a fork cannot read the secret): exit 3 naming it, with the JUnit
    case and the summary saying why; --allow-local runs on the project's own warehouse instead."""
    home = tmp_path / "project"
    home.mkdir()
    env = {**project_env(home), "EVALOPS_WAREHOUSE_URL": ""}
    junit, summary = tmp_path / "junit.xml", tmp_path / "summary.md"
    args = ["gate", "--pull-request", "--date", DAY2, "--junit-xml", str(junit), "--summary-md", str(summary)]
    refused = _invoke(args, env)
    assert refused.exit_code == ExitCode.BAD_INPUT == 3, refused.output
    assert "EVALOPS_WAREHOUSE_URL" in refused.output and "--allow-local" in refused.output
    assert "FAILED (exit 3, bad_input)" in summary.read_text() and "EVALOPS_WAREHOUSE_URL" in summary.read_text()
    assert ET.parse(junit).getroot().find("testsuite/testcase/error") is not None
    assert not (home / ".evalops" / "pr").exists()
    local = _invoke([*args, "--allow-local"], env)
    assert local.exit_code == 0, local.output  # no local baseline: nothing compared, and it says so
    assert "no baseline in the shared warehouse yet" in local.output


@pytest.mark.parametrize("environ, expected", [
    ({"GITHUB_RUN_ID": "987", "GITHUB_REF": "refs/pull/42/merge", "GITHUB_RUN_ATTEMPT": "1"}, "gh-pr42-987"),
    ({"GITHUB_RUN_ID": "987", "GITHUB_REF": "refs/heads/main", "GITHUB_RUN_ATTEMPT": "2"}, "gh-987.2"),
    ({"CI_PIPELINE_ID": "55", "CI_MERGE_REQUEST_IID": "9"}, "gl-mr9-55"),
    ({"CI_PIPELINE_ID": "55"}, "gl-55"),
])
def test_the_run_id_comes_from_the_ci(environ, expected):
    from evalops.pipeline.pullrequest import pull_request_run_id

    assert pull_request_run_id(None, environ) == expected
    assert pull_request_run_id("given", environ) == "given"


def test_outside_ci_each_pull_request_run_has_a_fresh_id():
    from evalops.pipeline.pullrequest import pull_request_run_id

    first, second = pull_request_run_id(None, {}), pull_request_run_id(None, {})
    assert first != second and first.startswith("local-")


@pytest.mark.parametrize("bad", ["", "../x", "a b", "-x", "x" * 101])
def test_a_bad_run_id_is_a_usage_error(bad):
    result = CliRunner().invoke(main, ["gate", "--pull-request", "--run-id", bad])
    assert result.exit_code == ExitCode.USAGE, result.output
    assert "--run-id" in result.output
