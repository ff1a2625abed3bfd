"""Personal-data scrubbing for query text, applied before anything from the logs is stored.

Each match is replaced by a placeholder naming its kind. Patterns, in the order they are applied (longer
digit runs first, so an ID-card number is not half-eaten as a phone number):

==============  ==============================================================================  ============
kind            what matches                                                                    placeholder
==============  ==============================================================================  ============
email           ``local@domain.tld``                                                            ``<EMAIL>``
cn_id_card      PRC resident ID: 18 characters (6-digit area, ``YYYYMMDD`` birth date 18xx-20xx,  ``<ID_CARD>``
                3-digit sequence, digit or X check) or the older 15-digit form (``YYMMDD``).
                The check digit is not verified: scrubbing a look-alike costs less than leaking one.
card            payment card: 13-19 digits, optionally grouped by spaces or dashes, passing the  ``<CARD>``
                Luhn check (so order numbers and long codes survive)
cn_mobile       mainland China mobile: ``1[3-9]`` + 9 digits, optionally ``+86``/``86`` and       ``<PHONE>``
                ``-``/space groups (3-4-4)
phone           other phone numbers: an optional ``+country`` code, an optional ``(area)``,      ``<PHONE>``
                then 2-4 digit groups separated by space, dot or dash, 7-15 digits in all
==============  ==============================================================================  ============

Digits joined to letters (``ORDER-2024``, ``ORDER-2024-0315``, ``AX-350``, ``PB-20000``) and decimals
are never matched: every pattern needs a boundary that is not a word character, nor a dash or dot right
after one. A digit run containing an ISO date (``2025-03-01``) is neither a phone nor a card number.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass

__all__ = ["scrub", "scrub_many", "PII_KINDS", "ScrubResult"]

# Boundaries: not inside a Latin word, a number, an e-mail address, a dash/dot-joined code or a decimal.
# ASCII classes on purpose: Chinese text runs straight into numbers ("手机号是13812345678"), and
# Python's Unicode \w would count the Han character as part of the word.
_W = "A-Za-z0-9_"
_B = rf"(?<![{_W}+@])(?<![{_W}][-.])"
_E = rf"(?![{_W}@])(?![-.][{_W}])"

EMAIL = re.compile(rf"(?<![{_W}.+-])[A-Za-z0-9._%+-]+@[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)*\.[A-Za-z]{{2,}}(?![{_W}-])")
CN_ID_CARD = re.compile(
    _B + r"(?:[1-9]\d{5}(?:18|19|20)\d{2}(?:0[1-9]|1[0-2])(?:0[1-9]|[12]\d|3[01])\d{3}[\dXx]"
    r"|[1-9]\d{5}\d{2}(?:0[1-9]|1[0-2])(?:0[1-9]|[12]\d|3[01])\d{3})" + _E
)
CARD = re.compile(_B + r"\d(?:[ -]?\d){12,18}" + _E)
CN_MOBILE = re.compile(_B + r"(?:(?:\+|00)?86[ -]?)?1[3-9]\d(?:[ -]?\d{4}){2}" + _E)
PHONE = re.compile(_B + r"(?:\+\d{1,3}[ .-]?)?(?:\(\d{1,4}\)[ .-]?)?\d{2,4}(?:[ .-]\d{2,4}){1,4}" + _E)

PII_KINDS: tuple[str, ...] = ("email", "cn_id_card", "card", "cn_mobile", "phone")
_PLACEHOLDER = {
    "email": "<EMAIL>",
    "cn_id_card": "<ID_CARD>",
    "card": "<CARD>",
    "cn_mobile": "<PHONE>",
    "phone": "<PHONE>",
}
# Cheap pre-test: text without '@' and without a run of 7+ digit-ish characters has nothing to scrub.
_CANDIDATE = re.compile(r"@|\d[\d ().+-]{5,}\d")


def _luhn_ok(digits: str) -> bool:
    total = 0
    for i, ch in enumerate(reversed(digits)):
        d = ord(ch) - 48
        if i % 2:
            d *= 2
            if d > 9:
                d -= 9
        total += d
    return total % 10 == 0


def _digit_count(text: str) -> int:
    return sum(ch.isdigit() for ch in text)


@dataclass(frozen=True)
class ScrubResult:
    text: str
    found: Counter[str]


def _replacer(kind: str, counts: Counter[str], accept: Callable[[str], bool] | None = None) -> Callable[[re.Match[str]], str]:
    def replace(match: re.Match[str]) -> str:
        value = match.group(0)
        if accept is not None and not accept(value):
            return value
        counts[kind] += 1
        return _PLACEHOLDER[kind]

    return replace


_ISO_DATE = re.compile(r"\d{4}[-/.]\d{1,2}[-/.]\d{1,2}")


def _is_card(value: str) -> bool:
    digits = re.sub(r"\D", "", value)
    return 13 <= len(digits) <= 19 and _luhn_ok(digits) and not _ISO_DATE.search(value)



def _is_phone(value: str) -> bool:
    return 7 <= _digit_count(value) <= 15 and not _ISO_DATE.search(value)


_STEPS: tuple[tuple[str, re.Pattern[str], Callable[[str], bool] | None], ...] = (
    ("email", EMAIL, None),
    ("cn_id_card", CN_ID_CARD, None),
    ("card", CARD, _is_card),
    ("cn_mobile", CN_MOBILE, None),
    ("phone", PHONE, _is_phone),
)


def scrub(text: str) -> ScrubResult:
    """Replace personal data in ``text`` with placeholders; count what was found by kind."""
    counts: Counter[str] = Counter()
    if not _CANDIDATE.search(text):
        return ScrubResult(text, counts)
    for kind, pattern, accept in _STEPS:
        text = pattern.sub(_replacer(kind, counts, accept), text)
    return ScrubResult(text, counts)


def scrub_many(texts: list[str]) -> tuple[list[str], Counter[str]]:
    """``scrub`` each text; returns the scrubbed texts and the total counts by kind."""
    total: Counter[str] = Counter()
    out = []
    for text in texts:
        result = scrub(text)
        out.append(result.text)
        total.update(result.found)
    return out, total
