"""The Judge protocol: one batch method, items in, one judgment (a label or a missing label) per item out.

Conventions owned here:

* A :class:`JudgeItem` is one thing to judge under one task (a prompt): a (query, context) pair for
  context relevance, a query with its contexts and a reference or an answer for recall and faithfulness.
  ``sample`` is the repeat index for self-consistency (0 for a single judgment).
* A :class:`Judgment` has ``label`` (a float) or ``missing`` (why there is none), never both. A missing
  label is excluded and counted, like a retriever failure; it is never replaced by a default score.
* Every judge has a :class:`JudgeFingerprint`: the model, whether it is an offline lexical judge, the
  decoding settings (temperature, seed, output mode). With a task's prompt version it is the identity of
  a label: the cache and the warehouse key labels by it, and reports print it.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

from evalops.errors import EvalopsError, InputError

__all__ = [
    "Judge",
    "JudgeBudgetError",
    "JudgeFingerprint",
    "JudgeItem",
    "Judgment",
    "MissingBudget",
    "MissingSummary",
    "content_hash",
    "summarize_missing",
]


class JudgeBudgetError(EvalopsError):
    """More judge labels were missing than the run's budget allows; the judged results are withheld."""


def content_hash(text: str) -> str:
    """SHA-256 of a text (UTF-8): the cache's key for query texts and document contents."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


@dataclass(frozen=True)
class JudgeItem:
    task: str
    query: str
    context: str = ""
    contexts: tuple[str, ...] = ()
    reference: str = ""
    answer: str = ""
    sample: int = 0

    def fields(self) -> dict[str, str]:
        """The prompt template's fields; several contexts are numbered ``[1] ...``, ``[2] ...``."""
        joined = "\n\n".join(f"[{i}] <<<{text}>>>" for i, text in enumerate(self.contexts, start=1))
        return {"query": self.query, "context": self.context, "contexts": joined,
                "reference": self.reference, "answer": self.answer}

    def document_hash(self) -> str:
        """The content hash of everything judged besides the query (context(s), reference, answer)."""
        body = json.dumps([self.context, list(self.contexts), self.reference, self.answer], ensure_ascii=False)
        return content_hash(body)


@dataclass(frozen=True)
class Judgment:
    label: float | None = None
    missing: str | None = None
    detail: dict[str, Any] = field(default_factory=dict, compare=False)
    input_tokens: int = 0
    output_tokens: int = 0
    cost: float = 0.0
    retries: int = 0
    cached: bool = False

    @property
    def ok(self) -> bool:
        return self.missing is None

    @classmethod
    def failure(cls, reason: str, **usage: Any) -> Judgment:
        return cls(None, reason, **usage)


@dataclass(frozen=True)
class JudgeFingerprint:
    """What, besides the prompt version, makes two labels comparable."""

    model: str
    offline: bool = False
    temperature: float = 0.0
    seed: int | None = None
    output_mode: str = "json_schema"

    @property
    def kind(self) -> str:
        return "lexical (offline, no model)" if self.offline else "LLM"

    def decoding(self) -> str:
        """The decoding settings as canonical JSON (a cache key component)."""
        return json.dumps({"temperature": self.temperature, "seed": self.seed, "output_mode": self.output_mode},
                          sort_keys=True)

    def describe(self) -> str:
        return f"{self.model} [{self.kind}] {self.decoding()}"

    def to_dict(self) -> dict[str, Any]:
        return {"model": self.model, "offline": self.offline, "kind": self.kind, "temperature": self.temperature,
                "seed": self.seed, "output_mode": self.output_mode}


@runtime_checkable
class Judge(Protocol):
    """Anything with a batch ``judge`` and a ``fingerprint``; results come back in the order of ``items``."""

    fingerprint: JudgeFingerprint

    def judge(self, items: Sequence[JudgeItem]) -> Sequence[Judgment]: ...


@dataclass(frozen=True)
class MissingSummary:
    total: int
    missing: int
    reasons: dict[str, int]
    budget: float

    @property
    def share(self) -> float:
        return self.missing / self.total if self.total else 0.0

    @property
    def within_budget(self) -> bool:
        return self.share <= self.budget

    def to_dict(self) -> dict[str, Any]:
        return {"total": self.total, "missing": self.missing, "share": self.share, "budget": self.budget,
                "within_budget": self.within_budget, "reasons": dict(self.reasons)}


@dataclass(frozen=True)
class MissingBudget:
    """The largest share of missing labels a run accepts (default 5 %), like the retriever failure budget."""

    max_share: float = 0.05

    def __post_init__(self) -> None:
        if not 0.0 <= self.max_share <= 1.0:
            raise InputError(f"the missing-label budget must lie in [0, 1], got {self.max_share}")

    def check(self, summary: MissingSummary) -> None:
        if not summary.within_budget:
            top = ", ".join(f"{r} ({n})" for r, n in sorted(summary.reasons.items(), key=lambda x: -x[1])[:3])
            raise JudgeBudgetError(
                f"{summary.missing} of {summary.total} judge labels are missing ({summary.share:.1%}), over the "
                f"budget of {self.max_share:.1%}; most frequent reasons: {top}"
            )


def _reason_class(reason: str) -> str:
    # Group reasons by their first clause so reports count kinds, not every distinct message.
    return reason.split(" (")[0].split(":")[0]


def summarize_missing(judgments: Sequence[Judgment], budget: MissingBudget | None = None) -> MissingSummary:
    reasons: dict[str, int] = {}
    for j in judgments:
        if j.missing is not None:
            key = _reason_class(j.missing)
            reasons[key] = reasons.get(key, 0) + 1
    budget = budget or MissingBudget()
    return MissingSummary(len(judgments), sum(reasons.values()), reasons, budget.max_share)
