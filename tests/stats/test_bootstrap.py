import types

import numpy as np
import pytest
from scipy import stats

from evalops.errors import InputError
from evalops.stats import bootstrap_interval, bootstrap_means, paired_bootstrap_ci
from evalops.stats import bootstrap


@pytest.mark.parametrize(("method", "scipy_method"), [("bca", "BCa"), ("percentile", "percentile")])
@pytest.mark.parametrize("confidence", [0.9, 0.95, 0.99])
@pytest.mark.parametrize("data", ["skewed", "discrete"])
def test_interval_equals_scipy_given_the_same_resamples(method, scipy_method, confidence, data):
    rng = np.random.default_rng(0)
    if data == "skewed":
        d = rng.exponential(size=60) - 0.8  # BCa differs from the percentile interval
    else:
        d = np.array([0.0, 0.0, 0.0, 1.0, 1.0, 0.5, -0.5])  # many resample means equal the estimate
    means = bootstrap_means(d, 4000, rng=1)
    ours = bootstrap_interval(d, means, confidence, method)
    ref = stats.bootstrap(
        (d,), np.mean, n_resamples=0, method=scipy_method, confidence_level=confidence,
        bootstrap_result=types.SimpleNamespace(bootstrap_distribution=means),
    ).confidence_interval
    assert ours.low == pytest.approx(ref.low, rel=1e-12)
    assert ours.high == pytest.approx(ref.high, rel=1e-12)


def test_bootstrap_distribution_has_the_sampling_moments_of_the_mean():
    rng = np.random.default_rng(2)
    d = rng.normal(0.1, 0.3, 400)
    means = bootstrap_means(d, 20_000, rng=3)
    assert means.mean() == pytest.approx(d.mean(), abs=4 * d.std() / np.sqrt(400 * 20_000))
    # sd of the bootstrap mean is sd_pop / sqrt(n), within a few percent for 20,000 resamples
    assert means.std() == pytest.approx(d.std() / np.sqrt(400), rel=0.03)


def test_paired_ci_is_seeded_and_covers_the_mean():
    rng = np.random.default_rng(4)
    b = rng.random(150)
    c = np.clip(b - 0.05 + rng.normal(0, 0.1, 150), 0, 1)
    one = paired_bootstrap_ci(b, c, rng=11)
    two = paired_bootstrap_ci(b, c, rng=np.random.default_rng(11))
    assert (one.low, one.high) == (two.low, two.high)
    assert one.low < (c - b).mean() < one.high
    assert one.method == "bca" and one.confidence == 0.95 and one.n_resamples == 10_000


def test_chunking_keeps_memory_bounded_without_changing_the_distribution_much(monkeypatch):
    d = np.random.default_rng(6).normal(size=500)
    monkeypatch.setattr(bootstrap, "CHUNK_BYTES", 12 * 500 * 7)  # 7 resamples per chunk
    small = bootstrap_means(d, 3000, rng=1)
    monkeypatch.undo()
    big = bootstrap_means(d, 3000, rng=1)
    assert small.std() == pytest.approx(big.std(), rel=0.1)
    assert abs(small.mean() - big.mean()) < 4 * big.std() / np.sqrt(3000) * np.sqrt(2)


def test_degenerate_cases():
    assert paired_bootstrap_ci([], []) is None
    point = paired_bootstrap_ci([0.5, 0.7, 0.2], [0.6, 0.8, 0.3])
    assert point.low == point.high == pytest.approx(0.1)
    single = paired_bootstrap_ci([0.5], [0.25])
    assert single.low == single.high == -0.25
    # every resample on one side of the estimate: BCa stays finite
    d = np.array([0.0] * 30 + [1.0])
    means = np.full(1000, -1.0)
    interval = bootstrap_interval(d, means, 0.95, "bca")
    assert np.isfinite([interval.low, interval.high]).all()


def test_bad_arguments_are_input_errors():
    with pytest.raises(InputError, match="pass rng"):
        paired_bootstrap_ci([0.1, 0.2], [0.3, 0.5])
    with pytest.raises(InputError, match="CI method"):
        paired_bootstrap_ci([0.1, 0.2], [0.3, 0.5], method="basic", rng=0)
    with pytest.raises(InputError, match="aligned"):
        paired_bootstrap_ci([0.1, 0.2], [0.3], rng=0)
