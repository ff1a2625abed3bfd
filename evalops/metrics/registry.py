"""The measure registry: one entry per measure, holding its class, its kernel and what the kernel needs.

Adding a measure is one class (its name, parameters and formula, in :mod:`evalops.metrics.measures` or a
family's own module) and one :func:`register` call naming its kernel and its needs; nothing else lists
measure names. The scoring code reads an entry's :class:`Need` set, never a set of names: whether to rank
every judged document (``Need.JUDGED``), build the ideal ranking (``Need.IDEAL``), count R at the measure's
relevance threshold (``Need.RELEVANT_COUNT``), read the qrels grades, the retrieved texts or the query text.

Families share the one table and the one entry type, :class:`MeasureEntry`; what differs is the kernel's
signature, so each family is a subclass that types its ``kernel``:

* :class:`RankEntry` (IR measures over the queries x depth grade matrix, :mod:`evalops.metrics.kernels`),
* :class:`JudgedEntry` (IR measures over every judged document the run retrieved: Judged@k, bpref),
* ``ContextEntry`` (:mod:`evalops.context.compute`: the context measures, per query over the top k texts),
* ``JudgeEntry`` (:mod:`evalops.judges.measures`: a judge label per query and version, with its prompt).

An entry is checked when it is built and again when registered: a class with a ``NAME``, a callable kernel,
needs that are :class:`Need` members, a name no other entry holds. The parser's names are per family
(:func:`measure_types`): ``nDCG@10`` is an IR measure and ``Tokens@10`` a context measure, as before.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from enum import Enum
from typing import ClassVar

import numpy as np

from evalops.errors import MeasureError
from evalops.metrics import kernels
from evalops.metrics.gold import Gold
from evalops.metrics.measures import (
    ALIASES,
    F1,
    NDCG,
    AveragePrecision,
    Bpref,
    ContextPrecision,
    IPrec,
    Judged,
    Measure,
    NumRel,
    NumRelRet,
    NumRet,
    Precision,
    Recall,
    ReciprocalRank,
    RPrecision,
    SetF,
    SetP,
    SetR,
    Success,
)
from evalops.metrics.ranking import Hits

__all__ = [
    "Need",
    "MeasureEntry",
    "RankEntry",
    "JudgedEntry",
    "RankKernel",
    "JudgedKernel",
    "IR",
    "register",
    "entries",
    "entry_of",
    "needs",
    "measure_types",
    "MEASURE_TYPES",
    "measure_type",
    "valid_names_hint",
]


class Need(Enum):
    """What a measure's kernel reads besides the run's ranking; the scoring code prepares only what is needed."""

    GRADES = "the qrels grades of the ranked documents"
    IDEAL = "the ideal ranking: each query's judged grades sorted descending"
    RELEVANT_COUNT = "R, the query's judged documents at or above the measure's relevance threshold"
    JUDGED = "every judged document the run retrieved, relevant or not"
    CONTEXT_TEXT = "the texts of the top k documents"
    QUERY_TEXT = "the text of the query"
    JUDGE_LABELS = "an LLM judge's labels, one per query and version (each repeat)"
    ANSWER = "the answer the version generated"
    REFERENCE_ANSWER = "the query's reference answer"


IR = "ir"  # the family the default parser reads (nDCG@10, its aliases and trec_eval names)

# (measure, grade matrix, ideal matrix, R at the measure's threshold, documents retrieved) -> one value per
# query of the chunk; the matrices are the chunk's rows (evalops.metrics.compute.per_query_values)
RankKernel = Callable[[Measure, np.ndarray, np.ndarray, np.ndarray, np.ndarray], np.ndarray]
# (measure, gold, every retrieved judged document sorted by query then rank) -> one value per gold query
JudgedKernel = Callable[[Measure, Gold, Hits], np.ndarray]


@dataclass(frozen=True)
class MeasureEntry:
    """One measure: its class, its kernel (typed by the subclass of the family) and what the kernel needs."""

    measure: type[Measure]
    needs: frozenset[Need]

    FAMILY: ClassVar[str] = ""

    @property
    def name(self) -> str:
        return self.measure.NAME

    def __post_init__(self) -> None:
        name = getattr(self.measure, "NAME", None)
        if not (isinstance(self.measure, type) and issubclass(self.measure, Measure) and isinstance(name, str)):
            raise MeasureError(f"a measure entry needs a Measure class with a NAME, not {self.measure!r}")
        if not self.FAMILY:
            raise MeasureError(f"{name}: a measure entry is one of a family's entry types (RankEntry, ...), "
                               f"which types its kernel; {type(self).__name__} has none")
        if not callable(self._kernel()):
            raise MeasureError(f"{name}: the entry has no kernel (got {self._kernel()!r})")
        odd = [n for n in self.needs if not isinstance(n, Need)]
        if odd:
            raise MeasureError(f"{name}: needs must be Need members, not {odd!r}")

    def _kernel(self) -> object:
        return None  # the family's subclass returns its kernel field


@dataclass(frozen=True)
class RankEntry(MeasureEntry):
    """An IR measure computed over the grade matrix of the run's ranking."""

    kernel: RankKernel
    FAMILY: ClassVar[str] = IR

    def _kernel(self) -> object:
        return self.kernel


@dataclass(frozen=True)
class JudgedEntry(MeasureEntry):
    """An IR measure over every judged document the run retrieved (``Need.JUDGED``)."""

    kernel: JudgedKernel
    FAMILY: ClassVar[str] = IR

    def __post_init__(self) -> None:
        super().__post_init__()
        if Need.JUDGED not in self.needs:
            raise MeasureError(f"{self.name}: a judged-document kernel needs Need.JUDGED")

    def _kernel(self) -> object:
        return self.kernel


_TABLE: dict[str, MeasureEntry] = {}


def register(entry: MeasureEntry) -> MeasureEntry:
    """Add ``entry`` to the registry; ``MeasureError`` when it is not a complete entry or its name is taken."""
    if not isinstance(entry, MeasureEntry):
        raise MeasureError(f"only a MeasureEntry can be registered, not {type(entry).__name__}")
    MeasureEntry.__post_init__(entry)  # again: an entry changed after it was built is still refused
    held = _TABLE.get(entry.name)
    if held is not None and held != entry:
        raise MeasureError(f"measure {entry.name!r} is registered already (as {held.measure.__qualname__})")
    _TABLE[entry.name] = entry
    return entry


def entries(family: str | None = None) -> tuple[MeasureEntry, ...]:
    """The registered entries (of one family), in registration order."""
    return tuple(e for e in _TABLE.values() if family is None or e.FAMILY == family)


def entry_of(measure: Measure) -> MeasureEntry | None:
    """The entry of ``measure``'s class; None for a measure with no entry (one ir_measures computes)."""
    entry = _TABLE.get(measure.NAME)
    return entry if entry is not None and entry.measure is type(measure) else None


def needs(measure: Measure) -> frozenset[Need]:
    """What ``measure``'s kernel reads (nothing for a measure without an entry)."""
    entry = entry_of(measure)
    return entry.needs if entry is not None else frozenset()


class _FamilyTypes(Mapping[str, type[Measure]]):
    """The live ``{name: class}`` view of one family's entries: what the parser reads."""

    def __init__(self, family: str) -> None:
        self._family = family

    def __getitem__(self, name: str) -> type[Measure]:
        entry = _TABLE.get(name)
        if entry is None or entry.FAMILY != self._family:
            raise KeyError(name)
        return entry.measure

    def __iter__(self) -> Iterator[str]:
        return iter([e.name for e in _TABLE.values() if e.FAMILY == self._family])

    def __len__(self) -> int:
        return sum(1 for e in _TABLE.values() if e.FAMILY == self._family)

    def __repr__(self) -> str:
        return f"measure_types({self._family!r}): {dict(self)!r}"


def measure_types(family: str) -> Mapping[str, type[Measure]]:
    """``{name: measure class}`` of one family, read from the registry (an entry added later is in it)."""
    return _FamilyTypes(family)


# -- the IR measures ---------------------------------------------------------------------------------------

G, IDEAL, R, J = Need.GRADES, Need.IDEAL, Need.RELEVANT_COUNT, Need.JUDGED


def _num_rel(m: Measure, g: np.ndarray, ideal: np.ndarray, r: np.ndarray, ret: np.ndarray) -> np.ndarray:
    return np.where(np.asarray(ret) > 0, r, 0).astype(np.float64)


def _bpref(m: Measure, gold: Gold, judged: Hits) -> np.ndarray:
    rel = m["rel"]
    n_nonrel = gold.n_relevant(0) - gold.n_relevant(rel)
    return kernels.bpref(judged.qidx, judged.grade, gold.n_relevant(rel), n_nonrel, rel)


for _entry in (
    RankEntry(Precision, frozenset({G}), lambda m, g, ideal, r, ret: kernels.precision(g, m.rank_cutoff, m["rel"])),
    RankEntry(Recall, frozenset({G, R}), lambda m, g, ideal, r, ret: kernels.recall(g, m.rank_cutoff, r, m["rel"])),
    RankEntry(F1, frozenset({G, R}), lambda m, g, ideal, r, ret: kernels.f1(g, m.rank_cutoff, r, m["rel"])),
    RankEntry(NDCG, frozenset({G, IDEAL}), lambda m, g, ideal, r, ret: kernels.ndcg(g, m.cutoff, ideal, m["gain"])),
    RankEntry(ReciprocalRank, frozenset({G}),
              lambda m, g, ideal, r, ret: kernels.reciprocal_rank(g, m.cutoff, m["rel"])),
    RankEntry(AveragePrecision, frozenset({G, R}),
              lambda m, g, ideal, r, ret: kernels.average_precision(g, m.cutoff, r, m["rel"])),
    RankEntry(Success, frozenset({G}), lambda m, g, ideal, r, ret: kernels.success(g, m.rank_cutoff, m["rel"])),
    RankEntry(RPrecision, frozenset({G, R}), lambda m, g, ideal, r, ret: kernels.r_precision(g, r, m["rel"])),
    RankEntry(ContextPrecision, frozenset({G}),
              lambda m, g, ideal, r, ret: kernels.context_precision(g, m.rank_cutoff, m["rel"])),
    JudgedEntry(Judged, frozenset({J}),
                lambda m, gold, hits: kernels.judged_share(hits.qidx, hits.rank, hits.retrieved, m.rank_cutoff)),
    JudgedEntry(Bpref, frozenset({G, R, J}), _bpref),
    RankEntry(NumRel, frozenset({R}), _num_rel),
    RankEntry(NumRet, frozenset(), lambda m, g, ideal, r, ret: np.asarray(ret, dtype=np.float64)),
    RankEntry(NumRelRet, frozenset({G}), lambda m, g, ideal, r, ret: kernels.relevant_retrieved(g, m["rel"])),
    RankEntry(SetP, frozenset({G}), lambda m, g, ideal, r, ret: kernels.set_precision(g, ret, m["rel"])),
    RankEntry(SetR, frozenset({G, R}), lambda m, g, ideal, r, ret: kernels.set_recall(g, r, m["rel"])),
    RankEntry(SetF, frozenset({G, R}), lambda m, g, ideal, r, ret: kernels.set_f(g, ret, r, m["rel"], m["beta"])),
    RankEntry(IPrec, frozenset({G, R}),
              lambda m, g, ideal, r, ret: kernels.interpolated_precision(g, r, m["recall"], m["rel"])),
):
    register(_entry)
del _entry

#: ``{name: class}`` of the IR measures (the registry's IR family, live)
MEASURE_TYPES: Mapping[str, type[Measure]] = measure_types(IR)


def measure_type(name: str, types: Mapping[str, type[Measure]] | None = None) -> type[Measure]:
    """The measure class for a name or alias; ``MeasureError`` listing the valid names otherwise.

    ``types`` is another family's ``{name: class}`` (e.g. the context measures'); its own names only."""
    if types is not None:
        try:
            return types[name]
        except KeyError:
            raise MeasureError(f"unknown measure {name!r}; valid measures: {', '.join(types)}") from None
    canonical = ALIASES.get(name, name)
    try:
        return MEASURE_TYPES[canonical]
    except KeyError:
        raise MeasureError(f"unknown measure {name!r}; {valid_names_hint()}") from None


def valid_names_hint() -> str:
    names = ", ".join(MEASURE_TYPES)
    examples = "nDCG@10, P(rel=2)@5, nDCG(gain=exp)@10, nDCG(judged_only=True)@10, AP, R-Prec, Judged@10, IPrec@0.5"
    return (f"valid measures: {names}, their aliases (MRR, MAP, Hit, Rprec) and trec_eval names (ndcg_cut_10, "
            f"P_10, map, recip_rank, ...), and any other ir_measures name when ir_measures is installed; "
            f"e.g. {examples}")
