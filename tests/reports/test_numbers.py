"""One number-formatting policy (evalops.util.numfmt) for alerts, reports, the dashboard and the CLI."""

from __future__ import annotations

import math

import pytest

from evalops.alerting.message import format_p
from evalops.reports.tables import fmt_num, fmt_p
from evalops.util import numfmt


@pytest.mark.parametrize("p, shown", [(0.01234, "0.012"), (0.5, "0.5"), (1.0, "1"), (0.001, "0.001"),
                                      (0.000123, "1.2e-04"), (0.0, "0.0e+00")])
def test_p_values_have_two_significant_digits_in_every_medium(p, shown):
    assert numfmt.p_value(p) == fmt_p(p) == shown
    assert format_p(p) == shown  # alerts used to agree only to 2 digits, reports printed 3


@pytest.mark.parametrize("undefined", [None, math.nan, math.inf, "x"])
def test_undefined_values_print_as_the_medium_s_marker(undefined):
    assert numfmt.p_value(undefined) == numfmt.number(undefined) == numfmt.effect(undefined) == "–"
    assert format_p(undefined) == "n/a"
    assert numfmt.number(undefined, missing="-") == "-"


def test_means_deltas_effects_levels_and_margins():
    assert fmt_num(0.41234) == numfmt.number(0.41234) == "0.4123"
    assert numfmt.number(-0.01, signed=True) == "-0.0100" and numfmt.number(0.01, signed=True) == "+0.0100"
    assert numfmt.effect(0.7149) == "+0.71"
    assert numfmt.level(0.983333) == "98.33%" and numfmt.percent(0.95) == "95%"
    assert numfmt.margin(0.01) == "0.01"
