"""The aggregates' Student-t quantile equals scipy's (``scipy.special.stdtrit``) without importing scipy."""

import math
import subprocess
import sys

import pytest
from scipy.special import stdtr, stdtrit

from evalops.stats.student_t import t_quantile, t_upper_tail

DFS = [1, 2, 3, 4, 5, 7, 9, 10, 15, 29, 30, 49, 85, 99, 100, 299, 300, 999, 1000, 2999, 12345, 10**5, 314159, 10**6]
PS = [0.75, 0.8, 0.9, 0.95, 0.975, 0.99, 0.995, 0.999, 0.9995, 0.25, 0.1, 0.025, 0.005]


@pytest.mark.parametrize("df", DFS)
def test_the_quantile_equals_scipy_to_a_relative_1e_11(df):
    for p in PS:
        ours, theirs = t_quantile(float(df), p), float(stdtrit(df, p))
        assert ours == pytest.approx(theirs, rel=1e-11, abs=0), (df, p)


def test_every_degree_of_freedom_of_a_small_gold_set_equals_scipy():
    for df in range(1, 500):
        for p in (0.95, 0.975, 0.995):
            assert t_quantile(float(df), p) == pytest.approx(float(stdtrit(df, p)), rel=1e-11, abs=0), (df, p)


def test_the_upper_tail_equals_scipy():
    for df in (1.0, 3.0, 10.0, 299.0, 1e4):
        for t in (0.0, 0.1, 1.0, 2.0, 5.0, 20.0):
            assert t_upper_tail(t, df) == pytest.approx(float(stdtr(df, -t)), rel=1e-12), (df, t)


def test_edges():
    assert t_quantile(10.0, 0.5) == 0.0
    assert t_quantile(10.0, 0.025) == -t_quantile(10.0, 0.975)
    assert math.isnan(t_quantile(0.0, 0.9)) and math.isnan(t_quantile(5.0, 1.0)) and math.isnan(t_quantile(5.0, 0.0))


def test_summarize_does_not_import_scipy():
    code = ("import sys, numpy as np\nfrom evalops.metrics import summarize\n"
            "a = summarize(np.linspace(0, 1, 300))\nassert a.ci_low < a.mean < a.ci_high\n"
            "print(sorted(m for m in sys.modules if m == 'scipy' or m.startswith('scipy.')))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.strip()
    assert out == "[]"
