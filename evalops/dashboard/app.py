"""The FastAPI app: read-only pages over the warehouse, the stylesheet, and (optionally) the run reports.

    app = create_app(engine)                        # evalops dashboard (uvicorn)
    app = create_app(engine, prefix="/evalops")     # under the Airflow api-server (the plugin)

Every route here is a GET; the labelling pages (``evalops.dashboard.labelling``) are the only ones that write,
and only with credentials and a CSRF token. Rendered pages are kept until what they were made from changes,
checked at most every ``cache_seconds`` (:mod:`evalops.dashboard.cache`), with an ``ETag`` for conditional
requests.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from evalops.dashboard.breakdowns import sources_page
from evalops.dashboard.cache import PageCache
from evalops.dashboard.datadocs import offline_page, resolve_inside
from evalops.dashboard.labelling import LabellingSettings, register_labelling
from evalops.dashboard.links import AppLinks
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
from evalops.dashboard.render import STATIC, render_page
from evalops.dashboard.trends import trend_page
from evalops.errors import EvalopsError
from evalops.util.htmlpolicy import DASHBOARD_CSP, DATA_DOCS_CSP, REPORT_CSP, sanitized_page
from evalops.warehouse._db import transaction
from evalops.warehouse.dashboard import dashboard_ab_state, dashboard_measures, dashboard_version

if TYPE_CHECKING:  # pragma: no cover
    from fastapi import FastAPI
    from fastapi.responses import HTMLResponse, Response

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


class _SecurityHeaders:
    """ASGI middleware: every response, whatever route made it (static files, reports, errors), gets no
    sniffing and the dashboard's policy unless the route set its own (reports, Data Docs). Plain ASGI, not
    Starlette's ``BaseHTTPMiddleware``, which costs each request a task and a copy of the body."""

    _DEFAULTS = ((b"content-security-policy", (DASHBOARD_CSP + "; frame-ancestors 'self'").encode()),
                 (b"x-content-type-options", b"nosniff"))

    def __init__(self, app: Any) -> None:
        self.app = app

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return

        async def send_with_headers(message: Any) -> None:
            if message["type"] == "http.response.start":
                headers = list(message.get("headers", ()))
                present = {name.lower() for name, _ in headers}
                headers += [(name, value) for name, value in self._DEFAULTS if name not in present]
                message = {**message, "headers": headers}
            await send(message)

        await self.app(scope, receive, send_with_headers)


def create_app(
    engine: Engine | Any,
    *,
    prefix: str = "",
    settings: DashboardSettings | None = None,
    report_dir: str | Path | None = None,
    dependencies: Sequence[Any] = (),
    auth: DashboardAuth | None = None,
    cache: PageCache | None = None,
    labelling: LabellingSettings | None = None,
    identity: Any = None,
    credential_cookies: Sequence[str] = (),
) -> FastAPI:
    """The dashboard app. ``engine`` may be a callable returning the engine (resolved on first request), so
    the Airflow plugin can be imported without touching the database. ``prefix`` is where the app is
    mounted (links are built under it). ``report_dir`` serves the run reports under ``/reports``.
    ``dependencies`` guard every page and report (the plugin passes Airflow's authentication); only the
    stylesheet is served without them. ``auth`` (a token or basic credentials) is one more such guard:
    401 without the credentials. ``cache`` keeps rendered pages (default: for
    ``settings.cache_seconds``; see :mod:`evalops.dashboard.cache`). ``labelling``, ``identity`` and
    ``credential_cookies`` configure the labelling pages (``evalops.dashboard.labelling.register_labelling``)."""
    from fastapi import Depends, FastAPI
    from fastapi.staticfiles import StaticFiles

    settings = settings or DashboardSettings()
    pages = cache if cache is not None else PageCache(settings.cache_seconds)
    reports = Path(report_dir) if report_dir is not None else None
    links = AppLinks(prefix, reports=reports is not None)
    guards = list(dependencies)
    if auth is not None and auth.configured:
        guards.append(Depends(auth.dependency()))
    app = FastAPI(title="evalops dashboard", docs_url=None, redoc_url=None, openapi_url=None,
                  dependencies=guards)
    app.mount("/static", StaticFiles(directory=str(STATIC)), name="static")
    app.add_middleware(_SecurityHeaders)
    ui = _Pages(engine, settings, links, pages)
    _register_error_page(app, ui)
    _register_warehouse_pages(app, ui)
    _register_files(app, ui, reports)
    register_labelling(app, get_engine=ui.get_engine, prefix=prefix, page=ui.page,
                       settings=labelling or LabellingSettings(), writes=bool(guards), identity=identity,
                       credential_cookies=credential_cookies)
    _register_health(app, ui)
    return app


class _Pages:
    """What every route of one app shares: the engine (resolved on first use), the links and settings, and
    the kept pages; renders a page and answers it with the dashboard's headers."""

    def __init__(self, engine: Engine | Any, settings: DashboardSettings, links: AppLinks, pages: PageCache) -> None:
        self._engine = engine
        self.settings = settings
        self.links = links
        self.pages = pages
        self._state: dict[str, Any] = {}

    def get_engine(self) -> Engine:
        """The warehouse engine, resolved from the callable on first use."""
        state, engine = self._state, self._engine
        if "engine" not in state:
            state["engine"] = engine() if callable(engine) else engine
        return state["engine"]

    def read(self, make_page: Any, conn: Any) -> tuple[str, dict[str, Any], dict[str, str] | None]:
        """A page's template and context, and the default trend link, read on one connection."""
        # A page's reads share one connection and one transaction (a trend page makes eight reads: one
        # checkout, ping and BEGIN each made the page wait on the database's scheduling as often).
        template, context = make_page(conn)
        return template, context, default_trend(conn, self.settings)

    def render_html(self, template: str, context: dict[str, Any], trend: dict[str, str] | None | bool = False) -> str:
        """The page's HTML; the default trend link is read here when it was not read with the page."""
        if trend is False:  # not read with the page
            trend = default_trend(self.get_engine(), self.settings)
        return render_page(template, context, self.links, self.settings, trend)

    def respond(self, body: str | bytes, status: int, cache_headers: dict[str, str] | None = None) -> HTMLResponse:
        """An HTML response with the dashboard's security headers (and the cache's, when given)."""
        from fastapi.responses import HTMLResponse

        return HTMLResponse(body, status_code=status, headers={
            # No script runs on these pages; say so to the browser as well.
            "Content-Security-Policy": DASHBOARD_CSP + "; frame-ancestors 'self'",
            "X-Content-Type-Options": "nosniff",
            **(cache_headers or {}),
        })

    def page(self, template: str, context: dict[str, Any], trend: dict[str, str] | None | bool = False, *,
             status: int = 200) -> HTMLResponse:
        """A page rendered now, not kept."""
        return self.respond(self.render_html(template, context, trend), status)

    def not_found(self, exc: NotFound) -> HTMLResponse:
        """The error page, 404."""
        return self.page("error.html", {"page": "error", "message": str(exc)}, status=404)

    async def cached(self, asked: str | None, key: tuple[Any, ...], make_page: Any, state_of: Any = None) -> Response:
        """The page under ``key`` from the cache, or rendered by ``make_page(conn)`` (404 when it raises
        :class:`NotFound`, not kept); ``state_of(conn)``, when given, is what the page is kept by, read in
        the page's own transaction. 304 when the request already has it (``asked``: its ``If-None-Match``).
        A fresh kept page is answered on the event loop; reads and renders run in the thread pool."""
        from fastapi.concurrency import run_in_threadpool
        from fastapi.responses import Response

        pages, get_engine, render_html = self.pages, self.get_engine, self.render_html

        def render() -> tuple[str, int, Any]:
            try:
                with transaction(get_engine(), "reading the page", read_only=True) as conn:
                    state = state_of(conn) if state_of is not None else None
                    body = render_html(*self.read(make_page, conn))
                return body, 200, state
            except NotFound as exc:
                return render_html("error.html", {"page": "error", "message": str(exc)}), 404, None

        kept = pages.fresh(key)
        if kept is None:
            kept = await run_in_threadpool(pages.page, key, render,
                                           (lambda: state_of(get_engine())) if state_of else None)
        if kept.status != 200:
            return self.respond(kept.body, kept.status)
        headers = {"ETag": kept.etag, "Cache-Control": pages.cache_control}
        if asked and kept.etag in {tag.strip().removeprefix("W/") for tag in asked.split(",")}:
            return Response(status_code=304, headers=headers)
        return self.respond(kept.body, 200, headers)


def _register_error_page(app: FastAPI, ui: _Pages) -> None:
    """An evalops error (a warehouse that cannot be reached or read, a bad configuration) is a 503 page."""
    from fastapi.responses import HTMLResponse

    links, settings = ui.links, ui.settings

    @app.exception_handler(EvalopsError)
    def evalops_error(_request: Any, exc: EvalopsError) -> HTMLResponse:
        # A warehouse that cannot be reached or read, a bad configuration: say so, no traceback.
        html = render_page("error.html", {"page": "error", "heading": "The dashboard cannot read the warehouse",
                                          "message": f"{type(exc).__name__}: {exc}"}, links,
                           settings, None)
        return HTMLResponse(html, status_code=503)


def _register_warehouse_pages(app: FastAPI, ui: _Pages) -> None:
    """The kept pages read from the warehouse: overview, trends, A/B tests, runs, alerts and sources."""
    from fastapi import Header, Path as PathParam, Query
    from fastapi.responses import HTMLResponse

    cached, links, settings = ui.cached, ui.links, ui.settings

    # every page but a comparison's is kept by the warehouse's change token; a comparison's by its runs
    @app.get("/", response_class=HTMLResponse)
    async def overview(if_none_match: str | None = Header(None)) -> Response:
        return await cached(if_none_match, ("overview",), lambda conn: overview_page(conn, links, settings),
                            dashboard_version)

    @app.get("/trends", response_class=HTMLResponse)
    async def trends(retriever: str | None = None, measure: str | None = None, dataset: str = "gold",
                     days: int = Query(90, ge=0, le=MAX_TREND_DAYS),
                     if_none_match: str | None = Header(None)) -> Response:
        return await cached(if_none_match, ("trends", retriever, measure, dataset, days),
                            lambda conn: trend_page(conn, links, settings, retriever=retriever, measure=measure,
                                                    dataset=dataset, days=days), dashboard_version)

    @app.get("/ab/{ab_id}", response_class=HTMLResponse)
    async def ab(ab_id: int = PathParam(ge=1, le=MAX_ID), if_none_match: str | None = Header(None)) -> Response:
        return await cached(if_none_match, ("ab", ab_id), lambda conn: ab_page(conn, links, settings, ab_id),
                            lambda conn: dashboard_ab_state(conn, ab_id))

    @app.get("/runs", response_class=HTMLResponse)
    async def runs(retriever: str | None = None, version: str | None = None, dataset: str | None = None,
                   status: str | None = None, if_none_match: str | None = Header(None)) -> Response:
        return await cached(if_none_match, ("runs", retriever, version, dataset, status),
                            lambda conn: runs_page(conn, links, settings, retriever=retriever, version=version,
                                                   dataset=dataset, status=status), dashboard_version)

    @app.get("/alerts", response_class=HTMLResponse)
    async def alerts(retriever: str | None = None, kind: str | None = None, severity: str | None = None,
                     delivery_status: str | None = None, if_none_match: str | None = Header(None)) -> Response:
        return await cached(if_none_match, ("alerts", retriever, kind, severity, delivery_status),
                            lambda conn: alerts_page(conn, links, settings, retriever=retriever, kind=kind,
                                                     severity=severity, delivery_status=delivery_status),
                            dashboard_version)

    @app.get("/sources", response_class=HTMLResponse)
    async def sources(if_none_match: str | None = Header(None)) -> Response:
        # each version's source shares and spread per segment (evalops.dashboard.breakdowns)
        return await cached(if_none_match, ("sources",), lambda conn: sources_page(conn, links, settings),
                            dashboard_version)


def _register_files(app: FastAPI, ui: _Pages, reports: Path | None) -> None:
    """The run reports under ``/reports`` and the Data Docs (their index page, kept, and their files)."""
    from fastapi import Header
    from fastapi.responses import FileResponse, HTMLResponse

    cached, links, settings, not_found = ui.cached, ui.links, ui.settings, ui.not_found

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
    async def datadocs(if_none_match: str | None = Header(None)) -> Response:
        return await cached(if_none_match, ("datadocs",), lambda conn: datadocs_page(conn, links, settings))

    @app.get("/datadocs/files/{name:path}", response_model=None)
    def datadocs_file(name: str) -> FileResponse | HTMLResponse:
        root = settings.data_docs
        if root is not None and name.endswith(".html"):
            html = offline_page(root, name, links.static("datadocs.css"), links.datadocs())
            if html is not None:
                return HTMLResponse(html, headers={
                    "Content-Security-Policy": DATA_DOCS_CSP + "; frame-ancestors 'self'",
                    "X-Content-Type-Options": "nosniff"})
        elif root is not None and name.startswith("static/"):
            path = resolve_inside(root, name)
            if path is not None:
                return FileResponse(path)
        return not_found(NotFound(f"no Data Docs file {name!r}"))


def _register_health(app: FastAPI, ui: _Pages) -> None:
    """The health check, and ``/index.html`` redirected to the overview."""
    from fastapi.responses import RedirectResponse

    links = ui.links

    @app.get("/healthz")
    def healthz() -> dict[str, str]:
        return {"status": "ok"}

    @app.get("/index.html", include_in_schema=False)
    def index() -> RedirectResponse:
        return RedirectResponse(links.overview() or "/")
