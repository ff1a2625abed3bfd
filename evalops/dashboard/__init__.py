"""The history dashboard: retrieval quality over time, per version, with its events and alerts.

Three ways to open it, one set of pages (``evalops.dashboard.pages``):

* ``create_app(engine)``: a FastAPI app (``evalops dashboard`` serves it with uvicorn) that only reads, but
  for the annotators' labels (``evalops.dashboard.labelling``: credentials and a CSRF token required);
* the Airflow plugin (``evalops.airflow.plugin``) mounts the same app under ``/evalops``;
* ``export_site(engine, folder)``: static HTML files that open from ``file://`` with no network.

Charts are server-rendered SVG (``evalops.dashboard.svg``): no script, nothing fetched from elsewhere.
"""

from __future__ import annotations

from evalops.dashboard.app import create_app
from evalops.dashboard.export import export_site
from evalops.dashboard.pages import DashboardSettings

__all__ = ["DashboardSettings", "create_app", "export_site"]
