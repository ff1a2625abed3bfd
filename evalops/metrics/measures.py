"""The measures evalops computes, declared in one place: name, description, parameters, cutoff rule.

A measure is an immutable value such as ``P(rel=2)@5``. It prints as its canonical string (parameters at
their default are left out, the rest in declaration order), and equality and hashing use that string, so
measures work as dict keys and round-trip through a database column. Names and grammar follow
ir_measures. The numeric kernels live in :mod:`evalops.metrics.kernels`; this module holds no arithmetic.
Each class is computed through its entry in :mod:`evalops.metrics.registry` (its kernel and what the kernel
needs), which is also where the parser finds it by name.

Conventions shared by every measure (stated once here):

* Ranking: score descending, ties by doc id descending (trec_eval compares docnos with ``strcmp``); a
  query without scores keeps the retriever's order. ``rank`` below is 1-based.
* ``rel_i`` is 1 when the document at rank i has grade >= ``rel`` (trec_eval's relevance level), else 0.
  Unjudged documents are non-relevant.
* ``R`` is the number of judged documents of the query with grade >= ``rel`` (from the qrels, never from
  the run). A ratio whose denominator is 0 is 0.
* ``judged_only=True`` (trec_eval ``-J``, Sakai's condensed list, written ``nDCG'`` in the literature):
  the documents without a judgment of grade >= 0 are removed from the ranking first, the rest move up
  and keep their order, and the measure is computed on that list. A negative grade is trec_eval's "in the
  pool but not judged", so it is removed too. ``R`` and the ideal ranking do not change.
* Every measure declares its direction (``higher_is_better``); all measures here are higher-is-better.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any, ClassVar, Literal

from evalops.errors import MeasureError
from evalops.measure_aliases import ALIASES

__all__ = [
    "Param",
    "Measure",
    "Precision",
    "Recall",
    "F1",
    "NDCG",
    "ReciprocalRank",
    "AveragePrecision",
    "Success",
    "RPrecision",
    "ContextPrecision",
    "Judged",
    "Bpref",
    "NumRel",
    "NumRet",
    "NumRelRet",
    "SetP",
    "SetR",
    "SetF",
    "IPrec",
    "TREC_EVAL_NAMES",
    "ALIASES",
]


@dataclass(frozen=True)
class Param:
    """A declared measure parameter: its type, default, and the values it allows."""

    name: str
    kind: type[Any]
    default: Any
    description: str
    choices: tuple[Any, ...] | None = None
    minimum: int | None = None
    maximum: int | None = None

    def check(self, measure: str, value: Any) -> Any:
        """Return ``value`` if allowed for ``measure``, else raise ``MeasureError`` saying what is allowed."""
        if self.kind is bool and isinstance(value, str) and value.lower() in ("true", "false"):
            value = value.lower() == "true"  # the grammar's bare words True / False
        if self.kind is float and isinstance(value, int) and not isinstance(value, bool):
            value = float(value)  # beta=2 is beta=2.0
        if value is None and self.default is None:
            raise MeasureError(f"{measure} needs {self.name} ({self.description}), for example {measure}@0.5")
        if self.kind is int and isinstance(value, bool) or not isinstance(value, self.kind):
            raise MeasureError(
                f"{measure}: parameter {self.name}={value!r} must be {self.kind.__name__} ({self.description})"
            )
        if self.choices is not None and value not in self.choices:
            allowed = ", ".join(map(str, self.choices))
            raise MeasureError(f"{measure}: parameter {self.name}={value!r} is not one of {allowed}")
        if self.minimum is not None and value < self.minimum:
            raise MeasureError(f"{measure}: parameter {self.name}={value!r} must be >= {self.minimum}")
        if self.maximum is not None and value > self.maximum:
            raise MeasureError(f"{measure}: parameter {self.name}={value!r} must be <= {self.maximum}")
        return value


REL = Param("rel", int, 1, "minimum grade that counts as relevant (trec_eval -l)", minimum=1)
JUDGED_ONLY = Param(
    "judged_only", bool, False, "drop unjudged documents from the ranking first (condensed list, trec_eval -J)"
)
GAIN = Param("gain", str, "linear", "gain of a document with grade g: linear = g, exp = 2^g - 1", ("linear", "exp"))

Cutoff = Literal["required", "optional", "none"]


class Measure:
    """Base class. Subclasses declare ``NAME``, ``PARAMS``, ``CUTOFF`` and a docstring with the formula.

    ``Precision(cutoff=5, rel=2)`` builds ``P(rel=2)@5``; ``m @ 10`` gives the same measure at another
    cutoff and ``m(rel=2)`` changes parameters.
    """

    NAME: ClassVar[str]
    DESCRIPTION: ClassVar[str]
    PARAMS: ClassVar[tuple[Param, ...]] = ()
    CUTOFF: ClassVar[Cutoff] = "optional"
    TREC_EVAL: ClassVar[str | None] = None  # the trec_eval measure reproduced exactly, if any
    HIGHER_IS_BETTER: ClassVar[bool] = True
    # whether every per-query value lies in [0, 1] (a share or a normalised gain), so that two versions'
    # per-query deltas lie in [-1, 1]: the daily production looks pool such a measure (evalops.pipeline.pooling)
    UNIT_RANGE: ClassVar[bool] = True
    # False for a measure that does not depend on the query having a relevant document (Judged@k)
    NO_ANSWER_APPLIES: ClassVar[bool] = True
    UNJUDGED_RULE: ClassVar[str] = "non-relevant"
    # the parameter that ``@x`` sets when it is not a rank cutoff (IPrec@0.5 is a recall level), as in ir_measures
    AT_PARAM: ClassVar[str | None] = None

    __slots__ = ("_cutoff", "_params", "_canonical")

    def __init__(self, cutoff: int | None = None, **params: Any) -> None:
        if self.AT_PARAM is not None and cutoff is not None:
            if self.AT_PARAM in params:
                raise MeasureError(f"{self.NAME}: {self.AT_PARAM} is given twice (as a parameter and after @)")
            params, cutoff = {**params, self.AT_PARAM: cutoff}, None
        declared = {p.name: p for p in self.PARAMS}
        unknown = sorted(set(params) - set(declared))
        if unknown:
            valid = ", ".join(declared) or "none"
            raise MeasureError(f"{self.NAME}: unknown parameter(s) {', '.join(unknown)}; valid parameters: {valid}")
        values = {name: p.check(self.NAME, params.get(name, p.default)) for name, p in declared.items()}
        if cutoff is not None:
            if self.CUTOFF == "none":
                raise MeasureError(f"{self.NAME} takes no cutoff (write {self.NAME}, not {self.NAME}@{cutoff})")
            if isinstance(cutoff, bool) or not isinstance(cutoff, int) or cutoff < 1:
                raise MeasureError(f"{self.NAME}: cutoff {cutoff!r} must be a positive integer")
        elif self.CUTOFF == "required":
            raise MeasureError(f"{self.NAME} needs a cutoff, for example {self.NAME}@10")
        self._cutoff = cutoff
        self._params: Mapping[str, Any] = MappingProxyType(values)
        self._canonical = self._render()

    # -- value semantics ---------------------------------------------------------------------------
    def _render(self) -> str:
        shown = [f"{p.name}={self._params[p.name]}" for p in self.PARAMS
                 if self._params[p.name] != p.default and p.name != self.AT_PARAM]
        text = self.NAME + (f"({','.join(shown)})" if shown else "")
        at = self._params[self.AT_PARAM] if self.AT_PARAM is not None else self._cutoff
        return text + (f"@{at}" if at is not None else "")

    def __str__(self) -> str:
        return self._canonical

    def __repr__(self) -> str:
        return f"Measure({self._canonical!r})"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Measure) and other._canonical == self._canonical

    def __hash__(self) -> int:
        return hash(self._canonical)

    def __setattr__(self, name: str, value: Any) -> None:
        if hasattr(self, "_canonical"):
            raise AttributeError("measures are immutable")
        object.__setattr__(self, name, value)

    def __matmul__(self, cutoff: int) -> Measure:
        return type(self)(cutoff, **self._params)

    def __call__(self, **params: Any) -> Measure:
        return type(self)(self._cutoff, **{**self._params, **params})

    def __getitem__(self, name: str) -> Any:
        return self._params[name]

    # -- what the evaluator needs ------------------------------------------------------------------
    @property
    def cutoff(self) -> int | None:
        return self._cutoff

    @property
    def rank_cutoff(self) -> int:
        """The cutoff of a measure that needs one (``CUTOFF = "required"``; the constructor checked it is there)."""
        if self._cutoff is None:
            raise MeasureError(f"{self.NAME} needs a cutoff, for example {self.NAME}@10")
        return self._cutoff

    @property
    def params(self) -> Mapping[str, Any]:
        return self._params

    @property
    def higher_is_better(self) -> bool:
        """The direction of the measure, for the statistics and the alerting rule."""
        return self.HIGHER_IS_BETTER

    @property
    def judged_only(self) -> bool:
        """Whether the measure is computed on the condensed list (unjudged documents removed)."""
        return bool(self._params.get("judged_only", False))

    @property
    def unjudged_rule(self) -> str:
        """How the measure treats the run's unjudged documents (named in every result's policies)."""
        if self.judged_only:
            return "removed from the ranking (condensed list, trec_eval -J)"
        return self.UNJUDGED_RULE

    @property
    def relevance_threshold(self) -> int:
        """The grade a document needs to count as relevant; a query with none is a "no-answer" query."""
        return int(self._params.get("rel", 1))


class Precision(Measure):
    """P@k = (sum_{i<=k} rel_i) / k. Divides by k even when fewer than k documents were retrieved."""

    NAME = "P"
    DESCRIPTION = "precision in the top k"
    PARAMS = (REL, JUDGED_ONLY)
    CUTOFF = "required"
    TREC_EVAL = "P.k"


class Recall(Measure):
    """R@k = (sum_{i<=k} rel_i) / R."""

    NAME = "R"
    DESCRIPTION = "fraction of the relevant documents retrieved in the top k"
    PARAMS = (REL, JUDGED_ONLY)
    CUTOFF = "required"
    TREC_EVAL = "recall.k"


class F1(Measure):
    """F1@k = 2 * P@k * R@k / (P@k + R@k), 0 when both are 0."""

    NAME = "F1"
    DESCRIPTION = "harmonic mean of P@k and R@k"
    PARAMS = (REL, JUDGED_ONLY)
    CUTOFF = "required"


class NDCG(Measure):
    """nDCG@k = DCG@k / IDCG@k, with DCG@k = sum_{i<=k} gain(g_i) / log2(i + 1).

    gain(g) = g (``gain=linear``, trec_eval's ``ndcg_cut``) or 2^g - 1 (``gain=exp``); documents with
    grade <= 0 and unjudged documents have gain 0. IDCG@k is the DCG of the query's judged grades sorted
    descending (the ideal ranking comes from the qrels, never from the retrieved list). Without a cutoff
    the whole ranking counts (trec_eval's ``ndcg``). 0 when IDCG is 0.
    """

    NAME = "nDCG"
    DESCRIPTION = "normalised discounted cumulative gain"
    PARAMS = (GAIN, JUDGED_ONLY)
    CUTOFF = "optional"
    TREC_EVAL = "ndcg_cut.k (ndcg without a cutoff)"

    @property
    def relevance_threshold(self) -> int:
        return 1  # any positive grade has a gain


class ReciprocalRank(Measure):
    """RR@k = 1 / (rank of the first relevant document), 0 when none is in the top k (or retrieved)."""

    NAME = "RR"
    DESCRIPTION = "reciprocal rank of the first relevant document"
    PARAMS = (REL, JUDGED_ONLY)
    CUTOFF = "optional"
    TREC_EVAL = "recip_rank (without a cutoff)"


class AveragePrecision(Measure):
    """AP@k = (sum_{i<=k} rel_i * P@i) / R. Without a cutoff, the whole ranking (trec_eval ``map``)."""

    NAME = "AP"
    DESCRIPTION = "average precision"
    PARAMS = (REL, JUDGED_ONLY)
    CUTOFF = "optional"
    TREC_EVAL = "map (map_cut.k with a cutoff)"


class Success(Measure):
    """Success@k = 1 if some document in the top k is relevant, else 0."""

    NAME = "Success"
    DESCRIPTION = "whether a relevant document is in the top k"
    PARAMS = (REL, JUDGED_ONLY)
    CUTOFF = "required"
    TREC_EVAL = "success.k"


class RPrecision(Measure):
    """R-Prec = (sum_{i<=R} rel_i) / R: precision at rank R, the query's number of relevant documents."""

    NAME = "R-Prec"
    DESCRIPTION = "precision at rank R (R = number of relevant documents)"
    PARAMS = (REL, JUDGED_ONLY)
    CUTOFF = "none"
    TREC_EVAL = "Rprec"


class ContextPrecision(Measure):
    """ContextPrecision@k = (sum_{i<=k} P@i * rel_i) / (sum_{i<=k} rel_i), 0 when no relevant is in the top k.

    The RAGAS definition: unlike AP, the denominator is the number of relevant documents retrieved in the
    top k, not R.
    """

    NAME = "ContextPrecision"
    DESCRIPTION = "RAGAS context precision"
    PARAMS = (REL, JUDGED_ONLY)
    CUTOFF = "required"


class Judged(Measure):
    """Judged@k = (number of documents in the top k that have a judgment) / min(k, n_ret), as in ir_measures.

    A judgment is any qrels line for the query, whatever its grade. ``n_ret`` is the number of documents
    the run returned for the query, so a run shorter than k is not penalised (ir_measures' rule); a query
    the run did not answer scores 0. Not subject to the no-answer policy: a query with no relevant
    document still has a judged coverage. The ranking is evalops' (trec_eval's), so ties at the cutoff are
    broken exactly as for the other measures.
    """

    NAME = "Judged"
    DESCRIPTION = "share of the top k that has a judgment (judged coverage)"
    CUTOFF = "required"
    NO_ANSWER_APPLIES = False
    UNJUDGED_RULE = "counted as unjudged (the measure's subject)"


class Bpref(Measure):
    """bpref = (1 / R) * sum over judged relevant retrieved d of (1 - min(n_d, R) / min(N, R)), trec_eval's.

    ``n_d`` is the number of judged non-relevant documents (0 <= grade < rel) ranked above d, ``N`` the
    number of judged non-relevant documents of the query (from the qrels); the term is 1 when ``n_d`` is 0.
    Unjudged documents (and negative grades, trec_eval's "in the pool but unjudged") are skipped, so
    bpref is its own condensed-list measure. 0 when R is 0 (Buckley and Voorhees, SIGIR 2004).
    """

    NAME = "Bpref"
    DESCRIPTION = "binary preference: judged relevant documents ranked above judged non-relevant ones"
    PARAMS = (REL,)
    CUTOFF = "none"
    TREC_EVAL = "bpref"
    UNJUDGED_RULE = "skipped (bpref compares judged documents only)"


class NumRel(Measure):
    """NumRel = R, the number of judged documents of the query with grade >= rel (whatever was retrieved).

    A query the run did not answer scores 0, as on every measure (and as in ir_measures).

    A count, not a share: evalops averages it over the queries like every measure (ir_measures and
    trec_eval sum it; the sum is n x mean)."""

    NAME = "NumRel"
    DESCRIPTION = "number of relevant judged documents (trec_eval num_rel)"
    PARAMS = (REL,)
    CUTOFF = "none"
    TREC_EVAL = "num_rel"
    UNIT_RANGE = False


class NumRet(Measure):
    """NumRet = the number of documents the run returned for the query (0 for a query it did not answer).

    A count (averaged by evalops, summed by ir_measures and trec_eval)."""

    NAME = "NumRet"
    DESCRIPTION = "number of documents retrieved (trec_eval num_ret)"
    CUTOFF = "none"
    TREC_EVAL = "num_ret"
    UNIT_RANGE = False


class NumRelRet(Measure):
    """NumRelRet = sum_i rel_i over the whole ranking: relevant documents retrieved at any rank.

    ir_measures spells it ``NumRet(rel=1)``. A count (averaged by evalops, summed by ir_measures)."""

    NAME = "NumRelRet"
    DESCRIPTION = "number of relevant documents retrieved (trec_eval num_rel_ret)"
    PARAMS = (REL,)
    CUTOFF = "none"
    TREC_EVAL = "num_rel_ret"
    UNIT_RANGE = False


class SetP(Measure):
    """SetP = NumRelRet / NumRet: precision of the whole retrieved set, 0 when nothing was retrieved."""

    NAME = "SetP"
    DESCRIPTION = "precision of the whole retrieved set"
    PARAMS = (REL,)
    CUTOFF = "none"
    TREC_EVAL = "set_P"


class SetR(Measure):
    """SetR = NumRelRet / R: recall of the whole retrieved set."""

    NAME = "SetR"
    DESCRIPTION = "recall of the whole retrieved set"
    PARAMS = (REL,)
    CUTOFF = "none"
    TREC_EVAL = "set_recall"


BETA = Param("beta", float, 1.0, "weight of recall against precision in the harmonic mean", minimum=0)


class SetF(Measure):
    """SetF = (1 + beta^2) * SetP * SetR / (beta^2 * SetP + SetR), 0 when the denominator is 0."""

    NAME = "SetF"
    DESCRIPTION = "F measure of the whole retrieved set"
    PARAMS = (REL, BETA)
    CUTOFF = "none"
    TREC_EVAL = "set_F"


RECALL_LEVEL = Param("recall", float, None, "the recall level", minimum=0, maximum=1)


class IPrec(Measure):
    """IPrec@x = max over ranks i with recall_i >= x of P@i (interpolated precision), 0 when no rank
    reaches recall x. ``recall_i`` = (sum_{j<=i} rel_j) / R; ``@x`` is the recall level, not a cutoff
    (ir_measures' ``IPrec@0.5``, trec_eval's ``iprec_at_recall_0.50``)."""

    NAME = "IPrec"
    DESCRIPTION = "interpolated precision at a recall level"
    PARAMS = (RECALL_LEVEL, REL)
    CUTOFF = "none"
    AT_PARAM = "recall"
    TREC_EVAL = "iprec_at_recall"


# trec_eval's names with a cutoff or level after "_" or "." (ndcg_cut_10, P.5, iprec_at_recall_0.50)
TREC_EVAL_NAMES: dict[str, str] = {
    "P": "P", "recall": "R", "ndcg_cut": "nDCG", "map_cut": "AP", "success": "Success",
    "iprec_at_recall": "IPrec",
}
