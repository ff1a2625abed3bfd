"""Sources of the retrieved contexts: each source's share of a version's top-k slots, its precision, and
the shift of a share against the baseline.

A multi-source knowledge base (policies, manuals, tickets, a wiki) differs by source in format and density.
A version that fills its top k from one noisy source shows only as a lower mean; its **source shares** show
it directly. Conventions owned here:

* **Share** of source *s* at k = the top-k slots filled by a document of *s*, over every query, divided by
  all the filled top-k slots (a pooled count: a query that returned fewer than k documents fills fewer
  slots). Ranks are the evaluation's ranking, 0-based: rank < k is in the top k.
* A document the knowledge base gives no source is counted under the policy's ``unlabelled`` name.
* **Precision** of *s* = among the judged top-k documents of *s*, the share whose grade reaches the
  relevance level (``grade >= level``; level 1 by default, as the measures' binary relevance). Unjudged
  documents are not counted either way; a source with no judged document has no precision (None).
* **Shift** = candidate share - baseline share (both at the same k, both from today's source labels). A
  shift whose absolute value exceeds the bound ``max_shift`` is **breached**; a source present on one side
  only counts 0 on the other.

Pure: plain mappings in, plain rows out.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import asdict, dataclass
from typing import Any

__all__ = ["SourcePolicy", "SourceShare", "SourceShift", "share_shifts", "source_shares"]


@dataclass(frozen=True)
class SourcePolicy:
    """The per-source policy of a run: the corpus field that names a document's source, the depth ``k`` of
    the counted slots, the bound on a share's shift (None: no alert), the name of unlabelled documents and
    the grade that counts as relevant."""

    field: str
    k: int
    max_shift: float | None
    unlabelled: str = "(none)"
    relevance_level: int = 1

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    def describe(self) -> str:
        bound = "no alert" if self.max_shift is None else f"alert when a share moves more than {self.max_shift:g}"
        return (f"source of a document: its corpus field {self.field!r} (none: {self.unlabelled!r}); shares of "
                f"the top-{self.k} slots pooled over queries; precision: judged documents with grade >= "
                f"{self.relevance_level}; {bound} against the baseline")


@dataclass(frozen=True)
class SourceShare:
    """One source of one version: ``slots`` of its top k (of ``total`` filled), ``judged`` of them judged,
    ``relevant`` of those relevant."""

    source: str
    slots: int
    total: int
    judged: int
    relevant: int

    @property
    def share(self) -> float:
        return self.slots / self.total if self.total else 0.0

    @property
    def precision(self) -> float | None:
        return self.relevant / self.judged if self.judged else None

    def to_dict(self) -> dict[str, Any]:
        return {"source": self.source, "slots": self.slots, "total": self.total, "share": self.share,
                "judged": self.judged, "relevant": self.relevant, "precision": self.precision}


@dataclass(frozen=True)
class SourceShift:
    """A source's share in the baseline and in the candidate, the shift and whether it breaches the bound."""

    source: str
    baseline: float
    candidate: float
    bound: float | None

    @property
    def shift(self) -> float:
        return self.candidate - self.baseline

    @property
    def breached(self) -> bool:
        return self.bound is not None and abs(self.shift) > self.bound

    def to_dict(self) -> dict[str, Any]:
        return {"source": self.source, "baseline": self.baseline, "candidate": self.candidate, "shift": self.shift,
                "bound": self.bound, "breached": self.breached}


def source_shares(ranked: Mapping[str, Iterable[tuple[str, int]]], doc_source: Mapping[str, str],
                  policy: SourcePolicy, grades: Mapping[str, Mapping[str, int]] | None = None) -> list[SourceShare]:
    """Each source's share of the top-k slots of ``ranked`` (``{query: [(doc, rank), ...]}``, 0-based ranks)
    and its precision against ``grades`` (``{query: {doc: grade}}``, the judgments); sorted by source.

    A document listed twice for one query at the same rank counts once (the judged and unjudged lists of a
    ranking may both carry it)."""
    slots: dict[str, int] = {}
    judged: dict[str, int] = {}
    relevant: dict[str, int] = {}
    grades = grades or {}
    for query, docs in ranked.items():
        seen: set[tuple[str, int]] = set()
        qgrades = grades.get(query, {})
        for doc, rank in docs:
            if rank >= policy.k or (doc, rank) in seen:
                continue
            seen.add((doc, rank))
            source = doc_source.get(doc, policy.unlabelled)
            slots[source] = slots.get(source, 0) + 1
            grade = qgrades.get(doc)
            if grade is not None:
                judged[source] = judged.get(source, 0) + 1
                if grade >= policy.relevance_level:
                    relevant[source] = relevant.get(source, 0) + 1
    total = sum(slots.values())
    return [SourceShare(s, slots[s], total, judged.get(s, 0), relevant.get(s, 0)) for s in sorted(slots)]


def share_shifts(baseline: Iterable[SourceShare], candidate: Iterable[SourceShare],
                 max_shift: float | None) -> list[SourceShift]:
    """The shift of every source present on either side (sorted by source)."""
    b = {s.source: s.share for s in baseline}
    c = {s.source: s.share for s in candidate}
    return [SourceShift(s, b.get(s, 0.0), c.get(s, 0.0), max_shift) for s in sorted(set(b) | set(c))]
