"""The scrubber reads the normal form: PII written in full-width, compatibility or other-script forms, or
spaced with no-break/thin spaces, is caught, and scrubbing commutes with the display normalisation."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from evalops.querylog import scrub
from evalops.querylog.normalize import display_text
from evalops.querylog.textform import fold

FULL_WIDTH = {c: chr(ord(c) + 0xFEE0) for c in map(chr, range(0x21, 0x7F))}


def full_width(text: str) -> str:
    return "".join(FULL_WIDTH.get(c, c) for c in text)


def digits(text: str, zero: int) -> str:
    """The digits of ``text`` written in the digit block starting at code point ``zero``."""
    return "".join(chr(zero + int(c)) if c.isdigit() else c for c in text)


CARD = "4111 1111 1111 1111"
# (variant as logged, fragments that must not survive in any normalised output)
VARIANTS = [
    (full_width("john@example.com"), ["john", "example"]),
    ("john\ufe6bexample.com", ["john", "example"]),  # small commercial at
    (full_width("password=hunter2xyz"), ["hunter2xyz"]),
    ("password\uff1dhunter2xyz", ["hunter2xyz"]),
    (full_width("AKIAIOSFODNN7EXAMPLE"), ["AKIAIOSFODNN7EXAMPLE", "IOSFODNN"]),
    (full_width("DE89 3704 0044 0532 0130 00"), ["3704", "0532"]),
    ("de89 3704 0044 0532 0130 00", ["3704", "0532"]),
    ("gb82west12345698765432", ["12345698765432"]),
    ("fr14\u00a02004\u00a01010\u00a00505\u00a00001\u00a03m02\u00a0606", ["2004", "0505"]),
    (CARD.replace(" ", "\u00a0"), ["4111", "1111"]),
    (CARD.replace(" ", "\u2009"), ["4111", "1111"]),
    (CARD.replace(" ", "\u202f"), ["4111", "1111"]),
    (CARD.replace(" ", "\u3000"), ["4111", "1111"]),
    (CARD.replace(" ", "  "), ["4111", "1111"]),
    (CARD.replace(" ", "\n"), ["4111", "1111"]),
    (CARD.replace(" ", "\u200b"), ["4111", "1111"]),
    (CARD.replace(" ", "\u200d"), ["4111", "1111"]),  # zero-width joiner
    (CARD.replace(" ", "\u2062"), ["4111", "1111"]),  # invisible times
    (CARD.replace(" ", "\u2010"), ["4111", "1111"]),  # hyphen
    (CARD.replace(" ", "\u2011"), ["4111", "1111"]),  # no-break hyphen
    (CARD.replace(" ", "\u2013"), ["4111", "1111"]),  # en dash
    (CARD.replace(" ", "\u2212"), ["4111", "1111"]),  # minus sign
    ("john@exam\u200eple.com", ["john", "example"]),  # a left-to-right mark, which every display drops
    ("jo\u200dhn@example.com", ["john", "example"]),  # zero-width joiner
    ("john\u200c@example.com", ["john", "example"]),  # zero-width non-joiner
    ("\u202ejohn@example.com\u202c", ["john", "example"]),  # a right-to-left override
    (digits(CARD, 0x1D7CE), ["4111", "1111"]),  # mathematical bold digits
    (digits(CARD, 0x0660), ["4111", "1111"]),  # Arabic-Indic digits (NFKC keeps them)
    (digits(CARD, 0x0966), ["4111", "1111"]),  # Devanagari digits
    (full_width(CARD), ["4111", "1111"]),
    ("jöhn@exämple.de", ["jöhn", "exämple"]),
    ("jo\u0308hn@exa\u0308mple.de", ["jöhn", "exämple", "john"]),  # decomposed umlauts
    ("jöhn@xn--exmple-cua.de", ["jöhn", "exmple"]),
    ("иван@пример.рф", ["иван", "пример"]),
    ("δοκιμή@παράδειγμα.δοκιμή", ["παράδειγμα"]),
    (full_width("+1 415 555 0100"), ["415", "0100"]),
    ("+1\u00a0415\u00a0555\u00a00100", ["415", "0100"]),
    (full_width("123-45-6789"), ["6789"]),
    (full_width("203.0.113.77"), ["203.0.113.77", "113"]),
    (digits("13812345678", 0x1D7CE), ["13812345678", "12345678"]),
]

WORDS = st.lists(st.text(alphabet="abcxyzéжλ中文 .,", min_size=1, max_size=8), max_size=4).map(" ".join)
SEPARATORS = st.sampled_from([" ", "\u00a0", "\u3000", "\n", "\t ", " \u2009 "])


def _survivors(text: str, fragments: list[str]) -> list[str]:
    folded = fold(text).casefold()
    return [f for f in fragments if fold(f).casefold() in folded]


@pytest.mark.parametrize(("variant", "fragments"), VARIANTS)
def test_each_variant_is_scrubbed_alone(variant: str, fragments: list[str]) -> None:
    result = scrub(f"refund {variant} please")
    assert not _survivors(result.text, fragments), result.text
    assert sum(result.found.values()) >= 1


@settings(max_examples=300, deadline=None)
@given(case=st.sampled_from(VARIANTS), before=WORDS, after=WORDS, sep1=SEPARATORS, sep2=SEPARATORS)
def test_no_pii_survives_either_order_and_the_orders_agree(case, before, after, sep1, sep2) -> None:
    variant, fragments = case
    text = f"{before}{sep1}{variant}{sep2}{after}"
    scrub_then_normalise = display_text(scrub(text).text)
    normalise_then_scrub = scrub(display_text(text)).text
    assert not _survivors(scrub_then_normalise, fragments), scrub_then_normalise
    assert not _survivors(normalise_then_scrub, fragments), normalise_then_scrub
    assert normalise_then_scrub == scrub_then_normalise


@settings(max_examples=300, deadline=None)
@given(text=st.text(max_size=60))
def test_scrubbing_commutes_with_normalising_any_text(text: str) -> None:
    assert scrub(display_text(text)).text == display_text(scrub(text).text)


@settings(max_examples=300, deadline=None)
@given(text=st.text(max_size=60))
def test_fold_is_idempotent(text: str) -> None:
    assert fold(fold(text)) == fold(text)


def test_plain_text_keeps_its_lines_and_letters() -> None:
    assert scrub("Hotel refund?\nCall  me\u00a0later").text == "Hotel refund?\nCall me later"
    assert display_text(scrub("  ｆｕｌｌ　ｗｉｄｔｈ ").text) == "full width"


def test_sample_logs_queue_holds_no_full_width_pii(tmp_path, make_row) -> None:
    """The reported leak: ``annotation_queue.csv`` held ``john@example.com`` and ``password=hunter2xyz``."""
    from tests.querylog.conftest import write_rows
    from click.testing import CliRunner

    from evalops.cli import main

    logs = tmp_path / "logs"
    write_rows(logs, "2025-03-05", [make_row(query=f"refund {full_width('john@example.com')} {full_width('password=hunter2xyz')}",
                                             version="v1")])
    result = CliRunner().invoke(main, ["sample-logs", "--date", "2025-03-05", "--logs", str(logs), "--version", "v1",
                                       "--size", "5", "--no-docs", "-o", str(tmp_path / "out")])
    assert result.exit_code == 0, result.output
    written = "".join(p.read_text(encoding="utf-8") for p in (tmp_path / "out").iterdir() if p.is_file())
    assert "annotation_queue.csv" in {p.name for p in (tmp_path / "out").iterdir()}
    assert "john" not in written and "hunter2xyz" not in written
    assert "<EMAIL>" in written and "password=<SECRET>" in written
