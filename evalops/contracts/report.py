"""The outcome of a data-contract validation, and its readable summary. Pure: no Great Expectations here."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

from evalops.errors import ValidationError

__all__ = ["Failure", "ValidationReport"]


def _plain(value: Any) -> Any:
    """numpy scalars become Python values (for messages and JSON)."""
    return value.item() if hasattr(value, "item") and callable(value.item) and not isinstance(value, str | list) else value


def _short(value: Any, width: int = 60) -> str:
    value = _plain(value)
    text = f"{value:.4g}" if isinstance(value, float) else repr(value)
    return text if len(text) <= width else text[: width - 3] + "..."


@dataclass(frozen=True)
class Failure:
    """One failed expectation.

    ``rule`` is the contract's name for it ("unique query ids"); ``expectation`` the Great Expectations
    type; ``unexpected_count``/``element_count`` are rows for row checks and None for table checks, which
    report ``observed`` instead. ``error`` is set when the expectation could not be evaluated at all.
    """

    rule: str
    expectation: str
    table: str
    column: str | None = None
    unexpected_count: int | None = None
    element_count: int | None = None
    examples: list[Any] = field(default_factory=list)
    observed: Any = None
    expected: str | None = None
    error: str | None = None
    missing: list[Any] = field(default_factory=list)  # values a "contains" expectation did not find

    def line(self) -> str:
        target = f"{self.table}.{self.column}" if self.column else self.table
        head = f"- {self.rule} [{self.expectation} on {target}]"
        if self.error:
            return f"{head}: could not be evaluated ({self.error})"
        parts = []
        if self.unexpected_count is not None:
            of = f" of {self.element_count}" if self.element_count is not None else ""
            parts.append(f"{self.unexpected_count}{of} rows failed")
        if self.missing:
            parts.append("missing " + ", ".join(_short(v, 40) for v in self.missing))
        if self.observed is not None:
            parts.append(f"observed {_short(self.observed)}")
        if self.expected:
            parts.append(f"expected {self.expected}")
        if self.examples:
            parts.append("e.g. " + ", ".join(_short(v, 90) for v in self.examples))
        return head + (": " + "; ".join(parts) if parts else "")

    def to_dict(self) -> dict[str, Any]:
        def plain(v: Any) -> Any:
            v = _plain(v)
            return v if isinstance(v, str | int | float | bool) or v is None else str(v)

        out = asdict(self)
        out["examples"] = [plain(v) for v in self.examples]
        out["missing"] = [plain(v) for v in self.missing]
        out["observed"] = plain(self.observed)
        return out


@dataclass(frozen=True)
class ValidationReport:
    """All checks of one contract on one dataset.

    ``subject`` names the data ("gold set include/goldset (version 1a2b...)"), ``checked`` the number of
    expectations evaluated, ``rules`` the thresholds used, ``docs_path`` the Data Docs index (or None).
    """

    contract: str
    subject: str
    checked: int
    failures: list[Failure]
    rules: dict[str, Any] = field(default_factory=dict)
    docs_path: str | None = None
    notes: list[str] = field(default_factory=list)
    not_applicable: list[dict[str, str]] = field(default_factory=list)  # [{"rule", "reason"}]
    warnings: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.failures

    @property
    def failed_rules(self) -> list[str]:
        return sorted({f.rule for f in self.failures})

    def summary(self) -> str:
        verdict = f"passed ({self.checked} expectations)" if self.ok else f"FAILED {len(self.failures)} of {self.checked} expectations"
        lines = [f"{self.contract} contract {verdict}: {self.subject}"]
        lines += [f.line() for f in self.failures]
        lines += [f"- not applicable: {n['rule']} ({n['reason']})" for n in self.not_applicable]
        lines += [f"warning: {w}" for w in self.warnings]
        lines += [f"note: {n}" for n in self.notes]
        if self.docs_path:
            lines.append(f"Data Docs: {self.docs_path}")
        return "\n".join(lines)

    def raise_if_failed(self) -> ValidationReport:
        """Raise ``ValidationError(summary, failures, docs_path)`` when any expectation failed."""
        if not self.ok:
            raise ValidationError(self.summary(), [f.to_dict() for f in self.failures], self.docs_path)
        return self

    def to_dict(self) -> dict[str, Any]:
        return {
            "contract": self.contract,
            "subject": self.subject,
            "ok": self.ok,
            "checked": self.checked,
            "failures": [f.to_dict() for f in self.failures],
            "rules": self.rules,
            "docs_path": self.docs_path,
            "notes": self.notes,
            "not_applicable": self.not_applicable,
            "warnings": self.warnings,
        }
