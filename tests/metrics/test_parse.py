"""Measure names: the grammar, canonical strings, aliases and error messages."""

from __future__ import annotations

import pytest

from evalops.errors import MeasureError
from evalops.metrics import (
    NDCG,
    AveragePrecision,
    Measure,
    Precision,
    RPrecision,
    parse_measure,
    parse_measures,
)

CANONICAL = [
    "P@5",
    "P(rel=2)@5",
    "R@100",
    "F1@10",
    "nDCG@10",
    "nDCG(gain=exp)@10",
    "nDCG",
    "RR",
    "RR@10",
    "RR(rel=3)",
    "AP",
    "AP@100",
    "AP(rel=2)@10",
    "Success@10",
    "R-Prec",
    "R-Prec(rel=2)",
    "ContextPrecision@5",
    "ContextPrecision(rel=2)@5",
    "Judged@10",
    "Bpref",
    "Bpref(rel=2)",
    "nDCG(judged_only=True)@10",
    "nDCG(gain=exp,judged_only=True)@10",
    "P(rel=2,judged_only=True)@5",
    "AP(judged_only=True)",
]


@pytest.mark.parametrize("name", CANONICAL)
def test_canonical_names_round_trip(name):
    measure = parse_measure(name)
    assert str(measure) == name
    assert parse_measure(str(measure)) == measure
    assert hash(parse_measure(str(measure))) == hash(measure)


@pytest.mark.parametrize(
    "given, canonical",
    [
        ("MRR@10", "RR@10"),
        ("MRR", "RR"),
        ("MAP", "AP"),
        ("MAP@100", "AP@100"),
        ("Hit@5", "Success@5"),
        ("Hit(rel=2)@5", "Success(rel=2)@5"),
        ("Rprec", "R-Prec"),
        ("P(rel=1)@5", "P@5"),  # parameters at their default are not printed
        ("nDCG(gain=linear)@10", "nDCG@10"),
        (" nDCG ( gain = exp ) @ 10 ", "nDCG(gain=exp)@10"),
    ],
)
def test_aliases_and_defaults_map_to_the_canonical_name(given, canonical):
    assert str(parse_measure(given)) == canonical
    assert parse_measure(given) == parse_measure(canonical)


def test_measures_are_values_usable_as_keys():
    table = {parse_measure("MRR@10"): 1}
    assert table[parse_measure("RR@10")] == 1
    assert parse_measures(["RR@10", "MRR@10", "P@5"]) == (parse_measure("RR@10"), parse_measure("P@5"))
    assert parse_measure("P@5") != parse_measure("P@10")
    assert parse_measure("P@5") != "P@5"


def test_programmatic_construction_matches_parsing():
    assert Precision(5, rel=2) == parse_measure("P(rel=2)@5")
    assert NDCG() @ 10 == parse_measure("nDCG@10")
    assert NDCG(10)(gain="exp") == parse_measure("nDCG(gain=exp)@10")
    assert AveragePrecision() == parse_measure("MAP")
    assert parse_measure("P(rel=2)@5")["rel"] == 2
    assert parse_measure("P(rel=2)@5").cutoff == 5
    assert parse_measure(Precision(3)) == Precision(3)


def test_measures_are_immutable():
    m = parse_measure("P@5")
    with pytest.raises(AttributeError):
        m._cutoff = 10  # type: ignore[misc]


def test_relevance_threshold_drives_no_answer_detection():
    assert parse_measure("P(rel=2)@5").relevance_threshold == 2
    assert parse_measure("nDCG@10").relevance_threshold == 1
    assert parse_measure("RR").relevance_threshold == 1


def test_every_measure_documents_its_formula():
    from evalops.metrics import MEASURE_TYPES

    for cls in MEASURE_TYPES.values():
        assert cls.__doc__ and "=" in cls.__doc__, cls.NAME


@pytest.mark.parametrize(
    "text, fragment",
    [
        ("foo@10", "unknown measure 'foo'"),
        ("ndgc@10", "unknown measure 'ndgc'"),
        ("P", "P needs a cutoff"),
        ("Success", "Success needs a cutoff"),
        ("R-Prec@5", "R-Prec takes no cutoff"),
        ("P@0", "cutoff 0 must be a positive integer"),
        ("P@x", "expected int"),
        ("P@", "it ends where int was expected"),
        ("P(rel=0)@5", "rel=0 must be >= 1"),
        ("P(rel=x)@5", "rel='x' must be int"),
        ("P(rel=-1)@5", "unexpected character '-'"),
        ("nDCG(gain=cubic)@10", "gain='cubic' is not one of linear, exp"),
        ("nDCG(rel=2)@10", "unknown parameter(s) rel; valid parameters: gain"),
        ("P(foo=1)@5", "unknown parameter(s) foo"),
        ("P(rel=2@5", "expected )"),
        ("P(rel=2,rel=3)@5", "parameter rel is given twice"),
        ("P@5@6", "unexpected '@'"),
        ("P@5;", "unexpected character ';'"),
        ("", "it is empty"),
        ("@5", "expected name"),
    ],
)
def test_malformed_names_raise_a_measure_error_listing_the_valid_names(text, fragment):
    with pytest.raises(MeasureError) as err:
        parse_measure(text)
    message = str(err.value)
    assert fragment in message
    if "unknown measure" in fragment or "malformed" in message:
        assert "valid measures: P, R, F1, nDCG, RR, AP, Success, R-Prec, ContextPrecision" in message


def test_non_string_and_empty_lists_are_rejected():
    with pytest.raises(MeasureError, match="must be a string"):
        parse_measure(10)  # type: ignore[arg-type]
    with pytest.raises(MeasureError, match="no measure given"):
        parse_measures([])


def test_measure_error_is_an_input_error():
    from evalops.errors import InputError

    with pytest.raises(InputError):
        parse_measure("nope")


def test_repr_and_base_class():
    m = parse_measure("R-Prec")
    assert isinstance(m, RPrecision) and isinstance(m, Measure)
    assert repr(m) == "Measure('R-Prec')"


@pytest.mark.parametrize(
    "given, canonical",
    [
        ("bpref", "Bpref"),
        ("nDCG(judged_only=true)@10", "nDCG(judged_only=True)@10"),
        ("nDCG(judged_only=False)@10", "nDCG@10"),
        ("P(judged_only=TRUE, rel=2)@5", "P(rel=2,judged_only=True)@5"),
    ],
)
def test_judged_spellings_print_canonically(given, canonical):
    assert str(parse_measure(given)) == canonical


@pytest.mark.parametrize(
    "text, fragment",
    [
        ("Judged", "needs a cutoff"),
        ("Bpref@10", "takes no cutoff"),
        ("nDCG(judged_only=yes)@10", "must be bool"),
        ("nDCG(judged_only=1)@10", "must be bool"),
        ("Judged(judged_only=True)@10", "unknown parameter"),
        ("Bpref(judged_only=True)", "unknown parameter"),
    ],
)
def test_judged_measure_errors_say_what_is_allowed(text, fragment):
    with pytest.raises(MeasureError, match=fragment):
        parse_measure(text)


def test_every_measure_declares_its_direction():
    from evalops.metrics import MEASURE_TYPES

    for cls in MEASURE_TYPES.values():
        m = cls(0.5) if cls.AT_PARAM else cls(10) if cls.CUTOFF != "none" else cls()
        assert m.higher_is_better is True, cls.NAME
