"""The settings table of the README is the one the code generates."""

from __future__ import annotations

from evalops.config import settings_table


def test_readme_settings_table_is_generated_from_the_code(repo_root):
    text = (repo_root / "README.md").read_text(encoding="utf-8")
    start, end = "<!-- settings-table:start -->\n", "\n<!-- settings-table:end -->"
    assert start in text and end in text
    documented = text.split(start, 1)[1].split(end, 1)[0].strip()
    assert documented == settings_table(), (
        "README settings table is stale; regenerate it with "
        "`python -c 'from evalops.config import settings_table; print(settings_table())'`")
