"""The real scheduler end to end: airflow standalone on PostgreSQL, an asset event over REST, a clean stop.

``dag.test()`` proves none of this: the schedule, the asset trigger, the executor and the metadata database
only meet in a running scheduler.
"""

from __future__ import annotations

import json
import os
import signal
import time
import uuid
import warnings
from collections.abc import Callable, Iterator
from pathlib import Path

import subprocess
import sys

import pytest
from standalone_harness import COMPONENTS, HOSTNAME_ENV, AirflowStandalone, Component, machine_speed_factor

# The waits share a budget: BUDGET_S on an idle 2-core machine, times the machine's measured slowness right
# now (machine_speed_factor), so a loaded machine gets proportionally longer and a slow step still fails
# with the Airflow logs in its message. The hard timeout is only a watchdog for a real hang.
BUDGET_S = 270
WATCHDOG_S = 2400
pytestmark = [pytest.mark.scheduler, pytest.mark.postgres, pytest.mark.slow, pytest.mark.timeout(WATCHDOG_S)]
CPU_BURNERS = 2  # the tests run beside this many CPU-bound processes, as on a busy CI machine

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]
FIXTURE_DAGS = HERE / "dags"
KNOWLEDGE_BASE = "knowledge-base"
EVAL_DAG = "retrieval_eval"
CONSUMER_DAG = "promote_on_results"
SHARD_SIZE = 40  # small enough that the sample gold set is scored as several mapped shards


def _with_driver(url: str, driver: str) -> str:
    import sqlalchemy as sa

    return sa.make_url(url).set(drivername=f"postgresql+{driver}").render_as_string(hide_password=False)


@pytest.fixture
def cpu_burners() -> Iterator[None]:
    """Two processes that keep a core each busy for the whole test (stopped by their own handles)."""
    burners = [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(CPU_BURNERS)]
    try:
        yield
    finally:
        for p in burners:
            p.kill()
            p.wait(timeout=30)


@pytest.fixture
def speed(cpu_burners) -> float:
    """The slowness factor of the machine under the burners' load (>= 1)."""
    return machine_speed_factor()


@pytest.fixture
def standalone(tmp_path: Path, fresh_database: Callable[[str], str], speed: float
               ) -> Iterator[Callable[..., AirflowStandalone]]:
    """Factory that starts a healthy standalone on a fresh metadata database; always stopped at teardown.

    Teardown fails the test if any process of that standalone survives SIGINT, SIGTERM and SIGKILL.
    """
    started: list[AirflowStandalone] = []
    # Waits end here, leaving the rest of the hard timeout for a stop that may need all three signals.
    deadline = time.monotonic() + BUDGET_S * speed

    def start(*, dags_folder: Path, env: dict[str, str],
              components: Callable[[AirflowStandalone], list[Component]] | None = None,
              health: tuple[str, ...] = COMPONENTS, metadata: str | None = None) -> AirflowStandalone:
        """``components`` (given the harness, for its home and ports) replaces standalone with those
        processes, started after ``airflow db migrate``."""
        metadata = metadata or fresh_database("airflow")
        home = tmp_path / f"airflow_home_{len(started)}"
        home.mkdir()
        airflow = AirflowStandalone(
            home=home, dags_folder=dags_folder, env=env, health=health, speed=speed,
            metadata_url=_with_driver(metadata, "psycopg"),
            metadata_async_url=_with_driver(metadata, "psycopg_async"),
        )
        airflow.deadline = deadline
        if components is not None:
            airflow.components = tuple(components(airflow))
            airflow.initialize(timeout=max(1.0, deadline - time.monotonic()))
        started.append(airflow)  # registered before start(): a failed start-up is still torn down
        airflow.start()
        airflow.wait_healthy(timeout=150 * speed)
        return airflow

    try:
        yield start
    finally:
        survivors = {a.home: a.stop() for a in started}
        leftover = {str(home): pids for home, pids in survivors.items() if pids}
        assert not leftover, f"airflow processes survived SIGINT/SIGTERM/SIGKILL: {leftover}"
        for airflow in started:
            if airflow.stopped_by not in (None, signal.SIGINT):
                # Seen with Airflow 3.3.2 here: now and then the dag-processor, or the scheduler's idle
                # LocalExecutor workers, outlive SIGINT and SIGTERM. Not a failure: nothing is left behind.
                warnings.warn(f"airflow standalone needed {airflow.stopped_by.name}; still running before "
                              f"each escalation: {airflow.escalated}", stacklevel=1)


def _trigger_by_knowledge_base_event(airflow: AirflowStandalone, dag_id: str, *, timeout: float,
                                     speed: float = 1.0) -> dict:
    """Unpause ``dag_id``, post a ``knowledge-base`` event over REST, and return the successful run it caused.

    Unpausing also creates the latest daily run; it is marked failed before the event is posted, so the
    asset-triggered run never waits behind it (``max_active_runs=1``)."""
    dag = airflow.wait_for_dag(dag_id, timeout=90 * speed)
    assert dag["is_paused"], "DAGs must start paused so that a deployment never runs before it is enabled"
    airflow.unpause(dag_id)
    airflow.cancel_scheduled_run(dag_id, timeout=30 * speed)

    marker = uuid.uuid4().hex
    event = airflow.post_asset_event(KNOWLEDGE_BASE, extra={"snapshot": marker})
    assert event["extra"]["snapshot"] == marker

    run = airflow.wait_for_run(dag_id, run_type="asset_triggered", timeout=timeout * speed)
    assert run["state"] == "success", f"{airflow.run_summary(dag_id)}\n{airflow.diagnostics()}"
    events = airflow.triggering_events(dag_id, run["dag_run_id"])
    assert [e["extra"].get("snapshot") for e in events] == [marker], "the run was not caused by our event"
    run["marker"] = marker
    return run


def test_harness_fixture_dag_runs_on_a_knowledge_base_event(standalone, fresh_database, speed):
    import sqlalchemy as sa

    warehouse = fresh_database("warehouse")
    airflow = standalone(dags_folder=FIXTURE_DAGS, env={"EVALOPS_WAREHOUSE_URL": warehouse})
    run = _trigger_by_knowledge_base_event(airflow, "evalops_deploy_probe", timeout=120, speed=speed)

    engine = sa.create_engine(warehouse)
    try:
        with engine.connect() as conn:
            rows = conn.execute(
                sa.text("SELECT run_type, event_extras FROM deploy_probe_runs WHERE run_id = :run_id"),
                {"run_id": run["dag_run_id"]},
            ).all()
    finally:
        engine.dispose()
    # Unpausing also starts the latest daily run (catchup=False keeps only that one); only ours matters.
    assert [r.run_type for r in rows] == ["asset_triggered"]
    assert [extra["snapshot"] for extra in json.loads(rows[0].event_extras)] == [
        e["extra"]["snapshot"] for e in airflow.triggering_events("evalops_deploy_probe", run["dag_run_id"])
    ]


def test_knowledge_base_event_runs_the_evaluation_dag_into_the_postgres_warehouse(
        standalone, fresh_database, tmp_path, speed):
    import sqlalchemy as sa

    warehouse = fresh_database("warehouse")
    airflow = standalone(dags_folder=REPO / "dags", env={
        "EVALOPS_HOME": str(REPO),
        "EVALOPS_WAREHOUSE_URL": warehouse,
        "EVALOPS_REPORT_DIR": str(tmp_path / "reports"),
        "EVALOPS_WORK_DIR": str(tmp_path / "work"),
        # No production logs: a developer's `make demo` logs must not change what this test scores.
        "EVALOPS_QUERY_LOGS": str(tmp_path / "no-query-logs"),
        "EVALOPS_SHARD_SIZE": str(SHARD_SIZE),
    })
    consumer = airflow.wait_for_dag(CONSUMER_DAG, timeout=90 * speed)
    assert consumer["is_paused"]
    airflow.unpause(CONSUMER_DAG)  # scheduled on the results asset only: unpausing starts nothing
    run = _trigger_by_knowledge_base_event(airflow, EVAL_DAG, timeout=240, speed=speed)
    run_id = run["dag_run_id"]

    engine = sa.create_engine(warehouse)
    try:
        with engine.connect() as conn:
            eval_runs = conn.execute(sa.text(
                "SELECT r.retriever, r.version, r.dataset, r.status, r.n_queries, r.contracts, "
                "       (SELECT count(*) FROM query_scores s WHERE s.run_id = r.id) AS scores, "
                "       (SELECT count(*) FROM run_aggregates a WHERE a.run_id = r.id) AS aggregates "
                "FROM eval_runs r WHERE r.dag_id = :dag AND r.dag_run_id = :run"),
                {"dag": EVAL_DAG, "run": run_id}).all()
    finally:
        engine.dispose()
    gold = [r for r in eval_runs if r.dataset == "gold"]
    assert gold, f"no gold-set evaluation of run {run_id} in the warehouse: {eval_runs}"
    for row in eval_runs:
        assert row.status == "succeeded" and row.n_queries > 0, row
        assert row.scores > 0 and row.aggregates > 0, f"{row.retriever} {row.version}: no per-query scores stored"

    # Scoring fanned out over mapped shards on the real executor, as Celery or Kubernetes would spread it.
    shards = [ti for ti in airflow.task_instances(EVAL_DAG, run_id) if ti["task_id"] == "score"]
    expected = sum(-(-r.n_queries // SHARD_SIZE) for r in gold)
    assert len(shards) >= expected > len(gold), [ti["map_index"] for ti in shards]

    # The triggering event's extra is recorded with each warehouse run.
    for row in eval_runs:
        trigger = row.contracts["trigger"]
        assert trigger["type"] == "asset", trigger
        assert [e["extra"]["snapshot"] for e in trigger["asset_events"]] == [run["marker"]], trigger

    # publish_report's results asset starts the consumer; with no baseline yet, nothing is all clear.
    promoted = airflow.wait_for_run(CONSUMER_DAG, run_type="asset_triggered", timeout=120 * speed)
    assert promoted["state"] == "success", airflow.run_summary(CONSUMER_DAG)
    sources = airflow.triggering_events(CONSUMER_DAG, promoted["dag_run_id"])
    assert [(e["source_dag_id"], e["source_run_id"]) for e in sources] == [(EVAL_DAG, run_id)]
    assert sources[0]["extra"]["run"]["run_id"] == run_id and sources[0]["extra"]["schema"] == 1
    states = {ti["task_id"]: ti["state"] for ti in airflow.task_instances(CONSUMER_DAG, promoted["dag_run_id"])}
    assert states["pick_candidates"] == "skipped" and states["promote"] == "skipped", states

    report = airflow.request(
        "GET", f"/api/v2/dags/{EVAL_DAG}/dagRuns/{run_id}/taskInstances/publish_report/xcomEntries/return_value",
        params={"deserialize": "true"}).json()["value"]
    assert Path(report).is_file() and Path(report).is_relative_to(tmp_path / "reports"), report

    # The dashboard plugin is mounted under the api-server: 401 without a token, 200 (this run) with one.
    import httpx

    assert httpx.get(f"{airflow.base_url}/evalops/", timeout=30).status_code == 401
    page = airflow.request("GET", "/evalops/")
    assert page.status_code == 200 and "handbook-search" in page.text


# -- the CeleryExecutor: two workers on the machine's Redis -----------------------------------------------

REDIS_URL = "redis://127.0.0.1:6379/13"  # a database number of this test's own, flushed when it starts
CELERY_WORKERS = ("worker-a", "worker-b")
CELERY_DAY = "2024-06-01"
CELERY_SHARD_SIZE = 20  # the 86 gold queries as 5 shards, more than the two workers run at once
CELERY_HEALTH = ("metadatabase", "scheduler", "dag_processor")  # no triggerer: nothing here defers


def _celery_components(airflow: AirflowStandalone) -> list[Component]:
    """Scheduler, dag-processor and api-server as standalone runs them, and two Celery workers with one
    slot each, their own node names, pid files and task-instance hostnames (``component_hostname``)."""
    workers = [
        Component(name, ("airflow", "celery", "worker", "--celery-hostname", f"{name}@%h", "--concurrency", "1",
                         "--pid", str(airflow.home / f"{name}.pid"), "--skip-serve-logs",
                         "--without-gossip", "--without-mingle"),
                  env={HOSTNAME_ENV: name})
        for name in CELERY_WORKERS
    ]
    return [Component("scheduler", ("airflow", "scheduler")),
            Component("dag-processor", ("airflow", "dag-processor")),
            Component("api-server", ("airflow", "api-server")), *workers]


def _flushed_redis(url: str) -> str:
    """Empty the broker database, so no message of an earlier run reaches these workers."""
    import redis

    client = redis.Redis.from_url(url, socket_timeout=30)
    try:
        client.flushdb()
    except redis.exceptions.ConnectionError as exc:
        pytest.fail(f"the Celery test needs Redis at {url}: {exc}")
    finally:
        client.close()
    return url


def _stored_results(url: str, where: str, params: dict) -> dict[str, dict]:
    """Every stored number of the runs selected by ``where``: (status, queries) per (retriever, version,
    dataset), the aggregates (n, mean, interval) per measure too, and the per-query values per query too."""
    import sqlalchemy as sa

    engine = sa.create_engine(url)
    try:
        with engine.connect() as conn:
            status = conn.execute(sa.text(f"SELECT retriever, version, dataset, status, n_queries FROM eval_runs r "
                                          f"WHERE {where}"), params).all()
            aggregates = conn.execute(sa.text(
                "SELECT r.retriever, r.version, r.dataset, m.name, a.n, a.mean, a.ci_low, a.ci_high, a.ci_level, "
                "       a.ci_method "
                "FROM run_aggregates a JOIN eval_runs r ON r.id = a.run_id JOIN measures m ON m.id = a.measure_id "
                f"WHERE {where}"), params).all()
            scores = conn.execute(sa.text(
                "SELECT r.retriever, r.version, r.dataset, m.name, s.query_id, s.value "
                "FROM query_scores s JOIN eval_runs r ON r.id = s.run_id JOIN measures m ON m.id = s.measure_id "
                f"WHERE {where}"), params).all()
    finally:
        engine.dispose()
    return {
        "runs": {tuple(r[:3]): tuple(r[3:]) for r in status},
        "aggregates": {tuple(r[:4]): tuple(r[4:]) for r in aggregates},
        "scores": {tuple(r[:5]): r[5] for r in scores},
    }


def _local_run(tmp_path: Path, env: dict[str, str], timeout: float) -> None:
    """``evalops run`` for CELERY_DAY: every step in one process, shards one after the other."""
    clean = {k: v for k, v in os.environ.items() if not k.startswith(("AIRFLOW", "EVALOPS_"))}
    result = subprocess.run([str(Path(sys.executable).parent / "evalops"), "run", "--date", CELERY_DAY, "--json"],
                            cwd=REPO, env={**clean, **env}, capture_output=True, text=True, timeout=timeout)
    assert result.returncode == 0, f"evalops run exited {result.returncode}:\n{result.stdout}\n{result.stderr}"


def test_celery_executor_spreads_the_shards_over_two_workers_with_the_local_run_s_results(
        standalone, fresh_database, tmp_path, speed):
    broker = _flushed_redis(REDIS_URL)
    metadata = fresh_database("airflow")
    warehouse, local_warehouse = fresh_database("warehouse"), fresh_database("warehouse")

    def project_env(root: Path, url: str) -> dict[str, str]:
        return {
            "EVALOPS_HOME": str(REPO),
            "EVALOPS_WAREHOUSE_URL": url,
            "EVALOPS_REPORT_DIR": str(root / "reports"),
            "EVALOPS_WORK_DIR": str(root / "work"),  # one folder both workers see (they share this machine)
            "EVALOPS_QUERY_LOGS": str(root / "no-query-logs"),
            "EVALOPS_SHARD_SIZE": str(CELERY_SHARD_SIZE),
        }

    airflow = standalone(dags_folder=REPO / "dags", metadata=metadata, health=CELERY_HEALTH,
                         components=_celery_components, env={
        **project_env(tmp_path / "celery", warehouse),
        "AIRFLOW__CORE__EXECUTOR": "CeleryExecutor",
        "AIRFLOW__CELERY__BROKER_URL": broker,
        "AIRFLOW__CELERY__RESULT_BACKEND": "db+" + _with_driver(metadata, "psycopg"),
        "AIRFLOW__CELERY__WORKER_PREFETCH_MULTIPLIER": "1",  # a busy worker holds no shard another could run
        "AIRFLOW__CORE__HOSTNAME_CALLABLE": "standalone_harness.component_hostname",
        "PYTHONPATH": os.pathsep.join([str(REPO), str(HERE)]),  # HERE: component_hostname for every process
    })
    for name in CELERY_WORKERS:  # both consume before any shard is queued
        airflow.wait_for_log(name, " ready.", timeout=150 * speed)

    dag = airflow.wait_for_dag(EVAL_DAG, timeout=90 * speed)
    assert dag["is_paused"]
    airflow.unpause(EVAL_DAG)
    airflow.cancel_scheduled_run(EVAL_DAG, timeout=30 * speed)  # today's daily run would queue ours
    run_id = f"celery__{CELERY_DAY}"
    airflow.request("POST", f"/api/v2/dags/{EVAL_DAG}/dagRuns",
                    json={"dag_run_id": run_id, "logical_date": f"{CELERY_DAY}T00:00:00Z", "conf": {}})
    run = airflow.wait_for_run(EVAL_DAG, run_type="manual", timeout=300 * speed)
    assert run["dag_run_id"] == run_id and run["state"] == "success", airflow.run_summary(EVAL_DAG)

    on_celery = _stored_results(warehouse, "r.dag_id = :dag AND r.dag_run_id = :run", {"dag": EVAL_DAG, "run": run_id})
    assert on_celery["runs"] and {status for status, _ in on_celery["runs"].values()} == {"succeeded"}, on_celery

    # Each worker ran at least one shard: the task instances' hostnames, as the metadata database has them.
    shards = [ti for ti in airflow.task_instances(EVAL_DAG, run_id) if ti["task_id"] == "score"]
    hosts = sorted(ti["hostname"] for ti in shards)
    expected = sum(-(-n // CELERY_SHARD_SIZE) for _, n in on_celery["runs"].values())
    assert len(shards) == expected > len(CELERY_WORKERS), hosts
    assert set(hosts) == set(CELERY_WORKERS), f"score shards by worker: {hosts}"
    # ... and each worker's own log shows it received exactly the shards the database attributes to it.
    for name in CELERY_WORKERS:
        log = airflow.log_of(name).read_text(errors="replace")
        ran = {ti["map_index"] for ti in shards
               if f"run_id={run_id}/task_id=score/map_index={ti['map_index']}/" in log}
        assert ran == {ti["map_index"] for ti in shards if ti["hostname"] == name}, (name, ran, hosts)
    # Every task of the run went through the Celery workers, none through a local executor.
    assert {ti["hostname"] for ti in airflow.task_instances(EVAL_DAG, run_id) if ti["state"] == "success"
            } <= set(CELERY_WORKERS)

    # The same day run locally (`evalops run`, shards one after the other) stores the same numbers.
    _local_run(tmp_path / "local", project_env(tmp_path / "local", local_warehouse), timeout=600 * speed)
    local = _stored_results(local_warehouse, "r.dag_id = 'cli'", {})
    assert on_celery["runs"] == local["runs"]
    assert on_celery["scores"] and on_celery["aggregates"]
    assert on_celery["aggregates"] == local["aggregates"]
    assert on_celery["scores"] == local["scores"]
