"""The walk "Your project under Airflow" of docs/deployment.md, run as written: a project made by
``evalops init`` and scored once, the walk's commands (``airflow db migrate``, ``airflow dags
reserialize``, ``airflow dags list``) with the walk's variables, then ``airflow standalone`` on the
loopback address the walk sets. Logged in, ``/evalops/`` answers 200 with the project's versions; nothing
is written outside the project and the Airflow home (the api-server runs in an empty folder, which stays
empty: the dashboard never creates a warehouse of its own).

The metadata database is PostgreSQL (``EVALOPS_TEST_POSTGRES_URL``), as in the scheduler test: Airflow's
REST API on SQLite answers "database is locked" under load.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import httpx
import pytest
from standalone_harness import REPO, AirflowStandalone, machine_speed_factor

BUDGET_S = 240  # the walk's waits on an idle 2-core machine, times its measured slowness
pytestmark = [pytest.mark.scheduler, pytest.mark.postgres, pytest.mark.slow, pytest.mark.timeout(1800)]

DAY = "2024-06-01"
PLACEHOLDER = "/path/to/my-project"
VERSIONS = {"bm25-run": "bm25.trec", "reranked-run": "itsumida-te3large-zerank1-top15.trec"}


def walk_block(page: Path = REPO / "docs" / "deployment.md") -> list[str]:
    """The command lines of the walk's bash block, comments dropped."""
    text = page.read_text(encoding="utf-8")
    section = text.split("## Your project under Airflow", 1)[1]
    block = re.search(r"```bash\n(.*?)```", section, re.DOTALL)
    assert block, "the walk has no bash block"
    return [re.sub(r"\s+#\s.*$", "", line).strip() for line in block.group(1).splitlines() if line.strip()]


def _with_driver(url: str, driver: str) -> str:
    import sqlalchemy as sa

    return sa.make_url(url).set(drivername=f"postgresql+{driver}").render_as_string(hide_password=False)


def _project(root: Path, shared_data: Path) -> Path:
    """``evalops init`` over SciFact (read in place) with two run-file versions, scored for DAY."""
    clean = {k: v for k, v in os.environ.items() if not k.startswith(("EVALOPS_", "AIRFLOW"))}
    clean["PYTHONPATH"] = str(REPO)
    data = shared_data / "scifact"

    def cli(*args: str) -> str:
        done = subprocess.run([sys.executable, "-c", "from evalops.cli import main; main()", *args], cwd=root,
                              env=clean, capture_output=True, text=True, timeout=900)
        assert done.returncode == 0, f"evalops {' '.join(args)}: {done.stdout}\n{done.stderr}"
        return done.stdout

    root.mkdir()
    cli("init", str(root), "--gold-set", str(data), "--knowledge-base", str(data / "corpus.jsonl"))
    (root / "retrievers.yaml").write_text("retrievers:\n" + "".join(
        f"  - {{name: scifact, version: '{v}', adapter: run_file, deployed: true, owner: me, "
        f"params: {{path: '{data / 'runs' / f}', missing: empty}}}}\n" for v, f in VERSIONS.items()))
    cli("run", "--date", DAY)
    return root


def _files(folder: Path) -> set[str]:
    return {str(p.relative_to(folder)) for p in folder.rglob("*")}


def _checkout_new_files() -> set[str]:
    """The checkout's untracked and ignored files (a developer's edits meanwhile do not count)."""
    status = subprocess.run(["git", "status", "--porcelain", "--ignored", "--untracked-files=all"], cwd=REPO,
                            capture_output=True, text=True, check=True).stdout
    return {line[3:] for line in status.splitlines() if line.startswith(("??", "!!"))}


def test_the_walk_serves_the_project_s_dashboard_and_writes_nothing_outside_it(
        tmp_path: Path, shared_data: Path, fresh_database: Callable[[str], str]):
    lines = walk_block()
    assert lines[0] == f"cd {PLACEHOLDER}" and lines[-1] == "airflow standalone", lines
    commands = [line for line in lines if line.startswith("airflow ")]
    assert commands == ["airflow db migrate", "airflow dags reserialize", "airflow dags list",
                        "airflow standalone"], commands

    project = _project(tmp_path / "proj", shared_data)
    before_checkout = _checkout_new_files()
    fake_home = tmp_path / "home"  # the walk's $HOME, so its AIRFLOW_HOME is a throw-away folder
    airflow_home = fake_home / "airflow"
    airflow_home.mkdir(parents=True)
    server_cwd = tmp_path / "cwd"  # where the api-server is started: must stay empty
    server_cwd.mkdir()

    speed = machine_speed_factor()
    metadata = fresh_database("walk")
    airflow = AirflowStandalone(home=airflow_home, dags_folder=project / "dags", speed=speed, cwd=server_cwd,
                                metadata_url=_with_driver(metadata, "psycopg"),
                                metadata_async_url=_with_driver(metadata, "psycopg_async"))
    airflow.deadline = time.monotonic() + BUDGET_S * speed
    env = {**airflow.environment, "HOME": str(fake_home)}
    for name in ("AIRFLOW__CORE__DAGS_FOLDER", "AIRFLOW__API__HOST"):
        env.pop(name)  # the walk must set these itself

    # Everything before `airflow standalone`, as written, then the variables it leaves behind.
    exported = tmp_path / "walk.env"
    script = "\n".join(lines[:-1]).replace(PLACEHOLDER, str(project)) + f'\nenv -0 > "{exported}"\n'
    walked = subprocess.run(["bash", "-euo", "pipefail", "-c", script], env=env, capture_output=True, text=True,
                            timeout=max(60.0, airflow.deadline - time.monotonic()), start_new_session=True)
    assert walked.returncode == 0, walked.stdout[-3000:] + walked.stderr[-3000:]
    assert re.search(r"\bretrieval_eval\b", walked.stdout), walked.stdout[-3000:]
    after = dict(item.split("=", 1) for item in exported.read_text().split("\0") if "=" in item)
    exported.unlink()
    assert after["AIRFLOW_HOME"] == str(airflow_home)
    assert after["EVALOPS_HOME"] == str(project) and after["AIRFLOW__API__HOST"] == "127.0.0.1"
    airflow.update_environment({k: v for k, v in after.items() if k.startswith(("AIRFLOW", "EVALOPS_"))})

    try:
        airflow.start()
        airflow.wait_healthy(timeout=150 * speed)
        page = f"{airflow.base_url}/evalops/"
        assert httpx.get(page, timeout=airflow.http_timeout(30)).status_code == 401  # not logged in
        response = airflow.request("GET", "/evalops/")  # logged in: a token from POST /auth/token
        assert response.status_code == 200 and "text/html" in response.headers["content-type"]
        for version in VERSIONS:
            assert version in response.text, f"{version} is not on {page}"
    finally:
        survivors = airflow.stop()
    assert not survivors, f"airflow processes survived: {survivors}"

    assert sorted(p.name for p in tmp_path.iterdir()) == ["cwd", "home", "proj"]
    assert not list(server_cwd.iterdir()), f"written in the api-server's folder: {_files(server_cwd)}"
    strays = [p for p in fake_home.rglob("*") if "evalops" in p.name or p.suffix in (".db", ".sqlite")
              and p != airflow_home / "airflow.db"]
    assert not strays, f"an evalops file or a database was created outside the project: {strays}"
    written = sorted(f for f in _checkout_new_files() - before_checkout if "__pycache__" not in f)
    assert not written, f"written into the checkout: {written}"
