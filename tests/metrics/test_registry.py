"""The measure registry: every name the parsers accept has exactly one entry with a kernel, an entry
without a kernel is refused, and a measure added as one entry is parsed and scored with nothing else."""

from __future__ import annotations

import inspect

import numpy as np
import pytest

import evalops.context.measures as context_measures
import evalops.judges.measures as judge_measures
import evalops.metrics.measures as ir_measures
from evalops.context import CONTEXT_MEASURE_TYPES, context_values
from evalops.context.compute import CONTEXT, ContextEntry
from evalops.errors import MeasureError
from evalops.judges.measures import JUDGE, JUDGE_MEASURE_TYPES, judge_entries
from evalops.judges.prompts import TASKS
from evalops.metrics import evaluate, parse_measure, registry
from evalops.metrics.measures import ALIASES, REL, TREC_EVAL_NAMES, Measure
from evalops.metrics.registry import IR, MEASURE_TYPES, JudgedEntry, MeasureEntry, Need, RankEntry, register


def _example(cls: type[Measure]) -> Measure:
    return cls(0.5) if cls.AT_PARAM else cls(10) if cls.CUTOFF != "none" else cls()  # type: ignore[arg-type]


def _accepted_names() -> list[tuple[str, str]]:
    """(text, family) of every spelling the parsers read natively: names, aliases, trec_eval names."""
    out = [(name, IR) for name in MEASURE_TYPES]
    out += [(alias, IR) for alias in ALIASES]
    out += [(f"{name}_10", IR) for name in TREC_EVAL_NAMES]
    out += [(name, CONTEXT) for name in CONTEXT_MEASURE_TYPES]
    out += [(name, JUDGE) for name in JUDGE_MEASURE_TYPES]
    return out


def test_registry_lists_each_family_once():
    listed = {e.name: (e.FAMILY, sorted(n.name for n in e.needs)) for e in registry.entries()}
    assert set(MEASURE_TYPES) == {n for n, (f, _) in listed.items() if f == IR}
    assert set(CONTEXT_MEASURE_TYPES) == {n for n, (f, _) in listed.items() if f == CONTEXT}
    assert listed["nDCG"] == (IR, ["GRADES", "IDEAL"])
    assert listed["Judged"] == (IR, ["JUDGED"])
    assert listed["QueryCoverage"] == (CONTEXT, ["CONTEXT_TEXT", "QUERY_TEXT"])
    assert listed["RelevantTokenShare"] == (CONTEXT, ["CONTEXT_TEXT", "GRADES"])
    assert set(JUDGE_MEASURE_TYPES) == {n for n, (f, _) in listed.items() if f == JUDGE}
    assert listed["AnswerRelevance"] == (JUDGE, ["ANSWER", "JUDGE_LABELS"])


def test_every_judge_measure_asks_a_packaged_prompt():
    assert {e.name: e.task for e in judge_entries()} == {
        "ContextRecall": "context_recall", "Faithfulness": "faithfulness", "AnswerRelevance": "answer_relevance"}
    assert {e.task for e in judge_entries()} <= set(TASKS)


@pytest.mark.parametrize("text, family", _accepted_names())
def test_every_accepted_name_resolves_to_exactly_one_entry_with_a_kernel(text, family):
    if family in (CONTEXT, JUDGE):
        measure = _example((CONTEXT_MEASURE_TYPES if family == CONTEXT else JUDGE_MEASURE_TYPES)[text])
    elif text.endswith("_10"):  # a trec_eval name with its cutoff or level
        measure = parse_measure(text if text != "iprec_at_recall_10" else "iprec_at_recall_0.10")
    else:
        measure = _example(MEASURE_TYPES[ALIASES.get(text, text)])
    matching = [e for e in registry.entries() if e.measure is type(measure)]
    assert len(matching) == 1, (text, matching)
    assert registry.entry_of(measure) is matching[0]
    assert matching[0].FAMILY == family
    assert callable(matching[0].kernel)  # type: ignore[attr-defined]


def test_every_declared_measure_class_has_an_entry():
    declared = [cls for module in (ir_measures, context_measures, judge_measures)
                for _, cls in inspect.getmembers(module, inspect.isclass)
                if issubclass(cls, Measure) and cls is not Measure and cls.__module__ == module.__name__]
    assert len(declared) == 26
    assert [c.__name__ for c in declared if registry.entry_of(_example(c)) is None] == []


class Planted(Measure):
    """Planted@k = 1 when the top k hold a relevant document (a test measure)."""

    NAME = "Planted"
    DESCRIPTION = "a measure planted by a test"
    PARAMS = (REL,)
    CUTOFF = "required"


def test_an_entry_without_a_kernel_is_refused():
    with pytest.raises(MeasureError, match="Planted: the entry has no kernel"):
        RankEntry(Planted, frozenset({Need.GRADES}), None)  # type: ignore[arg-type]
    with pytest.raises(MeasureError, match="Planted: the entry has no kernel"):
        ContextEntry(Planted, frozenset({Need.CONTEXT_TEXT}), "not a function")  # type: ignore[arg-type]
    with pytest.raises(MeasureError, match="one of a family's entry types"):
        register(MeasureEntry(Planted, frozenset()))
    # an entry whose kernel was taken away after it was built is refused when registered
    entry = RankEntry(Planted, frozenset({Need.GRADES}), lambda m, g, ideal, r, ret: g[:, 0] * 0.0)
    object.__setattr__(entry, "kernel", None)
    with pytest.raises(MeasureError, match="Planted: the entry has no kernel"):
        register(entry)
    with pytest.raises(MeasureError, match="needs Need.JUDGED"):
        JudgedEntry(Planted, frozenset({Need.GRADES}), lambda m, gold, judged: judged.rank * 0.0)
    with pytest.raises(MeasureError, match="needs must be Need members"):
        RankEntry(Planted, frozenset({"grades"}), lambda m, g, ideal, r, ret: g[:, 0] * 0.0)  # type: ignore[arg-type]
    assert "Planted" not in MEASURE_TYPES


def test_a_name_is_registered_once():
    class OtherP(Measure):
        """P again = a second class under a name that is taken."""

        NAME = "P"
        CUTOFF = "required"

    with pytest.raises(MeasureError, match="'P' is registered already"):
        register(RankEntry(OtherP, frozenset({Need.GRADES}), lambda m, g, ideal, r, ret: g[:, 0] * 0.0))
    assert MEASURE_TYPES["P"] is ir_measures.Precision


def test_a_measure_added_as_one_entry_is_parsed_and_scored(monkeypatch):
    monkeypatch.setattr(registry, "_TABLE", dict(registry._TABLE))  # taken back after the test
    register(RankEntry(Planted, frozenset({Need.GRADES}),
                       lambda m, g, ideal, r, ret: (g[:, : m.rank_cutoff] >= m["rel"]).any(axis=1).astype(np.float64)))
    result = evaluate({"q1": {"d1": 2}, "q2": {"d9": 1}}, {"q1": {"d1": 1.0}, "q2": {"d2": 1.0}},
                      ["Planted@1", "Success@1"])
    assert result.per_query["Planted@1"].tolist() == result.per_query["Success@1"].tolist() == [1.0, 0.0]


def test_the_context_scorer_reads_the_needs_of_the_entry(monkeypatch):
    monkeypatch.setattr(registry, "_TABLE", dict(registry._TABLE))
    texts = {"d1": "vitamin d bone", "d2": "iron"}
    with pytest.raises(Exception, match="Planted@2 needs qrels"):
        register(ContextEntry(Planted, frozenset({Need.CONTEXT_TEXT, Need.GRADES}), lambda m, q: float(len(q.docs))))
        context_values(["Planted@2"], {"q": "vitamin"}, {"q": ["d1", "d2"]}, texts)
    values = context_values(["Planted@2"], {"q": "vitamin"}, {"q": ["d1", "d2"]}, texts, {"q": {"d1": 1}})
    assert values.per_query["Planted@2"].tolist() == [2.0]
