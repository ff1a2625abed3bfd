"""The FastAPI app: read-only pages over the warehouse, the stylesheet, and (optionally) the run reports.

    app = create_app(engine)                        # evalops dashboard (uvicorn)
    app = create_app(engine, prefix="/evalops")     # under the Airflow api-server (the plugin)

Every route is a GET; nothing here writes to the warehouse.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from evalops.dashboard.datadocs import offline_page, resolve_inside
from evalops.dashboard.links import AppLinks
from evalops.errors import EvalopsError
from evalops.htmlpolicy import DASHBOARD_CSP, DATA_DOCS_CSP, REPORT_CSP, sanitized_page
from evalops.dashboard.pages import (
    DashboardSettings,
    NotFound,
    _alert_measures,
    ab_page,
    alerts_page,
    datadocs_page,
    overview_page,
    runs_page,
)
from evalops.dashboard.trends import trend_page
from evalops.dashboard.render import STATIC, render_page
from evalops.warehouse._db import transaction
from evalops.warehouse.dashboard import dashboard_measures

if TYPE_CHECKING:  # pragma: no cover
    from fastapi import FastAPI

    from evalops.dashboard.auth import DashboardAuth
    from sqlalchemy.engine import Engine

__all__ = ["MAX_ID", "MAX_TREND_DAYS", "create_app", "default_trend"]

MAX_ID = 2**63 - 1  # a warehouse id is a signed 64-bit integer; a larger one is a 422, not a database error
MAX_TREND_DAYS = 366 * 100


def default_trend(engine: Engine, settings: DashboardSettings) -> dict[str, str] | None:
    measures = dashboard_measures(engine)
    if not measures:
        return None
    retriever = sorted(measures)[0]
    return {"retriever": retriever, "measure": _alert_measures(settings, measures, retriever)[0]}


def create_app(
    engine: Engine | Any,
    *,
    prefix: str = "",
    settings: DashboardSettings | None = None,
    report_dir: str | Path | None = None,
    dependencies: Sequence[Any] = (),
    auth: DashboardAuth | None = None,
) -> FastAPI:
    """The dashboard app. ``engine`` may be a callable returning the engine (resolved on first request), so
    the Airflow plugin can be imported without touching the database. ``prefix`` is where the app is
    mounted (links are built under it). ``report_dir`` serves the run reports under ``/reports``.
    ``dependencies`` guard every page and report (the plugin passes Airflow's authentication); only the
    stylesheet is served without them. ``auth`` (a token or basic credentials) is one more such guard:
    401 without the credentials."""
    from fastapi import Depends, FastAPI, Path as PathParam, Query
    from fastapi.responses import FileResponse, HTMLResponse, RedirectResponse
    from fastapi.staticfiles import StaticFiles

    settings = settings or DashboardSettings()
    reports = Path(report_dir) if report_dir is not None else None
    links = AppLinks(prefix, reports=reports is not None)
    guards = list(dependencies)
    if auth is not None and auth.configured:
        guards.append(Depends(auth.dependency()))
    app = FastAPI(title="evalops dashboard", docs_url=None, redoc_url=None, openapi_url=None,
                  dependencies=guards)
    app.mount("/static", StaticFiles(directory=str(STATIC)), name="static")
    state: dict[str, Any] = {}

    @app.middleware("http")
    async def security_headers(request: Any, call_next: Any) -> Any:
        # Every response, whatever route made it (static files, reports, errors): no sniffing, and the
        # dashboard's policy unless the route set its own (reports, Data Docs).
        response = await call_next(request)
        response.headers.setdefault("Content-Security-Policy", DASHBOARD_CSP + "; frame-ancestors 'self'")
        response.headers.setdefault("X-Content-Type-Options", "nosniff")
        return response

    def get_engine() -> Engine:
        if "engine" not in state:
            state["engine"] = engine() if callable(engine) else engine
        return state["engine"]

    def read(make_page: Any) -> tuple[str, dict[str, Any], dict[str, str] | None]:
        # A page's reads share one connection and one transaction (a trend page makes eight reads: one
        # checkout, ping and BEGIN each made the page wait on the database's scheduling as often).
        with transaction(get_engine(), "reading the page") as conn:
            template, context = make_page(conn)
            return template, context, default_trend(conn, settings)

    def page(template: str, context: dict[str, Any], trend: dict[str, str] | None | bool = False, *,
             status: int = 200) -> HTMLResponse:
        if trend is False:  # not read with the page
            trend = default_trend(get_engine(), settings)
        html = render_page(template, context, links, settings, trend)
        return HTMLResponse(html, status_code=status, headers={
            # No script runs on these pages; say so to the browser as well.
            "Content-Security-Policy": DASHBOARD_CSP + "; frame-ancestors 'self'",
            "X-Content-Type-Options": "nosniff",
        })

    @app.exception_handler(EvalopsError)
    def evalops_error(_request: Any, exc: EvalopsError) -> HTMLResponse:
        # A warehouse that cannot be reached or read, a bad configuration: say so, no traceback.
        html = render_page("error.html", {"page": "error", "heading": "The dashboard cannot read the warehouse",
                                          "message": f"{type(exc).__name__}: {exc}"}, links,
                           settings, None)
        return HTMLResponse(html, status_code=503)

    def not_found(exc: NotFound) -> HTMLResponse:
        return page("error.html", {"page": "error", "message": str(exc)}, status=404)

    @app.get("/", response_class=HTMLResponse)
    def overview() -> HTMLResponse:
        return page(*read(lambda conn: overview_page(conn, links, settings)))

    @app.get("/trends", response_class=HTMLResponse)
    def trends(retriever: str | None = None, measure: str | None = None, dataset: str = "gold",
               days: int = Query(90, ge=0, le=MAX_TREND_DAYS)) -> HTMLResponse:
        try:
            return page(*read(lambda conn: trend_page(conn, links, settings, retriever=retriever, measure=measure,
                                                      dataset=dataset, days=days)))
        except NotFound as exc:
            return not_found(exc)

    @app.get("/ab/{ab_id}", response_class=HTMLResponse)
    def ab(ab_id: int = PathParam(ge=1, le=MAX_ID)) -> HTMLResponse:
        try:
            return page(*read(lambda conn: ab_page(conn, links, settings, ab_id)))
        except NotFound as exc:
            return not_found(exc)

    @app.get("/runs", response_class=HTMLResponse)
    def runs(retriever: str | None = None, version: str | None = None, dataset: str | None = None,
             status: str | None = None) -> HTMLResponse:
        return page(*read(lambda conn: runs_page(conn, links, settings, retriever=retriever, version=version,
                                                 dataset=dataset, status=status)))

    @app.get("/alerts", response_class=HTMLResponse)
    def alerts(retriever: str | None = None, kind: str | None = None, severity: str | None = None,
               delivery_status: str | None = None) -> HTMLResponse:
        return page(*read(lambda conn: alerts_page(conn, links, settings, retriever=retriever, kind=kind,
                                                   severity=severity, delivery_status=delivery_status)))

    @app.get("/reports/{name:path}", response_model=None)
    def report_file(name: str) -> FileResponse | HTMLResponse:
        # A route, not a static mount, so the dependencies (authentication) guard the reports too.
        root = reports.resolve() if reports is not None else None
        path = (root / name).resolve() if root is not None else None
        if path is None or root not in path.parents or not path.is_file():
            return not_found(NotFound(f"no report file {name!r}"))
        # The reports are self-contained pages with inline CSS and data: charts, and no script; a page is served
        # through the sanitiser again, so a report written by an older evalops is held to today's rules.
        headers = {"Content-Security-Policy": REPORT_CSP + "; frame-ancestors 'self'"}
        if path.suffix == ".html":
            return HTMLResponse(sanitized_page(path.read_text(encoding="utf-8", errors="replace"), REPORT_CSP),
                                headers=headers)
        return FileResponse(path, headers=headers)

    @app.get("/datadocs", response_class=HTMLResponse)
    def datadocs() -> HTMLResponse:
        return page(*datadocs_page(get_engine(), links, settings))

    @app.get("/datadocs/files/{name:path}", response_model=None)
    def datadocs_file(name: str) -> FileResponse | HTMLResponse:
        root = settings.data_docs
        if root is not None and name.endswith(".html"):
            html = offline_page(root, name, links.static("datadocs.css"))
            if html is not None:
                return HTMLResponse(html, headers={
                    "Content-Security-Policy": DATA_DOCS_CSP + "; frame-ancestors 'self'",
                    "X-Content-Type-Options": "nosniff"})
        elif root is not None and name.startswith("static/"):
            path = resolve_inside(root, name)
            if path is not None:
                return FileResponse(path)
        return not_found(NotFound(f"no Data Docs file {name!r}"))

    @app.get("/healthz")
    def healthz() -> dict[str, str]:
        return {"status": "ok"}

    @app.get("/index.html", include_in_schema=False)
    def index() -> RedirectResponse:
        return RedirectResponse(links.overview() or "/")

    return app
