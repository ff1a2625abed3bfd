"""The pipeline on PostgreSQL (what the scheduler deployment uses): two days, promotion, the regression.

Skips without ``EVALOPS_TEST_POSTGRES_URL``; with it set, an unreachable server fails the test. The test
creates its own database and drops it afterwards.
"""

from __future__ import annotations

import os

import pytest
from tests.warehouse.warehouse_helpers import scratch_pg_database

from tests.dags.conftest import DAGS, make_home

pytestmark = [pytest.mark.postgres, pytest.mark.slow]


@pytest.fixture
def postgres_url():
    if not _TEST_URL:
        pytest.skip("EVALOPS_TEST_POSTGRES_URL is not set")
    with scratch_pg_database(_TEST_URL, "evalops_dag") as url:
        yield url


# Read at import: this folder's autouse fixture removes EVALOPS_* variables before each test runs.
_TEST_URL = os.environ.get("EVALOPS_TEST_POSTGRES_URL")


def test_two_days_on_postgres(tmp_path, postgres_url):
    from evalops.config import load_config
    from evalops.pipeline import RunContext, promote, run_local
    from evalops.pipeline.demo import plan_demo
    from evalops.pipeline.store import engine_for, warehouse_counts
    from evalops.warehouse import list_alerts

    env = {**make_home(tmp_path, log_start="2024-05-30", log_days=2), "EVALOPS_WAREHOUSE_URL": postgres_url}
    cfg = load_config(tmp_path, environ=env)
    overlay = plan_demo(cfg, dags=DAGS).overlay
    run_local(cfg, RunContext.for_day("2024-05-31"))
    promote(cfg, retriever="handbook-search", version="1.0", reason="day 1", promoted_by="tests")
    day2 = load_config(tmp_path, environ={**env, "EVALOPS_RETRIEVERS_OVERLAY": str(overlay)})
    result = run_local(day2, RunContext.for_day("2024-06-01"))
    counts = warehouse_counts(day2)
    run_local(day2, RunContext.for_day("2024-06-01"))  # a re-run writes nothing new
    assert warehouse_counts(day2) == counts
    assert [a["title"].split(" on ")[0] for a in result["alerts"]] == ["Regression: handbook-search 2.0-truncated"]
    alerts = list_alerts(engine_for(day2))
    assert list(alerts["kind"]) == ["regression"] and list(alerts["delivery_status"]) == ["delivered"]
    assert engine_for(day2).dialect.name == "postgresql"
