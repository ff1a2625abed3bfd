"""PII scrubbing: positive and negative examples for every pattern."""

from __future__ import annotations

import pytest

from evalops.querylog import PII_KINDS, scrub, scrub_many

POSITIVE = {
    "iban": [
        ("refund to DE89 3704 0044 0532 0130 00 please", "refund to <IBAN> please"),
        ("IBAN GB82WEST12345698765432 wrong", "IBAN <IBAN> wrong"),
        ("virement FR1420041010050500013M02606", "virement <IBAN>"),
    ],
    "us_ssn": [
        ("my ssn is 123-45-6789", "my ssn is <SSN>"),
        ("SSN: 078-05-1120.", "SSN: <SSN>."),
    ],
    "id_document": [
        ("passport number X1234567 expired", "passport number <ID> expired"),
        ("my national ID: AB123456C", "my national ID: <ID>"),
        ("Reisepass Nr. C01X00T47 verloren", "Reisepass Nr. <ID> verloren"),
        ("护照号码E12345678丢了", "护照号码<ID>丢了"),
        ("driver's license # D1234-5678", "driver's license # <ID>"),
    ],
    "email": [
        ("mail me at jane.doe+x@example.co.uk now", "mail me at <EMAIL> now"),
        ("联系邮箱li.wei@example.com谢谢", "联系邮箱<EMAIL>谢谢"),
        ("INVOICE TO Bob_99@Mail.Example.ORG", "INVOICE TO <EMAIL>"),
    ],
    "cn_id_card": [
        ("身份证 11010519491231002X 认证失败", "身份证 <ID_CARD> 认证失败"),
        ("实名认证失败 身份证号110105199003071234", "实名认证失败 身份证号<ID_CARD>"),
        ("old id 110105491231002", "old id <ID_CARD>"),
        ("id 44030519800101123x.", "id <ID_CARD>."),
    ],
    "card": [
        ("card 4111 1111 1111 1111 charged twice", "card <CARD> charged twice"),
        ("PAY-3101 with card 5500-0000-0000-0004", "PAY-3101 with card <CARD>"),
        ("卡号6222021234567890128被扣款", "卡号<CARD>被扣款"),
    ],
    "cn_mobile": [
        ("电话13812345678", "电话<PHONE>"),
        ("我的手机号是17274468174，退款还没到账", "我的手机号是<PHONE>,退款还没到账"),  # NFKC: the result is the display form
        ("+86 138 1234 5678 call me", "<PHONE> call me"),
        ("call 138-1234-5678.", "call <PHONE>."),
        ("0086 19912345678", "<PHONE>"),
    ],
    "phone": [
        ("call me back at +1 415 555 0100 please", "call me back at <PHONE> please"),
        ("office (010) 6552-1234", "office <PHONE>"),
        ("415-555-0100", "<PHONE>"),
        ("+44 20 7946 0958", "<PHONE>"),
    ],
}

NEGATIVE = {
    "iban": ["model DE12 ABCD EFGH IJKL (bad checksum)", "SKU AB12CD34", "model GB82 WEST"],
    "us_ssn": ["000-12-3456x", "ORDER-123-45-6789", "PAY-123-45-6789"],
    "id_document": ["passport renewal form", "ID card lost", "national id office hours", "passport photo size 35x45",
                    "order 12345678 passport"],
    "email": ["user at example dot com", "@kestrel on twitter", "ratio 3@5"],
    "cn_id_card": ["order 110105194913310021 invalid month", "ORDER-2024-11010519491231002X", "SN 123456789012345678 box"],
    "card": ["order 1234567890123 late", "4111 1111 1111 1112 (bad checksum)", "2024-11-01 2024-12-24"],
    "cn_mobile": ["12812345678 is not a mobile", "model 1381234567 ten digits", "138123456789 twelve digits"],
    "phone": ["ORDER-2024", "ORDER-2024-0315", "AX-350 200-300 m2", "PB-20000 mAh", "since 2025-03-01",
              "version 3.10.12", "price 1299.00", "error 4001 after 30 days", "KT-15 descale", "pi 3.14159265358979",
              "room 12 34"],
}


def test_every_kind_has_examples() -> None:
    assert set(POSITIVE) == set(NEGATIVE) == set(PII_KINDS)


@pytest.mark.parametrize(("kind", "text", "expected"), [(k, t, e) for k, cases in POSITIVE.items() for t, e in cases])
def test_positive(kind: str, text: str, expected: str) -> None:
    result = scrub(text)
    assert result.text == expected
    assert result.found[kind] == 1 and sum(result.found.values()) == 1


@pytest.mark.parametrize(("kind", "text"), [(k, t) for k, cases in NEGATIVE.items() for t in cases])
def test_negative(kind: str, text: str) -> None:
    result = scrub(text)
    assert result.text == text, (kind, result)
    assert not result.found


def test_several_items_in_one_text_and_totals() -> None:
    texts = ["refund to a@example.com or call 13812345678", "nothing here", "card 4111111111111111"]
    scrubbed, found = scrub_many(texts)
    assert scrubbed == ["refund to <EMAIL> or call <PHONE>", "nothing here", "card <CARD>"]
    assert found == {"email": 1, "cn_mobile": 1, "card": 1}
