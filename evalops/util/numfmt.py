"""How evalops prints numbers: one policy for alerts, reports, the dashboard and the CLI.

Numbers are printed, never rounded in storage. The policy:

* **p-values**: 2 significant digits (``0.032``, ``0.5``), scientific below 0.001 (``1.2e-04``);
* **means, deltas and their intervals**: 4 decimals, deltas with a sign (``+0.0123``);
* **effect sizes** (d_z): 2 decimals with a sign (``+0.71``);
* **levels and shares**: a percent, ``level`` with up to 4 significant digits (``98.33%``), ``percent``
  with whole percents (``95%``); **margins**: the shortest form (``0.01``).

An undefined value (``None``, NaN, infinity) prints as ``missing``: each medium passes its own marker
(``–`` in reports and the dashboard, ``n/a`` in alerts, ``-`` in the terminal).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

__all__ = ["DASH", "INTERVAL_TESTS", "P_DIGITS", "bounds", "defined", "effect", "level", "margin", "number", "p_value", "percent"]

DASH = "–"
P_DIGITS = 2  # significant digits of a p-value
# interval methods whose interval inverts its own test: the p-value printed beside them is that test's, not a
# paired test's (evalops.stats.decision, evalops.gate)
INTERVAL_TESTS: tuple[str, ...] = ("skew-corrected t", "betting", "betting and strict t", "exact sign-flip")
DECIMALS = 4  # decimals of a mean or a delta
EFFECT_DECIMALS = 2  # decimals of d_z


def defined(value: Any) -> float | None:
    """``value`` as a float, or None when it is None, not a number, NaN or infinite."""
    if type(value) is float:  # the common case (a page of a year's trend asks 15,000 times)
        return value if math.isfinite(value) else None
    if value is None or isinstance(value, bool):
        return None
    try:
        v = float(value)
    except (TypeError, ValueError):
        return None
    return v if math.isfinite(v) else None


def p_value(p: Any, missing: str = DASH) -> str:
    """A p-value with ``P_DIGITS`` significant digits, scientific below 0.001."""
    v = defined(p)
    if v is None:
        return missing
    return f"{v:.{P_DIGITS}g}" if v >= 1e-3 else f"{v:.{P_DIGITS - 1}e}"


def number(value: Any, digits: int = DECIMALS, signed: bool = False, missing: str = DASH) -> str:
    """A mean or a delta (``signed``) with ``digits`` decimals."""
    v = defined(value)
    if v is None:
        return missing
    return f"{v:+.{digits}f}" if signed else f"{v:.{digits}f}"


def effect(value: Any, missing: str = DASH, digits: int = EFFECT_DECIMALS) -> str:
    """An effect size (d_z, g_z) with a sign."""
    return number(value, digits, signed=True, missing=missing)


def level(value: Any, missing: str = DASH) -> str:
    """A confidence level or an interval's level as a percent (``0.98333`` -> ``98.33%``)."""
    v = defined(value)
    return missing if v is None else f"{100 * v:.4g}%"


def percent(value: Any, missing: str = DASH) -> str:
    """A share in whole percents (``0.95`` -> ``95%``)."""
    v = defined(value)
    return missing if v is None else f"{v:.0%}"


def margin(value: Any, missing: str = DASH) -> str:
    """A margin or threshold in its shortest form (``0.01``)."""
    v = defined(value)
    return missing if v is None else f"{v:g}"


def bounds(judged: Mapping[str, Any] | None, signed: Any = None) -> str | None:
    """The bounds of the unjudged documents of a stored comparison (its ``judged_coverage``) in words:
    ``bounds of the unjudged documents -0.5796 .. +0.6583, condensed lists -0.0314``; ``None`` without them.
    A record stored under the per-run bound (``bound: per-run``, not a bound of the delta) says so.
    ``signed`` formats a delta (default ``+.4f``)."""
    if not judged or judged.get("holes_relevant_delta") is None:
        return None
    fmt = signed or (lambda x: f"{x:+.4f}")
    if judged.get("bound", "per-run") != "pair":
        return f"{fmt(judged['holes_relevant_delta'])} with the candidate's unjudged documents relevant (per-run bound)"
    low = judged.get("holes_pessimistic_delta")
    words = (f"bounds of the unjudged documents {fmt(low) if low is not None else '?'} .. "
             f"{fmt(judged['holes_relevant_delta'])}")
    if judged.get("condensed_delta") is not None:
        words += f", condensed lists {fmt(judged['condensed_delta'])}"
    return words
