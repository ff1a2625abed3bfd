"""Personal-data scrubbing for query text, applied before anything from the logs is stored.

Each match is replaced by a placeholder naming its kind. Patterns, in the order they are applied (longer
digit runs first, so an ID-card number is not half-eaten as a phone number):

==============  ==============================================================================  ============
kind            what matches                                                                    placeholder
==============  ==============================================================================  ============
email           ``local@domain.tld``, in any script but CJK (``jöhn@exämple.de``)                  ``<EMAIL>``
iban            an IBAN: country code, 2 check digits, 11-30 letters and digits (spaces allowed    ``<IBAN>``
                every 4, any letter case), passing the ISO 13616 mod-97 check
us_ssn          US social security number ``AAA-GG-SSSS`` (dashes required; area not 000, 666 or  ``<SSN>``
                9xx, group not 00, serial not 0000)
id_document     a passport, national ID, identity card, driving licence or social security      ``<ID>``
                number *named as such*: the word (``passport``, ``national id``, ``ID number``,
                ``护照``, ``身份证``, ...), an optional ``number``/``no.``/``#``/``:``, then a token of
                5-20 letters and digits holding at least 4 digits (the document's own number)
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

IBANs are replaced first of all (a compact IBAN would otherwise be taken for a random token). Secrets and
network addresses come next (a key's digits must not be half-eaten as a phone number):

==============  ==============================================================================  ============
kind            what matches                                                                    placeholder
==============  ==============================================================================  ============
secret_pair     ``password=…``, ``passwd:…``, ``secret=…``, ``token=…``, ``api_key=…``,          ``name=<SECRET>``
                ``access_key=…``, ``client_secret=…`` (the name is kept, the value replaced)
api_key         common key formats: ``sk-…``/``sk_live_…`` (OpenAI, Stripe), ``AKIA…``/``ASIA…``  ``<SECRET>``
                (AWS), ``ghp_…``/``gho_…``/``github_pat_…`` (GitHub), ``xox?-…`` (Slack),
                ``AIza…`` (Google), JSON web tokens, ``Bearer <token>``
ipv4            dotted quads, each part 0-255                                                   ``<IP>``
ipv6            colon-hex groups that :mod:`ipaddress` accepts as an IPv6 address               ``<IP>``
high_entropy    a token of 20+ letters, digits and ``+/_-=`` mixing letters and digits, with    ``<SECRET>``
                Shannon entropy of at least 3.5 bits per character (random keys and tokens,
                not words); evalops' own ids (``log-<hex>``) are left alone
==============  ==============================================================================  ============

**Not scrubbed**: names of people, street addresses, dates of birth, and identity numbers written without
the word that names them (a bare passport number looks like an order number); no pattern finds those
reliably. Presidio's pattern recognizers add more kinds (``query_logs.presidio`` in ``evalops.yaml``);
its name recognizer needs a spaCy model and is not used.

Plug-ins: :func:`register_recognizer` adds any object with ``analyze(text) -> [(start, end, kind)]`` (an
adapter over Presidio's pattern recognizers is :class:`PresidioRecognizers`, from the optional
``presidio`` extra); their matches are replaced by ``<KIND>`` after the built-in patterns ran.

Every pattern reads the text's normal form (:mod:`evalops.querylog.textform`): full-width forms, Unicode
digits, space separators and dashes are their ASCII forms there, invisible and bidi control characters
are gone, and a line break is a space to every pattern.

Digits joined to letters (``ORDER-2024``, ``ORDER-2024-0315``, ``AX-350``, ``PB-20000``) and decimals
are never matched: every pattern needs a boundary that is not a word character, nor a dash or dot right
after one. A digit run containing an ISO date (``2025-03-01``) is neither a phone nor a card number.
"""

from __future__ import annotations

import ipaddress
import math
import re
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from evalops.querylog.textform import fold
from evalops.util.extras import require

__all__ = [
    "PII_KINDS",
    "PresidioRecognizers",
    "Recognizer",
    "ScrubResult",
    "SECRET_KINDS",
    "clear_recognizers",
    "register_recognizer",
    "scrub",
    "use_presidio",
    "scrub_many",
]

# Boundaries: not inside a Latin word, a number, an e-mail address, a dash/dot-joined code or a decimal.
# ASCII classes on purpose: Chinese text runs straight into numbers ("手机号是13812345678"), and
# Python's Unicode \w would count the Han character as part of the word.
_W = "A-Za-z0-9_"
_B = rf"(?<![{_W}+@])(?<![{_W}][-.])"
_E = rf"(?![{_W}@])(?![-.][{_W}])"

# E-mail addresses may hold letters of any script (RFC 6531/IDNA: jöhn@exämple.de) except CJK ones, which
# run straight into an address in Chinese or Japanese text ("联系邮箱li.wei@example.com谢谢"); the marks of
# Indic scripts are word characters of an address too.
_CJK = "\u2e80-\u2fdf\u3000-\u303f\u3040-\u30ff\u3100-\u31ff\u3400-\u4dbf\u4e00-\u9fff\ua000-\ua4cf" \
       "\uac00-\ud7af\uf900-\ufaff\uff00-\uffef\U00020000-\U0003ffff"
_MARKS = "\u0300-\u036f\u0900-\u0dff"
_UW = rf"(?:(?![{_CJK}])\w|[{_MARKS}])"  # a letter, digit or _ of an address
_UL = rf"(?:(?![{_CJK}_])\w|[{_MARKS}])"  # a letter or digit of a domain label
_UA = rf"(?:(?![{_CJK}\d_])\w|[{_MARKS}])"  # a letter of a top-level domain
EMAIL = re.compile(
    rf"(?<![.%+-])(?<!{_UW})(?:{_UW}|[.%+-])+@(?:{_UL}|-)+(?:\.(?:{_UL}|-)+)*\.{_UA}{{2,}}(?!{_UW}|-)"
)
CN_ID_CARD = re.compile(
    _B + r"(?:[1-9]\d{5}(?:18|19|20)\d{2}(?:0[1-9]|1[0-2])(?:0[1-9]|[12]\d|3[01])\d{3}[\dXx]"
    r"|[1-9]\d{5}\d{2}(?:0[1-9]|1[0-2])(?:0[1-9]|[12]\d|3[01])\d{3})" + _E
)
CARD = re.compile(_B + r"\d(?:[ \n-]?\d){12,18}" + _E)
IBAN = re.compile(r"(?i)(?<![A-Z0-9])[A-Z]{2}\d{2}(?:[ \n]?[A-Z0-9]{4}){2,7}(?:[ \n]?[A-Z0-9]{1,3})?(?![A-Z0-9])")
US_SSN = re.compile(_B + r"(?!000|666|9\d\d)\d{3}-(?!00)\d{2}-(?!0000)\d{4}" + _E)
ID_DOCUMENT = re.compile(
    r"(?i)(?<![A-Za-z])((?:passport|national[ \n_-]?id(?:entity)?|identity[ \n_-]?(?:card|number|no)|id[ \n_-]?(?:card|number|no)"
    r"|driv(?:er'?s|ing)[ \n_-]?licen[cs]e|social[ \n_-]?security|personalausweis|reisepass|pasaporte|passeport"
    r"|护照|身份证)(?:[ \n_-]?(?:number|num|no\.?|nr\.?|#|号码?))?\s*[:#=]?\s*)"
    r"([A-Z0-9][A-Z0-9-]{4,19})(?![A-Za-z0-9])"
)
CN_MOBILE = re.compile(_B + r"(?:(?:\+|00)?86[ \n-]?)?1[3-9]\d(?:[ \n-]?\d{4}){2}" + _E)
PHONE = re.compile(_B + r"(?:\+\d{1,3}[ \n.-]?)?(?:\(\d{1,4}\)[ \n.-]?)?\d{2,4}(?:[ \n.-]\d{2,4}){1,4}" + _E)

_SECRET_NAMES = r"(?:password|passwd|pwd|secret|client[_-]?secret|token|access[_-]?token|api[_-]?key|apikey|access[_-]?key|secret[_-]?key|private[_-]?key)"
SECRET_PAIR = re.compile(rf"(?i)(?<![A-Za-z0-9])({_SECRET_NAMES}\s*([=:])\s*)(\"[^\"]*\"|'[^']*'|[^\s&,;]+)")
API_KEY = re.compile(
    r"(?<![A-Za-z0-9])(?:"
    r"sk[-_](?:live[-_]|test[-_]|proj[-_])?[A-Za-z0-9_-]{16,}"
    r"|(?:rk|pk)_(?:live|test)_[A-Za-z0-9]{16,}"
    r"|(?:AKIA|ASIA)[0-9A-Z]{16}"
    r"|gh[pousr]_[A-Za-z0-9]{30,}"
    r"|github_pat_[A-Za-z0-9_]{30,}"
    r"|xox[abposr]-[A-Za-z0-9-]{10,}"
    r"|AIza[0-9A-Za-z_-]{35}"
    r"|eyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}"
    r")(?![A-Za-z0-9])"
    r"|(?i:bearer)\s+[A-Za-z0-9._~+/-]{16,}=*"
)
IPV4 = re.compile(r"(?<![\w.])(?:(?:25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)\.){3}(?:25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)(?![\w]|\.\d)")
IPV6 = re.compile(r"(?<![\w:])(?:[0-9A-Fa-f]{0,4}:){2,7}(?:[0-9A-Fa-f]{0,4}|(?:\d{1,3}\.){3}\d{1,3})(?![\w:])(?:%[A-Za-z0-9]+)?")
TOKEN = re.compile(r"(?<![A-Za-z0-9+/_=-])[A-Za-z0-9+/_=-]{20,}(?![A-Za-z0-9+/_=-])")
_OWN_ID = re.compile(r"^log-[0-9a-f]+$")

SECRET_KINDS: tuple[str, ...] = ("secret_pair", "api_key", "ipv4", "ipv6", "high_entropy")
PII_KINDS: tuple[str, ...] = ("email", "id_document", "iban", "us_ssn", "cn_id_card", "card", "cn_mobile", "phone")
_PLACEHOLDER = {
    "email": "<EMAIL>",
    "iban": "<IBAN>",
    "us_ssn": "<SSN>",
    "cn_id_card": "<ID_CARD>",
    "card": "<CARD>",
    "cn_mobile": "<PHONE>",
    "phone": "<PHONE>",
    "api_key": "<SECRET>",
    "ipv4": "<IP>",
    "ipv6": "<IP>",
    "high_entropy": "<SECRET>",
}
# Cheap pre-test for the personal-data patterns: text without '@' and without a run of 7+ digit-ish
# characters has no e-mail, card, ID or phone number.
_CANDIDATE = re.compile(r"@|\d[\d \n().+-]{5,}\d")
_IBAN_CANDIDATE = re.compile(r"(?i)[A-Z]{2}\d\d[ \n]?[A-Z0-9]{4}")
_ID_WORD = re.compile(r"(?i)passport|\bid\b|identity|national|licen[cs]e|social|ausweis|reisepass|pasaporte|passeport"
                      r"|护照|身份证")
# ... and for the secret patterns: a separator a pair or an address needs, or a long token.
_SECRET_CANDIDATE = re.compile(r"[=:]|\d\.\d|[A-Za-z0-9+/_=-]{16,}")


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



def _is_iban(value: str) -> bool:
    """ISO 13616: move the first four characters to the end, letters to 10..35; the number mod 97 is 1."""
    compact = value.replace(" ", "").replace("\n", "")
    if not 15 <= len(compact) <= 34:
        return False
    moved = compact[4:] + compact[:4]
    return int("".join(str(int(ch, 36)) for ch in moved)) % 97 == 1


def _id_document(counts: Counter[str]) -> Callable[[re.Match[str]], str]:
    def replace(match: re.Match[str]) -> str:
        if _digit_count(match.group(2)) < 4:  # "passport renewal", "ID card lost": words, not numbers
            return match.group(0)
        counts["id_document"] += 1
        return match.group(1) + "<ID>"

    return replace


def _is_phone(value: str) -> bool:
    return 7 <= _digit_count(value) <= 15 and not _ISO_DATE.search(value)


def _is_ipv6(value: str) -> bool:
    if len(value.replace(":", "")) < 4:  # "a::b", "::1": too short to identify anyone
        return False
    try:
        ipaddress.IPv6Address(value.split("%", 1)[0])
    except ValueError:
        return False
    return True


def _entropy(value: str) -> float:
    counts = Counter(value)
    n = len(value)
    return -sum(c / n * math.log2(c / n) for c in counts.values())


def _is_random_token(value: str) -> bool:
    if _OWN_ID.match(value):
        return False
    has_digit = any(ch.isdigit() for ch in value)
    has_alpha = any(ch.isalpha() for ch in value)
    return has_digit and has_alpha and _entropy(value) >= 3.5


def _secret_pair(counts: Counter[str]) -> Callable[[re.Match[str]], str]:
    def replace(match: re.Match[str]) -> str:
        # After a colon, a plain word is prose ("password: how do I reset it"), not a value.
        if match.group(2) == ":" and match.group(3).isalpha():
            return match.group(0)
        counts["secret_pair"] += 1
        return match.group(1) + "<SECRET>"

    return replace


_STEPS: tuple[tuple[str, re.Pattern[str], Callable[[str], bool] | None], ...] = (
    ("email", EMAIL, None),
    ("us_ssn", US_SSN, None),
    ("cn_id_card", CN_ID_CARD, None),
    ("card", CARD, _is_card),
    ("cn_mobile", CN_MOBILE, None),
    ("phone", PHONE, _is_phone),
)


_SECRET_STEPS: tuple[tuple[str, re.Pattern[str], Callable[[str], bool] | None], ...] = (
    ("api_key", API_KEY, None),
    ("ipv4", IPV4, None),
    ("ipv6", IPV6, _is_ipv6),
    ("high_entropy", TOKEN, _is_random_token),
)


class Recognizer(Protocol):
    """A scrubber plug-in: the spans of ``text`` to replace, each with its kind (``<KIND>`` is written)."""

    def analyze(self, text: str) -> Iterable[tuple[int, int, str]]: ...


_RECOGNIZERS: list[Recognizer] = []


def register_recognizer(recognizer: Recognizer) -> None:
    """Add a plug-in applied by every :func:`scrub` in this process, after the built-in patterns."""
    _RECOGNIZERS.append(recognizer)


def clear_recognizers() -> None:
    _RECOGNIZERS.clear()


class PresidioRecognizers:
    """Presidio's pattern recognizers (the ``presidio`` extra) as one :class:`Recognizer`.

    Only pattern recognizers are used: they need no NLP model (the name recognizer needs a spaCy model,
    which evalops never downloads). ``recognizers`` defaults to Presidio's predefined pattern recognizers
    for the ``entities`` given (default: credit cards, IBANs, IP addresses, US SSNs, crypto wallets).
    """

    DEFAULT_ENTITIES = ("CREDIT_CARD", "IBAN_CODE", "IP_ADDRESS", "US_SSN", "CRYPTO")

    def __init__(self, recognizers: Sequence[Any] | None = None, entities: Sequence[str] = DEFAULT_ENTITIES,
                 min_score: float = 0.5):
        if recognizers is None:
            pr = require("presidio_analyzer.predefined_recognizers", "presidio", "use Presidio's recognizers")

            classes = [getattr(pr, n) for n in dir(pr) if n.endswith("Recognizer")]
            self._all = [c() for c in classes if isinstance(c, type) and issubclass(c, pr.PatternRecognizer)]
            recognizers = [r for r in self._all if set(getattr(r, "supported_entities", [])) & set(entities)]
        self._all = getattr(self, "_all", list(recognizers))
        self._recognizers = list(recognizers)
        self._entities = list(entities)
        self._min_score = min_score

    def analyze(self, text: str) -> list[tuple[int, int, str]]:
        spans = []
        for recognizer in self._recognizers:
            wanted = [e for e in recognizer.supported_entities if e in self._entities]
            if not wanted:
                continue
            for r in recognizer.analyze(text, wanted, None):
                if r.score >= self._min_score:
                    spans.append((r.start, r.end, r.entity_type.lower()))
        return spans


_PRESIDIO: list[Recognizer] = []  # the one use_presidio registered, if any


def _presidio_entities() -> set[str]:
    return {e for r in PresidioRecognizers(entities=())._all for e in r.supported_entities}


def use_presidio(entities: Sequence[str]) -> None:
    """Scrub with Presidio's pattern recognizers for ``entities`` too (none: stop). The settings call it
    (``query_logs.presidio``); ``ImportError`` when Presidio is not installed."""
    for recognizer in _PRESIDIO:
        if recognizer in _RECOGNIZERS:
            _RECOGNIZERS.remove(recognizer)
    _PRESIDIO.clear()
    if entities:
        recognizer = PresidioRecognizers(entities=tuple(entities))
        covered = {e for r in recognizer._recognizers for e in r.supported_entities}
        unknown = sorted(set(entities) - covered)
        if unknown:
            raise ValueError(f"Presidio has no pattern recognizer for {', '.join(unknown)} (it has: "
                             f"{', '.join(sorted(_presidio_entities()))})")
        _PRESIDIO.append(recognizer)
        register_recognizer(recognizer)


def _apply_recognizers(text: str, counts: Counter[str]) -> str:
    spans: list[tuple[int, int, str]] = []
    for recognizer in _RECOGNIZERS:
        spans.extend(recognizer.analyze(text))
    if not spans:
        return text
    out, pos = [], 0
    for start, end, kind in sorted(spans):
        if start < pos or end <= start:
            continue  # overlaps an earlier span
        out += [text[pos:start], f"<{kind.upper()}>"]
        counts[kind] += 1
        pos = end
    out.append(text[pos:])
    return "".join(out)


def scrub(text: str) -> ScrubResult:
    """Replace personal data and secrets in ``text`` with placeholders; count what was found by kind.

    The patterns read, and the result is, ``text`` in its normal form (:func:`evalops.querylog.textform.fold`):
    what a reader would see is what is scrubbed, so a full-width or NBSP-spaced value cannot pass.
    """
    counts: Counter[str] = Counter()
    text = fold(text)
    if _IBAN_CANDIDATE.search(text):  # before the secrets: a compact IBAN is also a high-entropy token
        text = IBAN.sub(_replacer("iban", counts, _is_iban), text)
    if _SECRET_CANDIDATE.search(text):
        text = SECRET_PAIR.sub(_secret_pair(counts), text)
        for kind, pattern, accept in _SECRET_STEPS:
            text = pattern.sub(_replacer(kind, counts, accept), text)
    if _CANDIDATE.search(text):
        for kind, pattern, accept in _STEPS:
            text = pattern.sub(_replacer(kind, counts, accept), text)
    if _ID_WORD.search(text):  # after the patterns that know a number's own shape (身份证 + a PRC ID card)
        text = ID_DOCUMENT.sub(_id_document(counts), text)
    if _RECOGNIZERS:
        text = _apply_recognizers(text, counts)
    return ScrubResult(text, counts)


def scrub_text(text: str) -> str:
    """The text of :func:`scrub` alone (the form renderers and alert rules take as ``scrub``)."""
    return scrub(text).text


def scrub_many(texts: list[str]) -> tuple[list[str], Counter[str]]:
    """``scrub`` each text; returns the scrubbed texts and the total counts by kind."""
    total: Counter[str] = Counter()
    out = []
    for text in texts:
        result = scrub(text)
        out.append(result.text)
        total.update(result.found)
    return out, total
