"""Absolute floors: a version's score on a gold set must not fall under a set value, baseline or not.

Configured per gold set (``gold_set: {floors: {nDCG@10: 0.30}, floor_on: mean, floor_severity: critical}``,
docs/settings.md). ``floor_on`` chooses what is checked: ``mean`` (the version's mean over the judged
queries) or ``lower_bound`` (the lower end of its 95% Student-t interval, ``evalops.metrics.summarize``:
the floor is breached unless the version is clearly above it). A breach has its own severity
(``floor_severity``), fails the gate (kind ``floor``, ``evalops.gate``) and raises a ``floor`` alert. Pure:
the checks read the aggregates the warehouse stores for every scored run.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from evalops.errors import InputError

__all__ = ["FLOOR_ON", "FLOOR_SEVERITIES", "FloorCheck", "FloorRule", "check_floors", "floor_checks", "floor_rules",
           "parse_floors"]

FLOOR_ON: tuple[str, ...] = ("mean", "lower_bound")
FLOOR_SEVERITIES: tuple[str, ...] = ("critical", "warning")


@dataclass(frozen=True)
class FloorCheck:
    """One floor against one version's aggregate: ``value`` is the mean or the interval's lower end
    (``on``); ``None`` when the version has no score for the measure (a breach: it cannot be shown above)."""

    run_id: int | None
    measure: str
    floor: float
    on: str
    severity: str
    value: float | None
    mean: float | None
    ci_low: float | None
    ci_high: float | None

    @property
    def breached(self) -> bool:
        return self.value is None or not math.isfinite(self.value) or self.value < self.floor

    def describe(self) -> str:
        what = "mean" if self.on == "mean" else "95% CI lower bound"
        if self.value is None or not math.isfinite(self.value):
            return f"{self.measure} floor {self.floor:g} ({self.on}): the version has no {self.measure} score"
        ci = ("" if self.ci_low is None or self.ci_high is None
              else f" (mean {self.mean:.4f}, 95% CI [{self.ci_low:.4f}, {self.ci_high:.4f}])")
        verb = "under" if self.breached else "at or above"
        return f"{self.measure} {what} {self.value:.4f} is {verb} the floor {self.floor:g}{ci}"

    def to_dict(self) -> dict[str, Any]:
        return {"run_id": self.run_id, "measure": self.measure, "floor": self.floor, "on": self.on,
                "severity": self.severity, "value": self.value, "mean": self.mean, "ci_low": self.ci_low,
                "ci_high": self.ci_high, "breached": self.breached}


def parse_floors(floors: Mapping[str, Any], measures: list[str] | None = None) -> dict[str, float]:
    """``{canonical measure: floor}``; a ``ValueError`` naming the key when a measure does not parse, is not
    among ``measures`` (the configured ones), or its floor is not a number in [0, 1]."""
    from evalops.metrics import parse_measures

    out: dict[str, float] = {}
    for name, value in dict(floors).items():
        try:
            [parsed] = parse_measures([str(name)])
        except (InputError, ValueError) as exc:
            raise ValueError(f"{name}: {exc}") from None
        canonical = str(parsed)
        if measures is not None and canonical not in measures:
            raise ValueError(f"{name}: {canonical} is not among the measures {measures}; a floor needs "
                             "its measure scored")
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0.0 <= float(value) <= 1.0:
            raise ValueError(f"{name}: the floor must be a number between 0 and 1; got {value!r}")
        out[canonical] = float(value)
    return out


def check_floors(floors: Mapping[str, float], aggregates: Any, *, on: str = "mean", severity: str = "critical",
                 run_id: int | None = None) -> list[FloorCheck]:
    """Each floor against ``aggregates`` (rows of ``measure, mean, ci_low, ci_high``, a DataFrame or a list
    of mappings), in the floors' order."""
    rows = aggregates.to_dict("records") if hasattr(aggregates, "to_dict") else list(aggregates)
    by_measure = {str(r["measure"]): r for r in rows}

    def num(x: Any) -> float | None:
        return None if x is None or (isinstance(x, float) and math.isnan(x)) else float(x)

    out = []
    for measure, floor in floors.items():
        row = by_measure.get(measure, {})
        mean, low, high = num(row.get("mean")), num(row.get("ci_low")), num(row.get("ci_high"))
        value = mean if on == "mean" else low
        out.append(FloorCheck(run_id, measure, float(floor), on, severity, value, mean, low, high))
    return out


@dataclass(frozen=True)
class FloorRule:
    """One gold set's floors and how they are checked (its ``floors``, ``floor_on`` and ``floor_severity``)."""

    floors: Mapping[str, float]
    on: str = "mean"
    severity: str = "critical"


def floor_rules(gold_sets: Mapping[str, Any]) -> dict[str, FloorRule]:
    """The :class:`FloorRule` of each gold set that sets floors, by name (``gold_sets``: the settings' gold sets)."""
    return {name: FloorRule(dict(s.floors), s.floor_on, s.floor_severity) for name, s in gold_sets.items() if s.floors}


def floor_checks(rules: Mapping[str, FloorRule], gold_set: str, run_id: int, aggregates: Any) -> list[FloorCheck]:
    """The floors of ``gold_set`` (its rule in ``rules``, :func:`floor_rules`) checked against one run's aggregates."""
    rule = rules.get(gold_set)
    if rule is None:
        return []
    return check_floors(rule.floors, aggregates, on=rule.on, severity=rule.severity, run_id=run_id)
