"""The sanitised page of tests/test_htmlpolicy.py opened in headless Chromium: nothing runs, navigates or
leaves the machine. Here, beside the dashboard's browser tests, because it shares their session's browser (a
second sync Playwright inside the session's one is refused)."""

from __future__ import annotations

from evalops.util.htmlpolicy import DATA_DOCS_CSP, sanitized_page
from tests.test_htmlpolicy import PAGE


def test_in_chromium(tmp_path, browser):
    """Nothing runs, navigates or leaves the machine when the sanitised page is opened in a browser."""
    target = tmp_path / "page.html"
    target.write_text(sanitized_page(PAGE, DATA_DOCS_CSP), encoding="utf-8")
    elsewhere: list[str] = []
    context = browser.new_context()
    try:
        context.route("**/*", lambda route: route.continue_() if route.request.url.startswith("file://")
                      else (elsewhere.append(route.request.url), route.abort()))
        page = context.new_page()
        page.goto(target.as_uri())
        page.wait_for_timeout(300)  # a meta refresh of 0 s, an animation or an image error would have fired
        assert page.url == target.as_uri()
        assert page.evaluate("window.__pwned") is None
        assert page.locator("script, iframe, object, embed, base, animate, set, meta[http-equiv=refresh]").count() == 0
        assert page.evaluate("""() => [...document.querySelectorAll('*')].flatMap(e => [...e.attributes])
            .filter(a => a.name.startsWith('on') || /^\\s*javascript:/i.test(a.value)).length""") == 0
        page.click("#p1")  # the former javascript: link now goes nowhere
        page.wait_for_timeout(50)
        assert page.evaluate("window.__pwned") is None
    finally:
        context.close()
    assert elsewhere == []
