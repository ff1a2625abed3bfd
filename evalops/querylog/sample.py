"""Seeded, stratified sampling of query-log units, and the sample size.

Conventions owned here:

* **Seed** = the first 8 bytes of SHA-256 of ``"evalops.querylog:" + logical date`` (ISO date for a date,
  ISO UTC time for a datetime), as an unsigned integer. A re-run for the same logical date draws the same
  sample; another date draws another one.
* **Selection** is bottom-k by a keyed hash: each unit gets the priority ``siphash(seed, query id,
  version, segment)`` and each stratum keeps its lowest priorities. The draw therefore does not depend
  on row order, and a few late rows change the sample by at most those rows.
* **Allocation** is proportional to the number of units per stratum (largest-remainder rounding); a
  stratum below ``min(min_per_stratum, its size)`` is raised to it at the expense of the largest ones.
  When ``n`` is at least the population, every unit is taken.
* **Size**: a fixed ``size``, or the number of queries the power analysis asks for to detect
  ``min_detectable_effect``; either way at most ``cap``.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import date, datetime

import numpy as np
import pandas as pd

from evalops.errors import ConfigError
from evalops.stats import rule_sample_size
from evalops.util.utc import as_utc

__all__ = ["seed_for_date", "SampleSizePolicy", "allocate", "stratified_sample", "logical_date_text"]


def logical_date_text(logical_date: date | datetime | str) -> str:
    """The canonical text of a logical date: ``YYYY-MM-DD`` or an ISO UTC time."""
    if isinstance(logical_date, str):
        try:
            parsed: date | datetime = date.fromisoformat(logical_date)
        except ValueError:
            try:
                parsed = datetime.fromisoformat(logical_date)
            except ValueError:
                raise ConfigError(f"logical date {logical_date!r} is not an ISO date (YYYY-MM-DD) or time") from None
        logical_date = parsed
    if isinstance(logical_date, datetime):
        return as_utc(logical_date, "logical date").isoformat()
    if isinstance(logical_date, date):
        return logical_date.isoformat()
    raise ConfigError(f"logical date must be a date, a datetime or ISO text, got {logical_date!r}")


def seed_for_date(logical_date: date | datetime | str) -> int:
    """The sampling seed of a logical date (see module docs)."""
    digest = hashlib.sha256(f"evalops.querylog:{logical_date_text(logical_date)}".encode()).digest()
    return int.from_bytes(digest[:8], "big")


@dataclass(frozen=True)
class SampleSizePolicy:
    """How many distinct queries to sample (all strata together): the number of pairs the paired test gets.

    Give ``size``, or ``min_detectable_effect``: the smallest standardized paired effect |d_z| (mean
    per-query difference / its standard deviation) the comparison must detect. The number of queries then
    comes from ``power_fn(min_detectable_effect, alpha, power)``, by default the regression rule's own
    ``evalops.stats.rule_sample_size`` (exact: the probability that the rule's interval, at the level of a
    family of ``family_size``, lies below 0 for a true drop of that size). ``cap`` bounds both.
    """

    size: int | None = None
    min_detectable_effect: float | None = None
    alpha: float = 0.05
    power: float = 0.8
    cap: int = 2000
    power_fn: Callable[[float, float, float], int] | None = None
    family_size: int = 1

    def __post_init__(self) -> None:
        if self.size is None and self.min_detectable_effect is None:
            raise ConfigError("give a sample size or a minimum detectable effect for the power analysis")
        if self.size is not None and self.size < 1:
            raise ConfigError(f"sample size must be at least 1, got {self.size}")
        if self.min_detectable_effect is not None and not self.min_detectable_effect > 0:
            raise ConfigError(f"min_detectable_effect must be positive, got {self.min_detectable_effect}")
        if self.cap < 1:
            raise ConfigError(f"cap must be at least 1, got {self.cap}")

    def resolve(self) -> tuple[int, str]:
        """``(n, how)``: the size and a sentence saying where it came from."""
        if self.size is not None:
            n, how = self.size, f"fixed size {self.size}"
        else:
            power_fn = self.power_fn or _default_power_fn(self.family_size)
            n = int(np.ceil(power_fn(self.min_detectable_effect, self.alpha, self.power)))
            how = (
                f"power analysis: {n} queries to detect {self.min_detectable_effect} "
                f"at alpha={self.alpha}, power={self.power}"
            )
        if n > self.cap:
            return self.cap, f"{how}, capped at {self.cap}"
        return n, how


def _default_power_fn(family_size: int = 1) -> Callable[[float, float, float], int]:
    # in units of the deltas' sd: a drop of |d_z| = effect, flagged when the interval lies below 0 (the
    # margin does not enter that outcome)
    return lambda effect, alpha, power: rule_sample_size(-effect, 1.0, effect, power=power, alpha=alpha,
                                                         family_size=family_size, outcome="regression")


def _largest_remainder(quota: np.ndarray, n: int) -> np.ndarray:
    take = np.floor(quota).astype(np.int64)
    short = n - int(take.sum())
    if short > 0:
        # Largest remainders first; ties by stratum order (the caller sorts the strata).
        order = np.lexsort((np.arange(len(quota)), -(quota - take)))
        take[order[:short]] += 1
    return take


def allocate(sizes: pd.Series, n: int, min_per_stratum: int = 1) -> pd.Series:
    """Units to take per stratum (index = stratum) for a total of ``min(n, sizes.sum())``.

    Proportional to ``sizes`` with largest-remainder rounding; then every stratum is raised to
    ``min(min_per_stratum, its size)`` (when the total allows it), the units coming from the strata with the
    largest allocations.
    """
    size = sizes.to_numpy(dtype=np.int64)
    total = int(size.sum())
    if n >= total:
        return pd.Series(size.copy(), index=sizes.index)
    take = _largest_remainder(n * size / total, n)
    floor = np.minimum(size, max(min_per_stratum, 0))
    if floor.sum() <= n:
        take = np.maximum(take, floor)
        for _ in range(int(take.sum()) - n):
            spare = np.where(take > floor, take, -1)
            take[int(np.argmax(spare))] -= 1
    return pd.Series(take, index=sizes.index)


def stratified_sample(
    units: pd.DataFrame,
    n: int,
    strata: Sequence[str],
    seed: int,
    *,
    id_columns: Sequence[str] = ("query_id",),
    min_per_stratum: int = 1,
) -> pd.DataFrame:
    """The sampled rows of ``units`` (see module docs), sorted by stratum then priority."""
    missing = [c for c in [*strata, *id_columns] if c not in units.columns]
    if missing:
        raise ConfigError(f"sampling needs column(s) {missing}; have {list(units.columns)}")
    if units.empty:
        return units.copy()
    key_cols = [*id_columns, *strata]
    keys = units[key_cols[0]].astype(str)
    for col in key_cols[1:]:
        keys = keys + "\x1f" + units[col].astype(str)
    hash_key = f"{seed:016x}"[-16:]  # pandas' siphash takes a 16-character key
    priority = pd.util.hash_array(keys.to_numpy(dtype=object), hash_key=hash_key, categorize=False)
    ordered = units.assign(_priority=priority).sort_values([*strata, "_priority"], kind="stable")
    sizes = ordered.groupby(list(strata), sort=True).size()
    quota = allocate(sizes, n, min_per_stratum)
    rank = ordered.groupby(list(strata), sort=True).cumcount().to_numpy()
    limit = ordered.set_index(list(strata)).index.map(quota).to_numpy(dtype=np.int64)
    return ordered[rank < limit].drop(columns="_priority").reset_index(drop=True)
