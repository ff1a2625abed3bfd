"""MkDocs hook: the docstrings use Sphinx roles (``:func:`name```); Markdown renders the role as text before
the code span. Drop the role so the API pages read ``name`` in code, as the source means."""

from __future__ import annotations

import re

_ROLE = re.compile(r":(?:py:)?(?:func|class|mod|meth|attr|data|exc|obj|const):(?=<code>)")


def on_page_content(html: str, **_: object) -> str:
    return _ROLE.sub("", html)
