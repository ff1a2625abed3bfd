"""The dashboard inside Airflow 3: the FastAPI app under the api-server at ``/evalops``, and a navigation
entry that shows it in the Airflow UI.

Registered through the ``airflow.plugins`` entry point (pyproject.toml), so an Airflow with evalops
installed loads it without copying files into ``$AIRFLOW_HOME/plugins``. Importing this module touches
no database: the warehouse engine is resolved on the first request (``EVALOPS_WAREHOUSE_URL``, the
``evalops_warehouse`` connection, or the configuration under ``EVALOPS_HOME``).

Every page requires an authenticated Airflow user (the UI's session cookie or a bearer token), as the
REST API does; without one the app answers 401.
"""

from __future__ import annotations

from evalops.warehouse.config import url_for as warehouse_url_for

from pathlib import Path
from typing import Any

from airflow.plugins_manager import AirflowPlugin

__all__ = ["URL_PREFIX", "EvalopsDashboardPlugin", "build_app"]

URL_PREFIX = "/evalops"


def _config() -> Any:
    from evalops.config import load_config

    return load_config(Path.cwd())  # EVALOPS_HOME, when set, wins (load_config)


def _engine() -> Any:
    from evalops.errors import EvalopsError
    from evalops.warehouse import create_warehouse_engine, resolve_url

    try:
        return create_warehouse_engine(warehouse_url_for(_config()))
    except EvalopsError:
        # The warehouse may be named without the project's configuration (EVALOPS_WAREHOUSE_URL or the
        # evalops_warehouse connection); only then is the configuration's error not the answer.
        named = resolve_url()
        if named.source == "default":
            raise
        return create_warehouse_engine(named)


def _authenticated() -> list[Any]:
    from fastapi import Depends

    from airflow.api_fastapi.core_api.security import requires_authenticated

    return [Depends(requires_authenticated())]


def build_app() -> Any:
    from evalops.config import load_config  # noqa: F401  (fail at import if evalops is half installed)
    from evalops.dashboard import DashboardSettings, create_app

    try:
        cfg = _config()
        settings, reports = DashboardSettings.from_config(cfg), cfg.report_dir
    except Exception:  # a bad configuration must not stop the api-server; the pages say what is wrong
        settings, reports = DashboardSettings(), None
    return create_app(_engine, prefix=URL_PREFIX, settings=settings, report_dir=reports,
                      dependencies=_authenticated())


class EvalopsDashboardPlugin(AirflowPlugin):
    name = "evalops"
    fastapi_apps = [{"app": build_app(), "url_prefix": URL_PREFIX, "name": "evalops dashboard"}]
    external_views = [{
        "name": "Retrieval quality",
        "href": f"{URL_PREFIX}/",
        "destination": "nav",
        "url_route": "evalops",
        "category": "browse",
    }]
