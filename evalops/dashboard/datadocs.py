"""Great Expectations Data Docs, readable offline.

Each validation writes its page under ``<work_dir>/data_docs/validations/<suite>/<table>/<run>/<timestamp>/``.
The pages load Bootstrap, jQuery and Vega from CDNs, so offline they are unstyled. Here every validation
page present is listed (newest first, grouped by day) and served rewritten by
:func:`evalops.htmlpolicy.sanitized_page` (pages written before evalops made them inert itself are made so here):
every ``<script>``, event handler and stylesheet or image from another host is removed, the Data Docs
Content-Security-Policy is set, and the GX site's own local stylesheet plus a small one of ours are linked. The result tables are plain HTML in the pages, so they read the same; only the
interactive widgets (filters, Vega charts) are lost.

``evalops.contracts._gx`` builds each validation's site apart and copies it in, so the folder keeps one page
per validation (GX's site builder alone would keep only the latest).
"""

from __future__ import annotations

import datetime as dt
import re
from pathlib import Path
from typing import Any

from evalops.htmlpolicy import DATA_DOCS_CSP, sanitized_page

__all__ = ["list_validations", "offline_page"]

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
        when = (dt.datetime.strptime(match.group(1), "%Y%m%dT%H%M%S").replace(tzinfo=dt.timezone.utc)
                if match else None)
        found.append({"suite": suite, "table": table, "when": when, "path": page.relative_to(base).as_posix()})
    found.sort(key=lambda v: (v["when"] or dt.datetime.min.replace(tzinfo=dt.timezone.utc), v["path"]),
               reverse=True)
    return found


def resolve_inside(root: str | Path, relative: str) -> Path | None:
    """``root/relative`` if it is a file inside ``root`` (no ``..`` escape), else None."""
    base = Path(root).resolve()
    path = (base / relative).resolve()
    return path if base in path.parents and path.is_file() else None


def offline_page(root: str | Path, relative: str, stylesheet: str) -> str | None:
    """The validation page with no script and nothing from another host; ``stylesheet`` is the URL of the
    dashboard's Data Docs stylesheet. None when there is no such page."""
    path = resolve_inside(root, relative)
    if path is None or path.suffix != ".html" or not relative.startswith("validations/"):
        return None
    from evalops.contracts._gx import DATA_DOCS_STYLESHEET

    html = path.read_text(encoding="utf-8", errors="replace")
    depth = "../" * (len(Path(relative).parts) - 1)
    return sanitized_page(html, DATA_DOCS_CSP, (f"{depth}{DATA_DOCS_STYLESHEET}", stylesheet))
