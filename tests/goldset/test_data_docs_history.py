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
