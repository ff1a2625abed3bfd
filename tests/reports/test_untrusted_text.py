"""Untrusted text per medium: markdown link and image syntax escaped, control and bidi characters dropped,
long text cut with a marker (report.md and report.html); the shared rules in evalops.util.safetext."""

from __future__ import annotations

import pytest

from evalops.reports.render import md_escape
from evalops.util.safetext import markdown_inline, plain, truncate

EVIL = "[phish](http://evil.example/x) ![px](http://evil.example/p.png) <img src=x> a|b `rm` *bold*"


def test_markdown_links_images_html_and_cells_are_inert():
    out = markdown_inline(EVIL)
    assert out == ("\\[phish\\](http://evil.example/x) \\!\\[px\\](http://evil.example/p.png) &lt;img src=x> "
                   "a\\|b \\`rm\\` \\*bold\\*")
    assert "](" not in out.replace("\\](", "")


@pytest.mark.parametrize("char", ["\u202e", "\u202d", "\u2066", "\u200f", "\x00", "\x1b", "\x7f", "\x9b"])
def test_control_and_bidi_characters_are_dropped(char):
    assert plain(f"ab{char}cd") == "abcd"
    assert char not in md_escape(f"x{char}y")


def test_newlines_become_spaces_unless_kept():
    assert plain("a\nb\r\nc\td") == "a b c d"
    assert plain("a\nb\r\nc", keep_newlines=True) == "a\nb\nc"


def test_long_text_is_cut_with_a_marker():
    assert truncate("x" * 20000, 100) == "x" * 100 + "… (19900 more characters)"
    assert md_escape("y" * 20000).endswith("… (18000 more characters)")
    assert truncate("short", 100) == "short"
