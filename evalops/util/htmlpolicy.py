"""What every HTML page evalops writes or serves may do: the Content-Security-Policies, and the sanitiser every
page passes through before it is written or served.

No evalops page runs script. Each page says so twice: the dashboard sends its policy as a header, and every
page written to disk (the run report, the Data Docs, the dashboard export) carries the same policy as a
``<meta http-equiv="Content-Security-Policy">`` tag, so a page opened from ``file://`` or served by some other
web server is held to it as well. A policy delivered in a meta tag cannot say ``frame-ancestors``; the
header does.

:func:`sanitized_page` is the line of defence under the policy, for the pages evalops renders itself (run
report, dashboard; their templates also autoescape every value) and for the pages Great Expectations renders
(Data Docs; their values are also escaped before GX sees them, in :mod:`evalops.contracts._gx`). The page's
body goes through `nh3 <https://nh3.readthedocs.io>`_ (the Ammonia sanitiser: an HTML5 parser and an
allowlist, so entity-encoded or malformed markup is judged as a browser would read it) and its head is
rebuilt: charset, the policy, the title, local stylesheets, and inline ``<style>`` only where the policy
allows inline styles. What is kept:

- tags: text, tables, lists, headings, links, images, forms back to the same host (GET, or POST to a relative
  action: the labelling pages, whose posts also need credentials and a CSRF token) and the SVG shapes the
  charts draw; never ``script``, ``iframe``, ``object``, ``embed``, ``base``, ``meta`` in the body, SVG
  ``animate``/``set``, ``foreignObject`` or ``use``;
- attributes: presentation, ARIA and ``data-`` attributes; no event handler;
- URLs: a link may go to a relative URL or an ``http``, ``https`` or ``mailto`` address; a resource (an image,
  a stylesheet) only to a relative URL on the same host or a ``data:image/…`` URL; a URL with a backslash or
  a control character, or starting with ``//``, is dropped (browsers read ``https:/\\host`` as ``https://host``);
- CSS: ``style`` attributes keep only the properties in ``STYLE_PROPERTIES`` (none takes a URL); a
  ``<style>`` block loses comments, escapes, ``@import``, ``image-set()`` and every ``url()`` that is not a
  ``data:image`` or same-host relative URL.
"""

from __future__ import annotations

import functools
import html as _html
import re
from collections.abc import Iterable
from typing import Any

__all__ = ["DASHBOARD_CSP", "DATA_DOCS_CSP", "REPORT_CSP", "STYLE_PROPERTIES", "safe_css", "sanitized_page",
           "with_csp_meta"]

# The dashboard's pages: its own stylesheet, inline SVG charts, forms back to itself.
DASHBOARD_CSP = ("default-src 'none'; style-src 'self'; img-src 'self' data:; form-action 'self'; "
                 "base-uri 'none'")
# The run report is one self-contained file: inline CSS, charts as data: images (SVG).
REPORT_CSP = "default-src 'none'; style-src 'unsafe-inline'; img-src data:; form-action 'none'; base-uri 'none'"
# Data Docs keep GX's inline styles and the GX site's local stylesheet; they hold no script.
DATA_DOCS_CSP = ("default-src 'none'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; font-src 'self'; "
                 "form-action 'none'; base-uri 'none'")

_SVG_TAGS = {"svg", "g", "rect", "line", "polyline", "polygon", "circle", "ellipse", "path", "text", "tspan",
             "title", "desc"}
_FORM_TAGS = {"form", "label", "select", "option", "optgroup", "button", "input", "fieldset", "legend", "textarea"}
_PAGE_TAGS = {"main", "section", "header", "footer", "nav", "article", "aside", "figure", "figcaption",
              "details", "summary", "caption", "table", "thead", "tbody", "tfoot", "tr", "th", "td", "col",
              "colgroup", "div", "span", "p", "br", "hr", "pre", "code", "kbd", "samp", "var", "blockquote",
              "ul", "ol", "li", "dl", "dt", "dd", "h1", "h2", "h3", "h4", "h5", "h6", "a", "img", "b", "i", "u",
              "s", "em", "strong", "small", "sub", "sup", "mark", "abbr", "cite", "q", "time", "del", "ins",
              "wbr"}
_BODY_TAGS = _PAGE_TAGS | _FORM_TAGS | _SVG_TAGS
_GENERIC = {"class", "id", "title", "role", "lang", "dir", "hidden", "style", "tabindex", "accesskey"}
_ATTRIBUTES = {
    "*": _GENERIC,
    "a": {"href"}, "img": {"src", "alt", "width", "height"},
    "td": {"colspan", "rowspan", "headers"}, "th": {"colspan", "rowspan", "headers", "scope"},
    "col": {"span"}, "colgroup": {"span"}, "ol": {"start", "reversed"}, "details": {"open"},
    "time": {"datetime"}, "form": {"method", "action"}, "label": {"for"},
    "select": {"name", "multiple"}, "option": {"value", "selected"}, "optgroup": {"label"},
    "button": {"type", "name", "value"}, "input": {"type", "name", "value", "checked", "placeholder", "maxlength", "required"},
    "textarea": {"name", "rows", "cols", "maxlength", "placeholder", "required"},
    # SVG presentation and geometry (no href: links in a chart are HTML <a> around the shapes).
    **{tag: {"viewBox", "preserveAspectRatio", "width", "height", "x", "y", "x1", "y1", "x2", "y2", "cx", "cy",
             "r", "rx", "ry", "d", "points", "fill", "fill-opacity", "stroke", "stroke-width", "stroke-dasharray",
             "stroke-opacity", "opacity", "transform", "text-anchor", "dominant-baseline", "font-size",
             "font-weight", "font-family", "dx", "dy", "xmlns"} for tag in _SVG_TAGS},
}
# style="..." keeps these properties only: none of them takes a URL.
STYLE_PROPERTIES = frozenset({
    "color", "background-color", "opacity", "display", "visibility", "float", "clear", "position", "top", "right",
    "bottom", "left", "z-index", "overflow", "overflow-x", "overflow-y", "white-space", "word-break",
    "overflow-wrap", "text-align", "vertical-align", "text-decoration", "text-transform", "text-overflow",
    "font-weight", "font-style", "font-size", "font-family", "line-height", "letter-spacing", "width", "height",
    "min-width", "max-width", "min-height", "max-height", "margin", "margin-top", "margin-right", "margin-bottom",
    "margin-left", "padding", "padding-top", "padding-right", "padding-bottom", "padding-left", "border",
    "border-top", "border-right", "border-bottom", "border-left", "border-color", "border-width", "border-style",
    "border-radius", "border-collapse", "border-spacing", "table-layout", "box-sizing", "cursor", "flex",
    "flex-direction", "flex-wrap", "justify-content", "align-items", "gap", "fill", "stroke", "stroke-width",
})
_LINK_SCHEMES = {"http", "https", "mailto"}
_DATA_IMAGE = re.compile(r"data:image/(?:png|gif|jpeg|webp|svg\+xml)[;,]", re.IGNORECASE)
_SCHEME = re.compile(r"^([a-zA-Z][a-zA-Z0-9+.-]*):")
_UNSAFE_URL_CHARS = re.compile(r"[\\\x00-\x20\x7f]")

_HEAD = re.compile(r"<head\b[^>]*>(.*?)</head\s*>", re.IGNORECASE | re.DOTALL)
_BODY = re.compile(r"<body\b[^>]*>(.*)</body\s*>", re.IGNORECASE | re.DOTALL)
_STYLE_BLOCK = re.compile(r"<style\b[^>]*>(.*?)</style\s*>", re.IGNORECASE | re.DOTALL)
_TITLE = re.compile(r"<title\b[^>]*>(.*?)</title\s*>", re.IGNORECASE | re.DOTALL)
_HTML_LANG = re.compile(r"<html\b[^>]*?\blang\s*=\s*[\"']?([a-zA-Z0-9-]{1,35})", re.IGNORECASE)
# In the sanitiser's own output (attributes double-quoted, quotes inside escaped).
_STYLESHEET_LINK = re.compile(r'<link\b(?=[^>]*\brel="stylesheet")[^>]*\bhref="([^"]*)"[^>]*>')

_CSS_COMMENT = re.compile(r"/\*.*?(?:\*/|$)", re.DOTALL)
_CSS_ESCAPE = re.compile(r"\\(?:[0-9a-fA-F]{1,6}\s?|.|$)", re.DOTALL)
_CSS_IMPORT = re.compile(r"@import\b[^;]*;?", re.IGNORECASE)
_CSS_IMAGE_SET = re.compile(r"(?:-webkit-)?image-set\s*\(", re.IGNORECASE)
_CSS_URL = re.compile(r"url\s*\(\s*([\"']?)(.*?)\1\s*\)", re.IGNORECASE | re.DOTALL)


def _url_allowed(value: str, resource: bool) -> bool:
    """A link: relative, or http(s)/mailto. A resource: relative on the same host, or a data:image."""
    value = value.strip()
    if resource and _DATA_IMAGE.match(value):
        return True
    if _UNSAFE_URL_CHARS.search(value):
        return False
    scheme = _SCHEME.match(value)
    if scheme is not None:
        return not resource and scheme.group(1).lower() in _LINK_SCHEMES and value[scheme.end():].startswith("//")
    return not value.startswith("//")


def _attribute_filter(tag: str, attribute: str, value: str) -> str | None:
    if attribute in ("href", "src"):
        return value if _url_allowed(value, resource=tag != "a") else None
    if tag == "link" and attribute == "rel":
        return value if value.strip().lower() == "stylesheet" else None
    if tag == "form" and attribute == "method":
        return "post" if value.strip().lower() == "post" else "get"
    if tag == "form" and attribute == "action":  # back to the same host only: a relative URL, never data:
        return value if _url_allowed(value, resource=True) and not _DATA_IMAGE.match(value.strip()) else None
    return value


@functools.cache
def _head_cleaner() -> Any:
    """Keeps the head's stylesheet links (same-host ones, by :func:`_attribute_filter`) and nothing else."""
    import nh3

    return nh3.Cleaner(tags={"link"}, clean_content_tags={"script", "style", "title", "noscript", "template"},
                       attributes={"link": {"rel", "href"}}, attribute_filter=_attribute_filter, link_rel=None,
                       url_schemes={"data"}, strip_comments=True)


@functools.cache
def _cleaner() -> Any:
    import nh3

    return nh3.Cleaner(
        tags=_BODY_TAGS, clean_content_tags={"script", "style", "noscript", "template", "xmp",
                                             "iframe", "noembed", "noframes", "object"},
        attributes=_ATTRIBUTES, attribute_filter=_attribute_filter, generic_attribute_prefixes={"aria-", "data-"},
        url_schemes=_LINK_SCHEMES | {"data"}, link_rel=None, strip_comments=True,
        filter_style_properties=set(STYLE_PROPERTIES),
    )


def safe_css(css: str) -> str:
    """``css`` (a stylesheet) with no comment, escape, ``@import``, ``image-set()`` or remote ``url()``; a
    ``url()`` to anything but a ``data:image`` or same-host relative URL becomes ``none``."""
    css = _CSS_ESCAPE.sub("", _CSS_COMMENT.sub("", css))
    css = _CSS_IMAGE_SET.sub("none(", _CSS_IMPORT.sub("", css))
    css = _CSS_URL.sub(lambda m: m.group(0) if _url_allowed(m.group(2), True) else "none", css)
    return css.replace("<", "")  # the block stays one raw-text element


def csp_meta(policy: str) -> str:
    return f'<meta http-equiv="Content-Security-Policy" content="{_html.escape(policy, quote=False)}">'


def with_csp_meta(page: str, policy: str) -> str:
    """``page`` with ``policy`` as its first element inside ``<head>`` (a head is added when there is none)."""
    tag = csp_meta(policy)
    match = re.search(r"<head\b[^>]*>", page, re.IGNORECASE)
    if match is None:
        return f"<head>{tag}</head>{page}"
    return page[:match.end()] + tag + page[match.end():]


def sanitized_page(page: str, policy: str, stylesheets: Iterable[str] = ()) -> str:
    """``page`` rebuilt for ``policy``: its body through the sanitiser, its head made of the charset, the policy,
    the title (as text), the page's ``<style>`` blocks through :func:`safe_css` when the policy allows inline
    styles (``'unsafe-inline'``), its same-host stylesheet links, then ``stylesheets`` (same-host URLs). Nothing
    else of the head is kept (no other ``<meta>``, no ``<base>``, icon or script; the icon is ``data:,`` so that
    no browser asks the server for one)."""
    head_match, body_match = _HEAD.search(page), _BODY.search(page)
    head = head_match.group(1) if head_match else ""
    if body_match is not None:
        body = body_match.group(1)
    else:
        body = page[head_match.end():] if head_match else page
    title = _TITLE.search(head)
    lang = _HTML_LANG.search(page)
    parts = ["<!DOCTYPE html>\n", f'<html lang="{lang.group(1)}">' if lang else "<html>", '<head><meta charset="utf-8">',
             csp_meta(policy), '<meta name="viewport" content="width=device-width, initial-scale=1">',
             '<link rel="icon" href="data:,">']
    if title is not None:
        text = _html.unescape(title.group(1))  # a title is text (RCDATA): "<b>" in it is no tag
        parts.append(f"<title>{_html.escape(text, quote=False)}</title>")
    if "'unsafe-inline'" in policy:
        parts += [f"<style>{safe_css(css)}</style>" for css in _STYLE_BLOCK.findall(head)]
    own = [_html.unescape(h) for h in _STYLESHEET_LINK.findall(_head_cleaner().clean(head))]
    for href in [*own, *stylesheets]:
        if not _url_allowed(href, True):
            raise ValueError(f"stylesheet {href!r} is not a same-host relative URL")
        parts.append(f'<link rel="stylesheet" href="{_html.escape(href)}">')
    parts += ["</head>\n<body>", _cleaner().clean(body), "</body></html>\n"]
    return "".join(parts)
