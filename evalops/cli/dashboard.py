"""``evalops dashboard``: the history dashboard on a laptop (uvicorn) or as static files (``--export``)."""

from __future__ import annotations

from pathlib import Path

import click

from evalops.cli._common import reports_errors
from evalops.errors import ConfigError

CONFIG_OPTION = click.option(
    "--config", "config_file", type=click.Path(exists=True, dir_okay=False), default=None,
    help="A YAML configuration file (default: $EVALOPS_CONFIG or ./evalops.yaml; see README).",
)


@click.command()
@click.option("--host", default="127.0.0.1", show_default=True,
              help="Address to listen on (the dashboard has no login of its own: keep it local, or put it "
                   "behind the Airflow plugin).")
@click.option("--port", default=8765, show_default=True, type=click.IntRange(0, 65535), help="Port to listen on.")
@click.option("--export", "export_dir", type=click.Path(file_okay=False), default=None,
              help="Write the dashboard as static files into this folder (they open from file://) and exit.")
@click.option("--url", default=None, help="Warehouse URL (default: the configuration's, the embedded SQLite).")
@CONFIG_OPTION
@reports_errors
def dashboard(host: str, port: int, export_dir: str | None, url: str | None, config_file: str | None) -> None:
    """Open the history dashboard: each measure over time per version, with promotions, knowledge-base and
    gold-set changes and alerts on the timeline, and every A/B comparison down to its worst queries."""
    from evalops.config import load_config
    from evalops.dashboard import DashboardSettings
    from evalops.warehouse import create_warehouse_engine, current_revision, resolve_url

    cfg = load_config(Path.cwd(), config_file=config_file)
    resolved = resolve_url(url or cfg.resolved_warehouse_url())
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

    app = create_app(engine, settings=settings, report_dir=cfg.report_dir)
    click.echo(f"evalops dashboard on http://{host}:{port}/ (warehouse {resolved.masked()}); Ctrl-C stops it",
               err=True)
    uvicorn.run(app, host=host, port=port, log_level="warning")
