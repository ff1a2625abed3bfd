"""The Airflow plugin: its structure, its registration, and that its pages need an authenticated user.

The real ``airflow standalone`` check (401 without a token, 200 with one) is in
tests/deploy/test_scheduler_e2e.py."""

from __future__ import annotations

from importlib.metadata import entry_points

import pytest

pytestmark = pytest.mark.airflow


def test_the_plugin_mounts_the_dashboard_under_evalops_with_a_nav_entry():
    from airflow.plugins_manager import AirflowPlugin
    from fastapi import FastAPI

    from evalops.airflow.plugin import EvalopsDashboardPlugin

    assert issubclass(EvalopsDashboardPlugin, AirflowPlugin) and EvalopsDashboardPlugin.name == "evalops"
    (app,) = EvalopsDashboardPlugin.fastapi_apps
    assert app["url_prefix"] == "/evalops" and isinstance(app["app"], FastAPI) and app["name"]
    (view,) = EvalopsDashboardPlugin.external_views
    assert view["href"] == "/evalops/" and view["destination"] == "nav" and view["name"]
    paths = {route.path for route in app["app"].routes}
    assert {"/", "/trends", "/ab/{ab_id}", "/runs", "/alerts", "/static"} <= paths


def test_the_plugin_is_registered_as_an_airflow_entry_point():
    found = {e.name: e.value for e in entry_points(group="airflow.plugins")}
    assert found.get("evalops") == "evalops.airflow.plugin:EvalopsDashboardPlugin"


def test_pages_answer_401_without_a_token_and_links_stay_under_the_prefix(filled):
    from fastapi import FastAPI
    from fastapi.testclient import TestClient

    from evalops.dashboard import create_app
    from evalops.airflow.plugin import EvalopsDashboardPlugin, _authenticated

    root = FastAPI()
    root.mount("/evalops", EvalopsDashboardPlugin.fastapi_apps[0]["app"])
    client = TestClient(root)
    for path in ("/evalops/", "/evalops/trends", "/evalops/runs", "/evalops/ab/1", "/evalops/reports/x/report.html"):
        assert client.get(path).status_code == 401, path
    assert client.get("/evalops/static/style.css").status_code == 200

    # the same app without the guard: every link it builds stays under /evalops
    open_root = FastAPI()
    open_root.mount("/evalops", create_app(filled["engine"], prefix="/evalops"))
    page = TestClient(open_root).get("/evalops/")
    assert page.status_code == 200
    import re

    hrefs = re.findall(r'href="([^"]+)"', page.text)
    assert hrefs and all(h.startswith("/evalops/") or h.startswith("data:") for h in hrefs), hrefs
    assert len(_authenticated()) == 1


_API_SERVER_PROBE = """
from airflow.api_fastapi.app import create_app
from fastapi.testclient import TestClient
client = TestClient(create_app())
print(client.get("/evalops/").status_code, client.get("/evalops/runs").text.count('class="run-row'))
"""


@pytest.mark.slow
def test_the_airflow_api_server_mounts_the_plugin(filled, tmp_path):
    """Airflow's own api-server app (in a child process, its own AIRFLOW_HOME): the plugin's pages answer
    401 to nobody and the warehouse's runs to a logged-in user (the simple auth manager's all-admins mode
    stands in for a token here; the standalone test uses a real one)."""
    import os
    import subprocess
    import sys

    env = {k: v for k, v in os.environ.items() if not k.startswith(("AIRFLOW", "EVALOPS_"))}
    env.update({"AIRFLOW_HOME": str(tmp_path / "airflow"), "AIRFLOW__CORE__LOAD_EXAMPLES": "False",
                "EVALOPS_WAREHOUSE_URL": str(filled["engine"].url.render_as_string(hide_password=False))})
    migrate = subprocess.run([sys.executable, "-m", "airflow", "db", "migrate"], env=env, cwd=tmp_path,
                             capture_output=True, text=True, timeout=600)
    assert migrate.returncode == 0, migrate.stderr[-2000:]
    replies = {}
    for all_admins in ("False", "True"):
        probe = subprocess.run([sys.executable, "-c", _API_SERVER_PROBE], cwd=tmp_path, capture_output=True,
                               text=True, timeout=600,
                               env={**env, "AIRFLOW__CORE__SIMPLE_AUTH_MANAGER_ALL_ADMINS": all_admins})
        assert probe.returncode == 0, probe.stderr[-2000:]
        replies[all_admins] = probe.stdout.split()[-2:]
    assert replies["False"][0] == "401"
    assert replies["True"] == ["200", "14"]  # the runs page: 2 on day 1 (gold + production), 12 on day 2


def _clear_warehouse_settings(monkeypatch, cwd):
    import os

    for key in list(os.environ):
        if key.startswith("EVALOPS_") or key == "AIRFLOW_CONN_EVALOPS_WAREHOUSE":
            monkeypatch.delenv(key)
    monkeypatch.chdir(cwd)


def test_without_a_project_the_page_says_what_to_set_and_creates_nothing(tmp_path, monkeypatch):
    from fastapi import FastAPI
    from fastapi.testclient import TestClient

    from evalops.airflow.plugin import open_warehouse
    from evalops.dashboard import create_app

    _clear_warehouse_settings(monkeypatch, tmp_path)
    root = FastAPI()
    root.mount("/evalops", create_app(open_warehouse, prefix="/evalops"))
    page = TestClient(root).get("/evalops/")
    assert page.status_code == 503
    assert "EVALOPS_HOME" in page.text and "evalops_warehouse" in page.text and "Traceback" not in page.text
    assert list(tmp_path.iterdir()) == []  # no .evalops/warehouse.db in the api-server's folder


def test_a_project_whose_warehouse_is_missing_or_empty_is_named_and_left_alone(tmp_path, monkeypatch):
    import sqlite3

    from evalops.airflow.plugin import open_warehouse
    from evalops.errors import ConfigError

    project = tmp_path / "proj"
    project.mkdir()
    (project / "evalops.yaml").write_text("measures: [nDCG@10]\n")
    _clear_warehouse_settings(monkeypatch, tmp_path)
    monkeypatch.setenv("EVALOPS_HOME", str(project))
    with pytest.raises(ConfigError, match=r"warehouse\.db does not exist.*EVALOPS_HOME"):
        open_warehouse()
    assert sorted(p.name for p in project.iterdir()) == ["evalops.yaml"]

    (project / ".evalops").mkdir()
    sqlite3.connect(project / ".evalops" / "warehouse.db").close()  # a file without evalops' tables
    with pytest.raises(ConfigError, match="has no evalops tables yet"):
        open_warehouse()


def test_the_project_s_warehouse_is_read_from_evalops_home(tmp_path, monkeypatch, filled):
    from evalops.airflow.plugin import open_warehouse

    project = tmp_path / "proj"
    project.mkdir()
    url = filled["engine"].url.render_as_string(hide_password=False)
    (project / "evalops.yaml").write_text(f"warehouse_url: '{url}'\n")
    _clear_warehouse_settings(monkeypatch, tmp_path)
    monkeypatch.setenv("EVALOPS_HOME", str(project))
    assert open_warehouse().url.render_as_string(hide_password=False) == url
