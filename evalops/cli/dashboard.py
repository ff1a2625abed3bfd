"""``evalops dashboard``: the history dashboard on a laptop (uvicorn) or as static files (``--export``)."""

from __future__ import annotations

from pathlib import Path

import click

from evalops.cli._common import reports_errors
from evalops.cli._project import CONFIG_OPTION, PROJECT_OPTION, project_config
from evalops.config.env import DASHBOARD_TOKEN_VAR, DASHBOARD_USER_VAR, dashboard_credentials
from evalops.errors import ConfigError
from evalops.util.extras import require_extra
from evalops.warehouse import create_warehouse_engine, current_revision, resolve_url
from evalops.warehouse.config import url_for as warehouse_url_for


@click.command()
@click.option("--host", default="127.0.0.1", show_default=True,
              help="Address to listen on. Any address but a loopback one needs EVALOPS_DASHBOARD_TOKEN (a bearer "
                   "token) or EVALOPS_DASHBOARD_USER and EVALOPS_DASHBOARD_PASSWORD (basic) in the environment; "
                   "with one set, every page asks for it.")
@click.option("--port", default=8765, show_default=True, type=click.IntRange(0, 65535), help="Port to listen on.")
@click.option("--export", "export_dir", type=click.Path(file_okay=False), default=None,
              help="Write the dashboard as static files into this folder (they open from file://) and exit.")
@click.option("--url", default=None, help="Warehouse URL (default: the project's, the embedded SQLite).")
@PROJECT_OPTION
@CONFIG_OPTION
@reports_errors
def dashboard(host: str, port: int, export_dir: str | None, url: str | None, project: Path | None,
              config_file: str | None) -> None:
    """Open the history dashboard: each measure over time per version, with promotions, knowledge-base and
    gold-set changes and alerts on the timeline, and every A/B comparison down to its worst queries."""
    from evalops.config import find_project, load_config
    from evalops.dashboard import DashboardSettings
    from evalops.dashboard.auth import DashboardAuth, is_loopback

    if export_dir is None:  # serving needs the app's libraries; the static export does not
        require_extra("dashboard", "serve the dashboard (--export writes it as static files without them)")
    auth = DashboardAuth(*dashboard_credentials())
    if export_dir is None and not is_loopback(host) and not auth.configured:
        raise click.UsageError(
            f"--host {host} serves the dashboard (reports included) beyond this machine, and it has no login of "
            f"its own: set {DASHBOARD_TOKEN_VAR} (a bearer token) or {DASHBOARD_USER_VAR} and "
            "EVALOPS_DASHBOARD_PASSWORD (basic credentials) in the environment, or listen on 127.0.0.1")

    if project is not None or config_file is not None or find_project() is not None:
        cfg = project_config(project, config_file)
    else:  # --url alone, outside a project
        cfg = load_config(Path.cwd())
    resolved = resolve_url(url or warehouse_url_for(cfg))
    engine = create_warehouse_engine(resolved)
    if current_revision(engine) is None:
        raise ConfigError(f"the warehouse {resolved.masked()} is empty; run `evalops run` or `evalops demo` first")
    settings = DashboardSettings.from_config(cfg)
    if export_dir is not None:
        from evalops.dashboard import export_site

        pages = export_site(engine, export_dir, settings=settings, report_dir=cfg.report_dir)
        index = Path(export_dir).resolve() / "index.html"
        click.echo(f"wrote {len(pages)} pages to {Path(export_dir).resolve()}; open {index.as_uri()}")
        return
    import uvicorn

    from evalops.dashboard import create_app

    from evalops.dashboard.labelling import LabellingSettings

    app = create_app(engine, settings=settings, report_dir=cfg.report_dir, auth=auth,
                     labelling=LabellingSettings.from_config(cfg))
    guarded = " (credentials required)" if auth.configured else ""
    click.echo(f"evalops dashboard on http://{host}:{port}/{guarded} (warehouse {resolved.masked()}); Ctrl-C stops "
               "it", err=True)
    uvicorn.run(app, host=host, port=port, log_level="warning")
