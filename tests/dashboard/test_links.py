"""Every link of every page resolves: the served app answers each one (a crawl from the overview), and an
export's links name files that are in it. Data Docs pages link to their expectation suites, the GX index
and GX's own assets; those must resolve too, or not be there."""

from __future__ import annotations

import posixpath
import re
from html.parser import HTMLParser
from urllib.parse import urldefrag, urljoin, urlsplit

import httpx
import pytest

pytestmark = pytest.mark.slow


class _Refs(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.refs: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.refs += [value for name, value in attrs if name in ("href", "src", "action") and value]


def refs(html: str) -> list[str]:
    parser = _Refs()
    parser.feed(html)
    return parser.refs


def crawl(base: str) -> dict[str, tuple[int, str]]:
    """``{path?query: (status, the page that linked to it)}`` for every page reachable from ``base/``."""
    seen: dict[str, tuple[int, str]] = {}
    todo = [("/", "")]
    with httpx.Client(base_url=base, follow_redirects=False, timeout=60) as client:
        while todo:
            url, parent = todo.pop()
            if url in seen:
                continue
            response = client.get(url)
            seen[url] = (response.status_code, parent)
            if response.status_code != 200 or "text/html" not in response.headers.get("content-type", ""):
                continue
            for ref in refs(response.text):
                target = urldefrag(urljoin(base + url, ref))[0]
                if target.startswith(base + "/"):
                    parts = urlsplit(target)
                    todo.append((parts.path + (f"?{parts.query}" if parts.query else ""), url))
    return seen


def test_every_link_of_the_served_dashboard_answers(server):
    seen = crawl(server.url)
    broken = {url: found for url, found in seen.items() if found[0] != 200}
    assert broken == {}
    # the crawl reached what it is here for: Data Docs pages, their suites, GX's own assets, the reports
    assert any(u.startswith("/datadocs/files/validations/") for u in seen)
    assert sum(u.startswith("/datadocs/files/expectations/") for u in seen) == 4
    assert any(u.startswith("/datadocs/files/static/") for u in seen)
    assert any(u.startswith("/reports/") for u in seen) and any(u.startswith("/ab/") for u in seen)


def test_every_link_of_an_export_names_a_file_in_it(filled, tmp_path):
    from evalops.dashboard import DashboardSettings
    from evalops.dashboard.export import export_site

    out = tmp_path / "site"
    export_site(filled["engine"], out, settings=DashboardSettings.from_config(filled["cfg"]),
                report_dir=filled["cfg"].report_dir)
    pages = sorted(out.rglob("*.html"))
    missing = []
    for page in pages:
        folder = page.parent.relative_to(out).as_posix()
        for ref in refs(page.read_text(encoding="utf-8")):
            if ref.startswith("#") or re.match(r"^[a-zA-Z][a-zA-Z0-9+.-]*:|^//", ref):
                continue  # an anchor, or another site (inert pages keep no resource from one)
            target = posixpath.normpath(posixpath.join(folder, urldefrag(ref)[0].split("?", 1)[0]))
            if target.startswith("..") or not (out / target).is_file():
                missing.append((page.relative_to(out).as_posix(), ref))
    assert missing == []
    names = {p.relative_to(out).as_posix() for p in pages}
    assert sum(n.startswith("datadocs/expectations/") for n in names) == 4
    assert any(n.startswith("datadocs/validations/") for n in names)


def test_a_data_docs_page_keeps_only_links_that_resolve(tmp_path):
    from evalops.dashboard.datadocs import offline_page

    root = tmp_path / "docs"
    page = root / "validations" / "s" / "t" / "run" / "20240601T000000Z" / "v.html"
    page.parent.mkdir(parents=True)
    (root / "expectations").mkdir()
    (root / "expectations" / "s.html").write_text("<html><head></head><body>suite</body></html>")
    (root / "static" / "images").mkdir(parents=True)
    (root / "static" / "images" / "logo.png").write_bytes(b"png")
    up = "../" * 5
    page.write_text(
        f'<html><head><link rel="icon" href="../../../../static/images/favicon.ico"></head><body>'
        f'<a href="{up}index.html">Home</a> <a href="{up}expectations/s.html#x">suite</a> '
        f'<a href="{up}expectations/gone.html">gone</a> <img src="{up}static/images/logo.png"> '
        f'<a href="#section-1">top</a> <a href="{up}../../etc/passwd">out</a></body></html>')
    html = offline_page(root, page.relative_to(root).as_posix(), "/static/datadocs.css", "/datadocs?a=1&b=2")
    assert '<a href="/datadocs?a=1&amp;b=2">Home</a>' in html
    assert f'<a href="{up}expectations/s.html#x">suite</a>' in html and f'src="{up}static/images/logo.png"' in html
    assert '<a href="#section-1">top</a>' in html
    assert "<a>gone</a>" in html and "<a>out</a>" in html and "favicon" not in html
    suite = offline_page(root, "expectations/s.html", "/static/datadocs.css", "/datadocs")
    assert suite is not None and "suite" in suite
