"""The sanitiser every page evalops writes or serves goes through (evalops.util.htmlpolicy.sanitized_page).

Each payload below got through the regular-expression pass it replaces. The output is checked twice: parsed
with Python's HTML parser (no active element, attribute or URL may remain), and, when Debian's chromium is
installed, loaded in it from ``file://`` with every other request aborted and recorded (nothing may run,
navigate or ask another host for anything).
"""

from __future__ import annotations

import re
from html.parser import HTMLParser

import pytest

from evalops.util.htmlpolicy import DASHBOARD_CSP, DATA_DOCS_CSP, REPORT_CSP, safe_css, sanitized_page

# name -> markup placed in the body (or the head, for the head_ payloads)
PAYLOADS = {
    "entity_javascript_link": '<a id="p1" href="jav&#x61;script:window.__pwned=1">link</a>',
    "tab_javascript_link": '<a href="java&#9;script:window.__pwned=1">tab</a>',
    "meta_refresh_body": '<meta content="0;url=javascript:window.__pwned=2" http-equiv=refresh>',
    "svg_animate": ('<svg width="10" height="10"><a id="p3"><animate attributeName="href" '
                    'values="javascript:window.__pwned=3"/><set attributeName="href" to="javascript:1"/>'
                    '<rect width="5" height="5"/></a></svg>'),
    "css_url_attribute": '<div style="background:url(https://evil.example/a.png);color:red">styled</div>',
    "backslash_source": '<img src="https:/\\evil.example/b.png" alt="b">',
    "protocol_relative_source": '<img src="//evil.example/c.png" alt="c">',
    "iframe": '<iframe src="javascript:parent.__pwned=4"></iframe>',
    "handler": '<img src=x onerror="window.__pwned=5"><svg onload="window.__pwned=6"></svg>',
    "base": '<base href="https://evil.example/">',
    "form_elsewhere": '<form method="post" action="https://evil.example/"><button formaction="javascript:1">go</button></form>',
    "object": '<object data="https://evil.example/x.swf"></object><embed src="https://evil.example/y">',
}
HEAD_PAYLOADS = (
    '<meta http-equiv="refresh" content="0;url=https://evil.example/">'
    '<link rel="stylesheet" href="https:/\\evil.example/a.css"><link rel="stylesheet" href="//evil.example/b.css">'
    '<style>@import url(https://evil.example/c.css); body{background:url(//evil.example/d.png)} '
    '.e{background:u\\72l(https://evil.example/e.png)} .f{background-image:image-set("https://evil.example/f.png" 1x)}'
    '</style><script>window.__pwned=7</script><base href="https://evil.example/">'
)
PAGE = (f"<!doctype html><html><head><title>t</title>{HEAD_PAYLOADS}</head><body><p>kept</p>"
        f"{''.join(PAYLOADS.values())}</body></html>")

_ACTIVE_TAGS = {"script", "iframe", "frame", "object", "embed", "base", "animate", "set", "animatemotion",
                "animatetransform", "foreignobject", "use", "noscript", "template"}
_URL_ATTRIBUTES = {"href", "src", "action", "formaction", "xlink:href", "data", "values", "to", "from", "background"}


class _Audit(HTMLParser):
    """Everything in a page that could run, navigate or load from another host."""

    def __init__(self) -> None:
        super().__init__()
        self.problems: list[str] = []
        self.csp: list[str] = []
        self._in_style = False

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        values = {k: v or "" for k, v in attrs}
        if tag in _ACTIVE_TAGS:
            self.problems.append(f"<{tag}>")
        if tag == "meta":
            if values.get("http-equiv", "").lower() == "content-security-policy":
                self.csp.append(values.get("content", ""))
            elif "http-equiv" in values:
                self.problems.append(f"<meta http-equiv={values['http-equiv']}>")
        for name, value in values.items():
            if name.startswith("on"):
                self.problems.append(f"{tag} {name}=")
            if name == "style" and _css_problem(value):
                self.problems.append(f"{tag} style={value!r}")
            if name in _URL_ATTRIBUTES and _url_problem(value, resource=tag != "a"):
                self.problems.append(f"{tag} {name}={value!r}")
        self._in_style = tag == "style"

    def handle_endtag(self, tag: str) -> None:
        self._in_style = False

    def handle_data(self, data: str) -> None:
        if self._in_style and _css_problem(data):
            self.problems.append(f"<style>{data!r}")


def _url_problem(value: str, resource: bool) -> bool:
    value = re.sub(r"[\x00-\x20]", "", value).lower()
    if resource and (value.startswith("data:image/") or value == "data:,"):  # data:, is the empty icon
        return False
    if "\\" in value or value.startswith("//") or value.startswith(("javascript:", "vbscript:", "data:")):
        return True
    return resource and re.match(r"^[a-z][a-z0-9+.-]*:", value) is not None


def _css_problem(css: str) -> bool:
    css = css.lower()
    urls = re.findall(r"url\s*\(\s*[\"']?([^\"')]*)", css)
    return ("@import" in css or "\\" in css or "image-set" in css or "expression" in css
            or any(_url_problem(u, resource=True) for u in urls))


def _audit(page: str) -> _Audit:
    audit = _Audit()
    audit.feed(page)
    audit.close()
    return audit


def test_the_audit_sees_every_payload():
    """The checker itself: each payload, unsanitised, is a problem it reports (else the tests below prove nothing)."""
    for name, payload in PAYLOADS.items():
        assert _audit(payload).problems, name
    assert len(_audit(f"<head>{HEAD_PAYLOADS}</head>").problems) >= 6


@pytest.mark.parametrize("policy", [REPORT_CSP, DASHBOARD_CSP, DATA_DOCS_CSP])
def test_no_payload_survives_and_the_policy_is_the_only_meta(policy):
    out = sanitized_page(PAGE, policy)
    audit = _audit(out)
    assert audit.problems == []
    assert audit.csp == [policy]
    assert "<p>kept</p>" in out and 'alt="b"' in out and ">styled</div>" in out  # the content stays


@pytest.mark.parametrize("name", sorted(PAYLOADS))
def test_each_payload_alone(name):
    assert _audit(sanitized_page(f"<html><body>{PAYLOADS[name]}</body></html>", DATA_DOCS_CSP)).problems == []


def test_what_a_page_may_keep():
    page = ('<html lang="de"><head><title>a &lt;b&gt; &amp; c</title><link rel="stylesheet" href="static/site.css">'
            '<style>td{color:red;background:url(data:image/png;base64,AAAA)}</style></head><body>'
            '<a href="../runs?x=1&amp;y=2">runs</a><a href="https://example.org/doc">doc</a>'
            '<img src="data:image/svg+xml;base64,PHN2Zz4=" alt="chart"><img src="img/local.png" alt="l">'
            '<form method="get"><select name="r"><option value="a" selected>a</option></select></form>'
            '<svg class="chart" viewBox="0 0 10 10" role="img" aria-label="t"><g data-series="s">'
            '<polyline points="0,0 1,1" stroke="#333" stroke-dasharray="2 2"/><text x="1" text-anchor="end">1</text>'
            '</g></svg><div style="color:red;width:10px">d</div></body></html>')
    out = sanitized_page(page, DATA_DOCS_CSP, ("../static/extra.css",))
    assert '<html lang="de">' in out and "<title>a &lt;b&gt; &amp; c</title>" in out
    assert '<link rel="stylesheet" href="static/site.css"><link rel="stylesheet" href="../static/extra.css">' in out
    assert "td{color:red;background:url(data:image/png;base64,AAAA)}" in out
    for kept in ('href="../runs?x=1&amp;y=2"', 'href="https://example.org/doc"', 'src="img/local.png"',
                 'src="data:image/svg+xml;base64,PHN2Zz4="', 'viewBox="0 0 10 10"', 'data-series="s"',
                 'stroke-dasharray="2 2"', 'text-anchor="end"', '<option value="a" selected', 'method="get"',
                 'style="color:red;width:10px"'):
        assert kept in out, kept


def test_a_labelling_form_keeps_its_post_back_to_the_same_host():
    """The labelling pages post grades (with credentials and a CSRF token) to a relative action; a form aimed
    at another host, or at a scheme, loses its action (and so posts back to the page itself)."""
    page = ('<html><body><form method="post" action="/label/item/ab12" class="label">'
            '<input type="hidden" name="csrf" value="t0k"><button type="submit" name="grade" value="2" accesskey="2">'
            '2</button><textarea name="comment" rows="2" maxlength="10">a &lt;b&gt;</textarea>'
            '<input name="annotator" maxlength="64" required></form>'
            '<form method="POST" action="https://evil.example/x"></form><form method="post" action="//evil.example/"></form>'
            '<form method="post" action="javascript:alert(1)"></form><form method="dialog" action="data:image/png,x"></form>'
            '</body></html>')
    out = sanitized_page(page, DASHBOARD_CSP)
    for kept in ('<form method="post" action="/label/item/ab12" class="label">', 'name="csrf" value="t0k"',
                 'accesskey="2"', '<textarea name="comment" rows="2" maxlength="10">a &lt;b&gt;</textarea>',
                 'maxlength="64" required'):
        assert kept in out, kept
    assert "evil.example" not in out and "javascript" not in out and "data:image/png,x" not in out
    assert out.count('method="post"') == 4 and out.count('method="get"') == 1
    assert _audit(out).problems == []


def test_inline_styles_only_where_the_policy_allows_them():
    page = "<html><head><style>p{color:red}</style></head><body><p>x</p></body></html>"
    assert "<style>" in sanitized_page(page, REPORT_CSP)
    assert "<style>" not in sanitized_page(page, DASHBOARD_CSP)  # style-src 'self'


def test_a_remote_stylesheet_argument_is_refused():
    with pytest.raises(ValueError, match="same-host"):
        sanitized_page("<p>x</p>", DATA_DOCS_CSP, ("https://cdn.example/x.css",))


def test_safe_css():
    assert safe_css("a{background:url('img/x.png')}") == "a{background:url('img/x.png')}"
    assert safe_css("a{background:url( https://evil.example/x )}") == "a{background:none}"
    assert safe_css("@import 'https://evil.example/a.css';b{color:red}") == "b{color:red}"
    assert "url(" not in safe_css("a{background:u\\72 l(//evil.example/x)}")  # the escape spelt "url("
    assert "</style" not in safe_css("a{}</style><script>x</script>")


def test_the_writers_use_it():
    """The run report (written and served) and the dashboard's pages are rebuilt by the sanitiser."""
    from evalops.reports import ReportData
    from evalops.reports.render import render_html

    data = ReportData(run_key="r", day="2024-06-02", generated_at="2024-06-02T03:04:05+00:00", fingerprint="fp",
                      fingerprint_components={}, policies={}, title="evalops", versions=[], ab_results=[],
                      changes=[], stale_baselines=[], alerts=[])
    report = render_html(data)
    assert '<link rel="icon" href="data:,">' in report  # only the sanitiser's head has it
    assert _audit(report).csp == [REPORT_CSP]
