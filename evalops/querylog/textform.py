"""The one normal form of text that the scrubber reads and that evalops shows.

Personal data has to be looked for in the text people will see, not in the bytes that were logged:
``john＠example.com`` (full-width), ``4111 1111 1111 1111`` with no-break or thin spaces, ``𝟒𝟏𝟏𝟏…``
(math-bold digits) and ``٤١١١…`` (Arabic-Indic digits) all read as the plain form once displayed. When
the scrubber ran before normalisation, such forms passed it and were then normalised into plain PII.
So :func:`fold` is applied first, and both the scrubber and the display form are built on it:

* Unicode NFKC (full-width and compatibility forms become their plain letters, digits and symbols);
* every Unicode decimal digit (category Nd) becomes its ASCII digit;
* invisible characters a number or an address can hide behind are dropped: zero-width space, joiner and
  non-joiner, word joiner, BOM, soft hyphen, the invisible operators (U+2061-U+2064), the Mongolian vowel
  separator and the bidi controls (``evalops.util.safetext.plain`` drops those wherever text is shown, so
  ``john@exam<U+200E>ple.com`` is displayed as the plain address);
* the hyphens, the figure dash, the en dash and the minus sign (U+2010-U+2013, U+2212) become ``-``, so
  ``4111–1111–1111–1111`` is the card number it reads as;
* every run of whitespace (all Unicode space separators, tabs, ...) becomes one space, or one ``\\n`` when
  the run holds a line break, so line structure survives while the patterns see one separator.

:func:`fold` is idempotent, and ``" ".join(fold(t).split())`` is the display form.
"""

from __future__ import annotations

import re
import unicodedata

__all__ = ["fold", "LINE_BREAKS"]

LINE_BREAKS = "\n\r\v\f\x1c\x1d\x1e\x85\u2028\u2029"  # what str.splitlines() breaks on
_TRANSLATION: dict[int, str | None] = dict.fromkeys(map(ord, "\u200b\u200c\u200d\u2060\u2061\u2062\u2063\u2064"
                                                         "\ufeff\u00ad\u180e\u061c\u200e\u200f\u202a\u202b"
                                                         "\u202c\u202d\u202e\u2066\u2067\u2068\u2069"))
_TRANSLATION.update(dict.fromkeys(map(ord, "\u2010\u2011\u2012\u2013\u2212"), "-"))
_DIGIT = re.compile(r"\d")  # for str patterns: exactly the Unicode category Nd
_SPACE_RUN = re.compile(r"\s+")  # the same characters as str.isspace() / str.split()
_BREAK = re.compile(f"[{LINE_BREAKS}]")
_OTHER_WHITESPACE = re.compile(r"[^\S ]")  # whitespace that is not a plain space


def _one_space(match: re.Match[str]) -> str:
    return "\n" if _BREAK.search(match.group(0)) else " "


def _fold_once(text: str) -> str:
    text = unicodedata.normalize("NFKC", text.translate(_TRANSLATION))
    if not text.isascii():
        text = _DIGIT.sub(lambda m: str(unicodedata.decimal(m.group(0))), text)
    return _SPACE_RUN.sub(_one_space, text)


def fold(text: str) -> str:
    """``text`` in the normal form described in the module docs."""
    if text.isascii() and "  " not in text and not _OTHER_WHITESPACE.search(text):
        return text  # the common case: plain ASCII, single spaces
    once = _fold_once(text)
    # Collapsing whitespace can put two characters next to each other that NFKC composes (a space run
    # between a letter and a combining mark); a second pass reaches the fixed point.
    return once if once == (twice := _fold_once(once)) else _fold_once(twice)
