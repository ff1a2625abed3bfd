"""The span measures in the measure grammar (``evalops.chunking.names``): parsed, canonical, refused."""

from __future__ import annotations

import pytest

from evalops.chunking.names import parse_span_measures, span_cut
from evalops.errors import MeasureError


@pytest.mark.parametrize("name, canonical, cut", [
    ("TokenIoU@10", "TokenIoU@10", {"k": 10}),
    ("TokenRecall(budget=400)", "TokenRecall(budget=400)", {"budget": 400}),
    ("TokenPrecision@budget=512", "TokenPrecision(budget=512)", {"budget": 512}),
    (" TokenIoU @ budget = 64 ", "TokenIoU(budget=64)", {"budget": 64}),
])
def test_names_parse_to_their_canonical_form(name, canonical, cut):
    (measure,) = parse_span_measures(name)
    assert str(measure) == canonical and span_cut(measure) == cut and measure.higher_is_better


@pytest.mark.parametrize("name, says", [
    ("TokenIoU", "needs a cutoff or a budget"),
    ("TokenIoU(budget=400)@10", "not both"),
    ("TokenIoU@0", "positive"),
    ("nDCG@10", "unknown measure 'nDCG'"),
    ("TokenIoU(units=words)@10", "unknown parameter"),
])
def test_bad_names_are_refused_with_the_reason(name, says):
    with pytest.raises(MeasureError, match=says):
        parse_span_measures(name)


def test_repeats_are_dropped_and_the_stored_names_read_back():
    from evalops.context import parse_any_measure

    assert [str(m) for m in parse_span_measures(["TokenIoU@10", "TokenIoU@10", "TokenIoU@budget=4"])] == [
        "TokenIoU@10", "TokenIoU(budget=4)"]
    assert str(parse_any_measure("TokenIoU(budget=4)")) == "TokenIoU(budget=4)"
    assert parse_any_measure("TokenIoU@10").cutoff == 10
    assert str(parse_any_measure("chunk/nDCG@10")) == "nDCG@10"  # a chunk measure's direction and cutoff
