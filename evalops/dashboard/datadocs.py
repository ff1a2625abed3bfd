"""Great Expectations Data Docs, readable offline.

Each validation writes its page under ``<work_dir>/data_docs/validations/<suite>/<table>/<run>/<timestamp>/``.
The pages load Bootstrap, jQuery and Vega from CDNs, so offline they are unstyled. Here every validation
page present is listed (newest first, grouped by day) and served rewritten by
:func:`evalops.util.htmlpolicy.sanitized_page` (pages written before evalops made them inert itself are made so here):
every ``<script>``, event handler and stylesheet or image from another host is removed, the Data Docs
Content-Security-Policy is set, and the GX site's own local stylesheet plus a small one of ours are linked. The result tables are plain HTML in the pages, so they read the same; only the
interactive widgets (filters, Vega charts) are lost.

``evalops.contracts._gx`` builds each validation's site apart and copies it in, so the folder keeps one page
per validation (GX's site builder alone would keep only the latest).

Every local link of a page served or exported here resolves (:func:`_local_links`): a link to a validation
page, an expectation suite page (``expectations/<suite>.html``, served and exported too) or a file of the
GX site's ``static/`` folder that exists is kept (relative, so it works in the app and in an export alike);
a link to the GX site's index (which lists only the latest validations, by script) points at the dashboard's
Data Docs page instead; any other (a GX favicon path one folder short, a page that is not kept) is removed.
"""

from __future__ import annotations

import datetime as dt
import posixpath
import re
from html import escape as html_escape
from pathlib import Path
from typing import Any

from evalops.util.htmlpolicy import DATA_DOCS_CSP, sanitized_page

__all__ = ["list_pages", "list_validations", "offline_page"]

_STAMP = re.compile(r"^(\d{8}T\d{6})(?:\.\d+)?Z$")


def list_validations(root: str | Path | None) -> list[dict[str, Any]]:
    """Every validation page under ``root/validations`` (newest first): suite, table, when, relative path."""
    if root is None or not (Path(root) / "validations").is_dir():
        return []
    base = Path(root)
    found = []
    for page in (base / "validations").glob("*/*/*/*/*.html"):
        suite, table, _run, stamp = page.relative_to(base / "validations").parts[:4]
        match = _STAMP.match(stamp)
        when = (dt.datetime.strptime(match.group(1), "%Y%m%dT%H%M%S").replace(tzinfo=dt.UTC)
                if match else None)
        found.append({"suite": suite, "table": table, "when": when, "path": page.relative_to(base).as_posix()})
    found.sort(key=lambda v: (v["when"] or dt.datetime.min.replace(tzinfo=dt.UTC), v["path"]),
               reverse=True)
    return found


def resolve_inside(root: str | Path, relative: str) -> Path | None:
    """``root/relative`` if it is a file inside ``root`` (no ``..`` escape), else None."""
    base = Path(root).resolve()
    path = (base / relative).resolve()
    return path if base in path.parents and path.is_file() else None


# the folders of a Data Docs site whose pages are served (and exported), rewritten by :func:`offline_page`
PAGE_FOLDERS = ("validations/", "expectations/")
_LOCAL_REF = re.compile(r"""\s(href|src)\s*=\s*("[^"]*"|'[^']*')""", re.IGNORECASE)
_SCHEME = re.compile(r"^[a-zA-Z][a-zA-Z0-9+.-]*:")


def list_pages(root: str | Path | None) -> list[str]:
    """The relative path of every page served from ``root``: the validation and expectation suite pages."""
    if root is None or not Path(root).is_dir():
        return []
    base = Path(root)
    return sorted(page.relative_to(base).as_posix() for folder in PAGE_FOLDERS
                  for page in (base / folder).rglob("*.html"))


def _local_links(html: str, root: str | Path, relative: str, index: str) -> str:
    """``html`` (the page at ``relative`` under ``root``) with every local link resolving (module docstring);
    ``index`` is the URL of the dashboard's Data Docs page, as seen from the page."""
    here = posixpath.dirname(relative)

    def fix(match: re.Match[str]) -> str:
        attr, quoted = match.group(1), match.group(2)
        url = quoted[1:-1].strip()
        if not url or url.startswith(("#", "//")) or _SCHEME.match(url):
            return match.group(0)  # an anchor; remote ones are inert already (htmlpolicy) or leave the site
        path = url.split("#", 1)[0].split("?", 1)[0]
        target = posixpath.normpath(posixpath.join(here, path))
        if target == "index.html":
            return f' {attr}="{html_escape(index)}"'
        kept = (target.startswith(PAGE_FOLDERS) and target.endswith(".html")) or target.startswith("static/")
        if kept and not target.startswith("..") and resolve_inside(root, target) is not None:
            return match.group(0)
        return ""

    return _LOCAL_REF.sub(fix, html)


def offline_page(root: str | Path, relative: str, stylesheet: str, index: str) -> str | None:
    """The validation or expectation suite page with no script, nothing from another host and no dead local
    link; ``stylesheet`` is the URL of the dashboard's Data Docs stylesheet, ``index`` the URL of its Data
    Docs page. None when there is no such page."""
    path = resolve_inside(root, relative)
    if path is None or path.suffix != ".html" or not relative.startswith(PAGE_FOLDERS):
        return None
    from evalops.contracts._gx import DATA_DOCS_STYLESHEET

    html = _local_links(path.read_text(encoding="utf-8", errors="replace"), root, relative, index)
    depth = "../" * (len(Path(relative).parts) - 1)
    return sanitized_page(html, DATA_DOCS_CSP, (f"{depth}{DATA_DOCS_STYLESHEET}", stylesheet))
