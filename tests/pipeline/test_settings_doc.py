"""The settings table of the documentation (docs/settings.md) is the one the code generates."""

from __future__ import annotations

from evalops.config import settings_table

START, END = "<!-- settings-table:start -->\n", "\n<!-- settings-table:end -->"


def test_settings_page_table_is_generated_from_the_code(repo_root):
    text = (repo_root / "docs" / "settings.md").read_text(encoding="utf-8")
    assert START in text and END in text
    documented = text.split(START, 1)[1].split(END, 1)[0].strip()
    assert documented == settings_table(), (
        "docs/settings.md's settings table is stale; regenerate it with "
        "`python -c 'from evalops.config import settings_table; print(settings_table())'`")


def test_the_table_has_one_home(repo_root):
    """The README links to the settings page instead of keeping a second copy that could drift."""
    readme = (repo_root / "README.md").read_text(encoding="utf-8")
    assert START not in readme and "docs/settings.md" in readme
