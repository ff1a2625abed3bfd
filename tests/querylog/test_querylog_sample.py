"""Seeded stratified sampling and the sample size."""

from __future__ import annotations

from datetime import date, datetime, timezone

import numpy as np
import pandas as pd
import pytest

from evalops.errors import ConfigError
from evalops.querylog import SampleSizePolicy, allocate, seed_for_date, stratified_sample


def population(sizes: dict[tuple[str, str], int]) -> pd.DataFrame:
    rows = [(f"log-{v}-{s}-{i:05d}", v, s) for (v, s), n in sizes.items() for i in range(n)]
    return pd.DataFrame(rows, columns=["query_id", "retriever_version", "segment"])


SIZES = {("bm25-v1", "web"): 3000, ("bm25-v1", "mobile"): 1500, ("hybrid-rrf-v2", "web"): 4000,
         ("hybrid-rrf-v2", "mobile"): 1200, ("hybrid-rrf-v2", "agent"): 300}
STRATA = ["retriever_version", "segment"]


def test_seed_is_a_function_of_the_logical_date() -> None:
    assert seed_for_date("2025-03-05") == seed_for_date(date(2025, 3, 5))
    assert seed_for_date("2025-03-05") != seed_for_date("2025-03-06")
    midnight = datetime(2025, 3, 5, tzinfo=timezone.utc)
    assert seed_for_date(midnight) == seed_for_date("2025-03-05T00:00:00+00:00")
    with pytest.raises(ConfigError, match="timezone-aware"):
        seed_for_date(datetime(2025, 3, 5))
    with pytest.raises(ConfigError, match="not an ISO date"):
        seed_for_date("05/03/2025")


def test_same_date_same_sample_in_any_row_order_different_date_different_sample() -> None:
    units = population(SIZES)
    seed = seed_for_date("2025-03-05")
    a = stratified_sample(units, 500, STRATA, seed)
    b = stratified_sample(units.sample(frac=1, random_state=1), 500, STRATA, seed)
    assert a["query_id"].tolist() == b["query_id"].tolist()
    c = stratified_sample(units, 500, STRATA, seed_for_date("2025-03-06"))
    overlap = len(set(a["query_id"]) & set(c["query_id"])) / 500
    assert overlap < 0.2  # independent draws of 5% of each stratum overlap by about 5%


def test_strata_proportions_hold() -> None:
    units = population(SIZES)
    total = sum(SIZES.values())
    for day in ("2025-03-01", "2025-03-02", "2025-03-03"):
        sample = stratified_sample(units, 1000, STRATA, seed_for_date(day))
        assert len(sample) == 1000
        got = sample.groupby(STRATA).size()
        for key, n in SIZES.items():
            assert abs(got[key] / 1000 - n / total) <= 0.002  # rounding of one unit per stratum


def test_late_rows_change_the_sample_by_at_most_themselves() -> None:
    units = population(SIZES)
    seed = seed_for_date("2025-03-05")
    a = set(stratified_sample(units, 1000, STRATA, seed)["query_id"])
    extra = pd.DataFrame([(f"late-{i}", "bm25-v1", "web") for i in range(10)], columns=units.columns)
    b = set(stratified_sample(pd.concat([units, extra]), 1000, STRATA, seed)["query_id"])
    assert len(a - b) <= 10


def test_allocation() -> None:
    sizes = pd.Series([50, 30, 15, 5], index=list("abcd"))
    take = allocate(sizes, 20)
    assert take.sum() == 20 and take.tolist() == [10, 6, 3, 1]
    assert allocate(sizes, 1000).tolist() == sizes.tolist()
    assert allocate(pd.Series([1000, 1], index=list("ab")), 10).tolist() == [9, 1]  # the minimum per stratum
    assert allocate(pd.Series([5, 5, 5], index=list("abc")), 2, min_per_stratum=1).sum() == 2
    rng = np.random.default_rng(3)
    for _ in range(50):
        s = pd.Series(rng.integers(0, 200, size=6))
        n = int(rng.integers(0, 800))
        t = allocate(s, n, min_per_stratum=int(rng.integers(0, 3)))
        assert t.sum() == min(n, s.sum()) and (t <= s).all() and (t >= 0).all()


def test_small_population_is_taken_whole() -> None:
    units = population({("v", "web"): 3, ("v", "app"): 2})
    assert len(stratified_sample(units, 100, STRATA, 1)) == 5
    assert stratified_sample(units.iloc[:0], 10, STRATA, 1).empty
    with pytest.raises(ConfigError, match="sampling needs column"):
        stratified_sample(units.drop(columns="segment"), 2, STRATA, 1)


def test_sample_size_policy() -> None:
    assert SampleSizePolicy(size=300).resolve() == (300, "fixed size 300")
    assert SampleSizePolicy(size=5000, cap=2000).resolve() == (2000, "fixed size 5000, capped at 2000")
    calls = []

    def power_fn(effect: float, alpha: float, power: float) -> int:
        calls.append((effect, alpha, power))
        return 199.2

    n, how = SampleSizePolicy(min_detectable_effect=0.2, power_fn=power_fn).resolve()
    assert n == 200 and calls == [(0.2, 0.05, 0.8)] and "power analysis" in how
    n, how = SampleSizePolicy(min_detectable_effect=0.01, power_fn=lambda *a: 80_000, cap=1500).resolve()
    assert n == 1500 and how.endswith("capped at 1500")
    with pytest.raises(ConfigError, match="give a sample size"):
        SampleSizePolicy()
    with pytest.raises(ConfigError, match="positive"):
        SampleSizePolicy(min_detectable_effect=0)


def test_default_power_function_is_evalops_stats() -> None:
    pytest.importorskip("evalops.stats", reason="evalops.stats is merged separately")
    from evalops.stats import paired_sample_size

    n, _ = SampleSizePolicy(min_detectable_effect=0.2, cap=10_000).resolve()
    assert n == paired_sample_size(0.2, power=0.8, alpha=0.05)
