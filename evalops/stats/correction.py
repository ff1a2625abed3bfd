"""Multiple-comparison correction of a family of p-values.

Every measure x candidate version compared in one run is one hypothesis; testing 10 measures for 3
versions at alpha = 0.05 each would raise a false alarm on most days. The adjusted p-values are compared
with alpha directly.

* ``"holm"`` (default; Holm 1979): controls the family-wise error rate under any dependence. With the
  p-values sorted ascending p_(1) <= ... <= p_(m):  adj_(i) = max_{j <= i} min(1, (m - j + 1) p_(j)).
* ``"bh"`` (Benjamini & Hochberg 1995): controls the false discovery rate (independent or positively
  dependent tests); less strict when many measures move together.
  adj_(i) = min_{j >= i} min(1, m p_(j) / j).

Ties keep their input order; an empty family gives an empty result.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from evalops.errors import InputError

__all__ = ["CORRECTIONS", "adjust_p_values", "benjamini_hochberg", "holm"]

CORRECTIONS: tuple[str, ...] = ("holm", "bh")


def _as_p(p_values: object) -> np.ndarray:
    p = np.asarray(p_values, dtype=np.float64).reshape(-1)
    if p.size and (not np.all(np.isfinite(p)) or p.min() < 0.0 or p.max() > 1.0):
        raise InputError("p-values must be numbers between 0 and 1")
    return p


def _stepwise(p_values: object, factor: Callable[[int], np.ndarray], step_down: bool) -> np.ndarray:
    """Scale the sorted p-values by ``factor(m)``, cap at 1, make them monotone, and return them in input order.

    Step-down (Holm) carries the running maximum up from the smallest p; step-up (BH) the running
    minimum down from the largest.
    """
    p = _as_p(p_values)
    m = len(p)
    if m == 0:
        return p
    order = np.argsort(p, kind="stable")
    scaled = np.minimum(1.0, factor(m) * p[order])
    adjusted = np.empty(m)
    adjusted[order] = np.maximum.accumulate(scaled) if step_down else np.minimum.accumulate(scaled[::-1])[::-1]
    return adjusted


def holm(p_values: object) -> np.ndarray:
    """Holm step-down adjusted p-values, in the input order: factors m, m-1, ..., 1."""
    return _stepwise(p_values, lambda m: m - np.arange(m, dtype=np.float64), step_down=True)


def benjamini_hochberg(p_values: object) -> np.ndarray:
    """Benjamini-Hochberg step-up adjusted p-values, in the input order: factors m/1, m/2, ..., m/m."""
    return _stepwise(p_values, lambda m: m / np.arange(1, m + 1, dtype=np.float64), step_down=False)


def adjust_p_values(p_values: object, method: str = "holm") -> np.ndarray:
    """Adjusted p-values by ``method`` (``"holm"`` or ``"bh"``)."""
    if method == "holm":
        return holm(p_values)
    if method == "bh":
        return benjamini_hochberg(p_values)
    raise InputError(f"correction must be one of {', '.join(CORRECTIONS)}; got {method!r}")
