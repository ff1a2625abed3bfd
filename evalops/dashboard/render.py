"""Jinja2 rendering of the pages (autoescape on for every template), each page then through the sanitiser
(:func:`evalops.util.htmlpolicy.sanitized_page`)."""

from __future__ import annotations

import functools
from pathlib import Path
from typing import TYPE_CHECKING, Any

from evalops.dashboard.pages import DashboardSettings
from evalops.util.htmlpolicy import DASHBOARD_CSP, sanitized_page

if TYPE_CHECKING:  # pragma: no cover
    import jinja2

    from evalops.dashboard.links import Links

__all__ = ["STATIC", "TEMPLATES", "environment", "render_page"]

HERE = Path(__file__).resolve().parent
TEMPLATES = HERE / "templates"
STATIC = HERE / "static"


@functools.cache
def environment() -> jinja2.Environment:
    import jinja2

    return jinja2.Environment(
        loader=jinja2.FileSystemLoader(str(TEMPLATES)),
        autoescape=True,  # every template, whatever its extension: query text is untrusted
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
    )


def render_page(template: str, context: dict[str, Any], links: Links, settings: DashboardSettings,
                default_trend: dict[str, str] | None) -> str:
    page = environment().get_template(template).render(
        **context, links=links, settings=settings, default_trend=default_trend, csp=DASHBOARD_CSP
    )
    return sanitized_page(page, DASHBOARD_CSP)
