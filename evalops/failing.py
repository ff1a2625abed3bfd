"""What fails: one policy, ``fail_on``, for the run's alerts, the DAG's alert task, ``evalops compare``,
``evalops gate`` and the Python API.

Every decided comparison has at most one **kind** (:func:`comparison_kind`); a kind in the policy raises an
alert of that kind (``evalops run``, the DAG), fails ``evalops gate`` and ``evalops compare --fail-on``, and
makes ``evalops.testing.assert_no_regression`` raise. A case the policy leaves out is reported, never silent.

==============  =====================================================================================
kind            the case
==============  =====================================================================================
regression      a ``regression`` the policy's ``alert_on`` notifies, on a measure that alerts
unjudged        ``inconclusive (unjudged_documents)`` on a measure that alerts, whose judged delta is a
                drop: the unjudged documents could undo it, nothing shows they do (fail closed until
                they are judged)
partial         ``inconclusive (partial_run)`` on a measure that alerts, whose judged delta is a drop: a
                side answered too few of the judged queries to compare; or a version scored partially
floor           a version under an absolute floor (``evalops.floors``)
failed          a version that could not be scored
missing         a comparison that should have been decided and cannot be found
inconclusive    any other ``inconclusive`` comparison (and the two above on a measure that does not alert)
==============  =====================================================================================

The default, :data:`DEFAULT_FAIL_ON`, is every kind but ``inconclusive``. A drop is read in the measure's
direction (a rise of a lower-is-better measure such as context tokens). Pure: no I/O.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any

from evalops.errors import InputError
from evalops.exitcodes import ExitCode, most_severe

if TYPE_CHECKING:  # pragma: no cover
    from evalops.stats import Comparison

__all__ = ["DEFAULT_FAIL_ON", "FAIL_ON", "KIND_EXIT_CODE", "comparison_kind", "exit_code", "judged_drop",
           "parse_fail_on"]

FAIL_ON: tuple[str, ...] = ("regression", "floor", "failed", "partial", "missing", "unjudged", "inconclusive")
DEFAULT_FAIL_ON: frozenset[str] = frozenset(FAIL_ON) - {"inconclusive"}
COMPARISON_KINDS: tuple[str, ...] = ("regression", "unjudged", "partial", "inconclusive")
KIND_EXIT_CODE = {"regression": ExitCode.REGRESSION, "floor": ExitCode.REGRESSION, "inconclusive": ExitCode.REGRESSION,
                  "unjudged": ExitCode.REGRESSION, "failed": ExitCode.VERSION_FAILED,
                  "partial": ExitCode.VERSION_FAILED, "missing": ExitCode.WAREHOUSE_ERROR,
                  "judge_failed": ExitCode.JUDGE_FAILED}
"""The exit code of a failing case of each kind; several: ``evalops.exitcodes.most_severe``."""


def parse_fail_on(text: str | Iterable[str] | None) -> frozenset[str]:
    """``--fail-on`` (or the ``fail_on`` setting) as a set of :data:`FAIL_ON` kinds (comma-separated; ``none``
    for an empty set; ``None``: the default); an unknown kind is an ``InputError`` naming the known ones."""
    if text is None:
        return DEFAULT_FAIL_ON
    items = [t.strip() for t in (text.split(",") if isinstance(text, str) else text) if t and t.strip()]
    if items == ["none"]:
        return frozenset()
    unknown = [t for t in items if t not in FAIL_ON]
    if unknown or not items:
        given = ",".join(items) or repr(text)
        raise InputError(f"--fail-on {given}: unknown kind(s) {', '.join(unknown) or '(none given)'}; use a "
                         f"comma-separated list of {', '.join(FAIL_ON)}, or none")
    return frozenset(items)


def _read(comparison: Comparison | Mapping[str, Any], name: str, default: Any = None) -> Any:
    return comparison.get(name, default) if isinstance(comparison, Mapping) else getattr(comparison, name)


def judged_drop(comparison: Comparison | Mapping[str, Any]) -> bool:
    """Whether the comparison's delta as judged is a drop in the measure's direction."""
    delta = _read(comparison, "delta")
    if delta is None or delta != delta:
        return False
    return delta > 0 if _read(comparison, "higher_is_better") is False else delta < 0


def comparison_kind(comparison: Comparison | Mapping[str, Any], *, alerting: bool = True) -> str | None:
    """The kind (module docstring) of one decided comparison, or of its JSON record (``Comparison.to_record``,
    the public view, a judge-label comparison's stored record); ``alerting``: whether its measure alerts.
    ``None``: nothing to fail (an improvement, no change, a regression that ``alert_on`` does not notify or on
    a measure that does not alert)."""
    decision = _read(comparison, "decision")
    if decision == "regression":
        return "regression" if alerting and _read(comparison, "alert", True) else None
    if decision != "inconclusive":
        return None
    code = _read(comparison, "reason_code")
    if alerting and judged_drop(comparison):
        if code == "unjudged_documents":
            return "unjudged"
        if code == "partial_run":
            return "partial"
    return "inconclusive"


def exit_code(kinds: Iterable[str | None], fail_on: Iterable[str]) -> ExitCode:
    """The exit code of cases of ``kinds`` under ``fail_on``: the most severe of the failing ones' codes
    (:data:`KIND_EXIT_CODE`), success when none fails."""
    policy = frozenset(fail_on)
    return most_severe(*(KIND_EXIT_CODE[k] for k in kinds if k is not None and k in policy))
