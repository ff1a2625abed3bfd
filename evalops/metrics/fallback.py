"""Measures evalops has no native kernel for, computed by ir_measures when it is installed (the fallback).

A name evalops does not read natively (``RBP(p=0.8)``, ``ERR@10``, ``infAP``, ``SetP(relative=True)``,
``NumRet(rel=2)``) is handed to ``ir_measures.parse_measure``. When ir_measures reads it and one of its
available providers computes it, the name becomes a :class:`FallbackMeasure`: it prints as ir_measures'
canonical string, and :func:`fallback_values` scores it with ir_measures on the same judgments and run,
aligned with the gold queries (a gold query the run did not answer scores 0, as every measure's). Every
result names the measures computed this way (``policies()["computed_by_fallback"]``) and the CLI prints it.

Otherwise the name is refused, and the message says why: ir_measures is not installed, or does not know
the name either (the closest names are listed), or knows it but none of its providers installed here
computes it (the providers that would are named).
"""

from __future__ import annotations

import difflib
import re
import subprocess
from collections.abc import Sequence
from types import MappingProxyType
from typing import Any

import numpy as np

from evalops.data import RunLike, RunTable
from evalops.errors import MeasureError
from evalops.metrics.gold import Gold, as_run
from evalops.metrics.measures import ALIASES, TREC_EVAL_NAMES, Measure
from evalops.metrics.registry import MEASURE_TYPES
from evalops.util.extras import MissingExtraError, require

__all__ = ["FallbackMeasure", "fallback_measure", "fallback_values", "is_fallback", "close_names", "FALLBACK"]

FALLBACK = "ir_measures"
_PURPOSE = "compute measures evalops has no kernel for"
_UNSET = re.compile(r"<object object at 0x[0-9a-f]+>")  # ir_measures' "parameter not given" marker, as it prints
# what ir_measures' parser raises on a name it cannot read
_PARSE_ERRORS = (NameError, AssertionError, ValueError, TypeError, SyntaxError, KeyError)


class FallbackMeasure(Measure):
    """A measure ir_measures computes for evalops; its formula is ir_measures' (see its documentation)."""

    NAME = FALLBACK
    DESCRIPTION = "a measure computed by ir_measures (no native evalops kernel)"
    CUTOFF = "none"
    UNIT_RANGE = False  # not known here: the daily pooling then leaves it alone
    UNJUDGED_RULE = "as ir_measures computes the measure"

    ir_measure: Any  # the ir_measures measure, set once by __init__

    def __init__(self, measure: Any) -> None:  # an ir_measures measure, validated
        object.__setattr__(self, "ir_measure", measure)
        object.__setattr__(self, "_cutoff", None)
        object.__setattr__(self, "_params", MappingProxyType(dict(measure.params)))
        object.__setattr__(self, "_canonical", str(measure))

    def __matmul__(self, cutoff: int) -> Measure:
        return FallbackMeasure(self.ir_measure @ cutoff)

    def __call__(self, **params: Any) -> Measure:
        return FallbackMeasure(self.ir_measure(**params))

    @property
    def relevance_threshold(self) -> int:
        rel = self._params.get("rel")
        return rel if isinstance(rel, int) and not isinstance(rel, bool) and rel >= 1 else 1


def is_fallback(measure: Measure) -> bool:
    return isinstance(measure, FallbackMeasure)


def close_names(text: str) -> str:
    """The names closest to ``text``'s measure name, evalops' and ir_measures', as a sentence."""
    name = text.strip().split("(")[0].split("@")[0]
    names = [*MEASURE_TYPES, *ALIASES, *(f"{n}_10" for n in TREC_EVAL_NAMES)]
    try:
        registry = require("ir_measures", "irmeasures", _PURPOSE).measures.registry
        names += [n for n in registry if n not in names]
    except MissingExtraError:
        pass
    close = difflib.get_close_matches(name, names, n=5, cutoff=0.5)
    close += [n for n in names if n.lower() == name.lower() and n not in close]
    return f"closest names: {', '.join(close)}" if close else "no measure name is close to it"


def fallback_measure(text: str, native: MeasureError) -> Measure:
    """``text`` as a :class:`FallbackMeasure`, or ``MeasureError``: ``native`` (evalops' own reason), the
    closest names, and what the fallback said."""
    try:
        ir_measures = require("ir_measures", "irmeasures", _PURPOSE)
    except MissingExtraError:
        raise MeasureError(f"{native}; {close_names(text)}. evalops falls back to ir_measures for its other "
                           f"measures, but it is not installed (pip install 'evalops-rag[irmeasures]')") from None
    try:
        measure = ir_measures.parse_measure(text)
        measure.validate_params()
    except _PARSE_ERRORS as why:
        from ir_measures.measures import registry

        name = text.strip().split("(")[0].split("@")[0]
        if name in registry and ALIASES.get(name, name) not in MEASURE_TYPES:  # its name, parameters it refuses
            reason = _UNSET.sub("(not given)", str(why))
            raise MeasureError(f"measure {text!r} is not native to evalops, and ir_measures (the fallback) refuses "
                               f"it: {reason}; see ir_measures' documentation of its parameters") from None
        raise MeasureError(f"{native}; {close_names(text)}; ir_measures (the fallback) does not read it either "
                           f"({why})") from None
    # the providers that would compute it, asked in ir_measures' order; only those are initialised (ranx's
    # initialisation alone takes seconds)
    supporting = [p for p in ir_measures.DefaultPipeline.providers if _supports(p, measure)]
    if not any(p.is_available() for p in supporting):
        would = [p.NAME + (f" ({p.install_instructions()})" if p.install_instructions() else "") for p in supporting]
        forms = [f"{p.NAME} computes {form}" for p in ir_measures.DefaultPipeline.providers
                 for form in map(str, getattr(p, "SUPPORTED_MEASURES", [])) if form.split("(")[0].split("@")[0] == measure.NAME]
        where = (f"; it would need {', '.join(would)}" if would
                 else f"; with these parameters no provider computes it ({'; '.join(forms)})" if forms else "")
        raise MeasureError(f"measure {text!r} ({measure}) is not native to evalops, and ir_measures (the fallback) "
                           f"has no provider installed here that computes it{where}")
    return FallbackMeasure(measure)


def _supports(provider: Any, measure: Any) -> bool:
    try:
        return bool(provider.supports(measure))
    except _PARSE_ERRORS:
        return False


def fallback_values(measures: Sequence[Measure], gold: Gold, run: RunLike) -> dict[Measure, np.ndarray]:
    """Per-query values of the fallback ``measures``, aligned with ``gold.query_ids`` (0 where ir_measures
    gives none: a query the run did not answer). ``run``: any form :func:`evalops.metrics.evaluate` takes;
    a query without scores is ranked in the retriever's order (descending synthetic scores)."""
    ir_measures = require("ir_measures", "irmeasures", _PURPOSE)

    qrels = _qrels_frame(gold)
    frame = _run_frame(run)
    position = {q: i for i, q in enumerate(gold.query_ids.tolist())}
    by_name = {str(m): m for m in measures}
    out = {m: np.zeros(len(position), dtype=np.float64) for m in measures}
    names = ", ".join(by_name)
    strangers: dict[str, list[str]] = {}
    try:
        for metric in ir_measures.iter_calc([m.ir_measure for m in measures], qrels, frame):  # type: ignore[attr-defined]
            i = position.get(str(metric.query_id))
            if i is None:  # a provider that rewrites query ids (gdeval keeps only their digits): refused below
                strangers.setdefault(str(metric.measure), []).append(str(metric.query_id))
            else:
                out[by_name[str(metric.measure)]][i] = float(metric.value)
    except (RuntimeError, ValueError, ZeroDivisionError, AssertionError, OSError, subprocess.SubprocessError) as why:
        raise MeasureError(f"ir_measures (the fallback) failed to compute {names} on these judgments and run: "
                           f"{type(why).__name__}: {why}") from None
    if strangers:
        measure, ids = next(iter(strangers.items()))
        raise MeasureError(f"ir_measures (the fallback) returned {measure} for query ids that are not in the judgments "
                           f"({', '.join(ids[:3])}, ...): its provider for {measure} does not keep these query ids, so "
                           "its values cannot be trusted here; leave the measure out")
    return out


def _qrels_frame(gold: Any) -> Any:
    import pandas as pd

    docs = gold.docs_of(np.arange(len(gold.grades)))
    docs = docs.to_numpy(zero_copy_only=False) if hasattr(docs, "to_numpy") else np.asarray(docs)
    return pd.DataFrame({"query_id": np.asarray(gold.query_ids)[gold.qidx], "doc_id": docs,
                         "relevance": np.asarray(gold.grades, dtype=np.int64)})


def _run_frame(run: Any) -> Any:
    frame = (run.to_run() if isinstance(run, RunTable) else as_run(run)).to_frame()
    scores = frame["score"].to_numpy(dtype=np.float64)
    unscored = np.isnan(scores)
    if unscored.any():  # the retriever's order: descending in row order (a run is scored or not per query)
        scores = np.where(unscored, -np.arange(len(scores), dtype=np.float64), scores)
        frame = frame.assign(score=scores)
    return frame
