"""Data Docs keep one page per validation: a later validation never removes an earlier one's page."""

from __future__ import annotations

import pytest

from evalops.contracts import validate_gold_set

pytestmark = pytest.mark.slow


def test_each_validation_keeps_its_page(gold, snapshot, rules, tmp_path):
    docs = tmp_path / "docs"
    first = validate_gold_set(gold, snapshot, rules, docs_dir=docs)
    pages = sorted(p.relative_to(docs) for p in (docs / "validations").rglob("*.html"))
    assert first.docs_path == str(docs / "index.html") and pages
    validate_gold_set(gold, snapshot, rules, docs_dir=docs)
    again = sorted(p.relative_to(docs) for p in (docs / "validations").rglob("*.html"))
    assert set(pages) < set(again), "the second validation removed or did not add pages"
    assert len(again) == 2 * len(pages)
    assert not [p for p in docs.iterdir() if p.name.startswith(".site-")]  # the build folder is gone


def test_every_page_links_the_stylesheets_the_site_holds(gold, snapshot, rules, tmp_path):
    """A page opened from disk (the report links the site's index) reads as the dashboard shows it: the
    site's own stylesheet and evalops' (copied from the one the dashboard serves) are in the site and linked
    by every page, relative to it."""
    import re
    from pathlib import Path

    import evalops

    docs = tmp_path / "docs"
    validate_gold_set(gold, snapshot, rules, docs_dir=docs)
    own = docs / "static" / "styles" / "evalops_datadocs.css"
    served = Path(evalops.__file__).parent / "dashboard" / "static" / "datadocs.css"
    assert own.read_bytes() == served.read_bytes()
    pages = list(docs.rglob("*.html"))
    assert pages
    for page in pages:
        links = re.findall(r'<link rel="stylesheet" href="([^"]+)">', page.read_text())
        targets = {(page.parent / href).resolve() for href in links}
        assert own.resolve() in targets and (docs / "static/styles/data_docs_default_styles.css").resolve() in targets
