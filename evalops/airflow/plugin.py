"""The dashboard inside Airflow 3: the FastAPI app under the api-server at ``/evalops``, and a navigation
entry that shows it in the Airflow UI.

Registered through the ``airflow.plugins`` entry point (pyproject.toml), so an Airflow with evalops
installed loads it without copying files into ``$AIRFLOW_HOME/plugins``. Importing this module touches
no database.

**Which warehouse.** The same settings as the DAGs, resolved on the first request: the project named by
``EVALOPS_HOME`` (its ``evalops.yaml``, its ``warehouse_url``, else the ``evalops_warehouse`` connection,
else its ``.evalops/warehouse.db``), or, with no project, ``EVALOPS_WAREHOUSE_URL`` or the
``evalops_warehouse`` Airflow connection. The dashboard only reads: it never creates a database, a file
or a folder. When it finds no warehouse, or one without evalops' tables, every page says what to set
(503, no traceback).

Every page requires an authenticated Airflow user (the UI's session cookie or a bearer token), as the
REST API does; without one the app answers 401. The labelling pages record labels under the user's Airflow
login, and their CSRF tokens are bound to it (the session cookie or the bearer token).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from evalops.airflow.compat import airflow_session_cookie, airflow_user_name, plugin_base, requires_authenticated
from evalops.config import load_config
from evalops.config.env import HOME_VAR, PROJECT_FILE
from evalops.dashboard import DashboardSettings, create_app
from evalops.errors import ConfigError
from evalops.warehouse import create_warehouse_engine, resolve_url
from evalops.warehouse.config import WarehouseURL, url_for

__all__ = ["URL_PREFIX", "EvalopsDashboardPlugin", "build_app", "open_warehouse"]

URL_PREFIX = "/evalops"

WHAT_TO_SET = ("Set EVALOPS_HOME to the evalops project folder (the one with evalops.yaml and dags/) in the "
               "api-server's environment, or define the Airflow connection evalops_warehouse "
               "(or EVALOPS_WAREHOUSE_URL) as the DAGs use it, then restart the api-server.")


def _project() -> Any | None:
    """The project's settings, when the api-server names one (``EVALOPS_HOME``) or runs in its folder."""
    import os

    if not os.environ.get(HOME_VAR) and not (Path.cwd() / PROJECT_FILE).is_file():
        return None
    return load_config(Path.cwd())  # EVALOPS_HOME, when set, wins


def open_warehouse() -> Any:
    """The engine of the warehouse the DAGs write (module docstring), checked to hold evalops' tables;
    a :class:`~evalops.errors.ConfigError` that says what to set otherwise."""
    from sqlalchemy import inspect
    from sqlalchemy.exc import SQLAlchemyError

    cfg = _project()
    if cfg is not None:
        where = WarehouseURL(url_for(cfg), "env")
    else:
        where = resolve_url()
        if where.source == "default":
            raise ConfigError(f"the api-server knows no evalops project (EVALOPS_HOME is not set and "
                              f"{Path.cwd()} has no evalops.yaml) and no warehouse connection. {WHAT_TO_SET}")
    try:
        engine = create_warehouse_engine(where, must_exist=True)
    except ConfigError as exc:
        raise ConfigError(f"{exc}. {WHAT_TO_SET}") from None
    try:
        tables = inspect(engine).has_table("eval_runs")
    except SQLAlchemyError as exc:
        raise ConfigError(f"the warehouse {where.masked()} cannot be read ({type(exc).__name__}). "
                          f"{WHAT_TO_SET}") from None
    if not tables:
        engine.dispose()
        raise ConfigError(f"the warehouse {where.masked()} has no evalops tables yet: run the retrieval_eval "
                          f"DAG (or `evalops db upgrade`) first, or point the api-server at the project's "
                          f"warehouse. {WHAT_TO_SET}")
    return engine


def _authenticated() -> list[Any]:
    from fastapi import Depends

    return [Depends(requires_authenticated())]


def build_app() -> Any:
    from evalops.config import load_config  # noqa: F401  (fail at import if evalops is half installed)

    from evalops.dashboard.labelling import LabellingSettings

    try:
        cfg = _project()
        settings = DashboardSettings.from_config(cfg) if cfg is not None else DashboardSettings()
        reports = cfg.report_dir if cfg is not None else None
        labelling = LabellingSettings.from_config(cfg) if cfg is not None else LabellingSettings()
    except Exception:  # a bad configuration must not stop the api-server; the pages say what is wrong
        settings, reports, labelling = DashboardSettings(), None, LabellingSettings()
    return create_app(open_warehouse, prefix=URL_PREFIX, settings=settings, report_dir=reports,
                      dependencies=_authenticated(), labelling=labelling, identity=airflow_user_name(),
                      credential_cookies=(airflow_session_cookie(),))


class EvalopsDashboardPlugin(plugin_base()):
    name = "evalops"
    fastapi_apps = [{"app": build_app(), "url_prefix": URL_PREFIX, "name": "evalops dashboard"}]
    external_views = [{
        "name": "Retrieval quality",
        "href": f"{URL_PREFIX}/",
        "destination": "nav",
        "url_route": "evalops",
        "category": "browse",
    }]
