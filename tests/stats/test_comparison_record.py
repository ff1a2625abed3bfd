"""The one comparison record: JSON form, its inverse, the public view, the warehouse and report rows."""

from __future__ import annotations

import dataclasses
import json
import math

import numpy as np
import pytest

from evalops.errors import InputError
from evalops.reports import ABResult
from evalops.stats import Comparison, align, compare
from evalops.warehouse import ABTestResult, ab_test_result


def _comparison(n: int = 30, drop: float = 0.1) -> Comparison:
    rng = np.random.default_rng(n)
    base = rng.uniform(0.3, 0.9, n)
    ids = [f"q{i}" for i in range(n)]
    return compare(align((ids, base.tolist()), (ids, (base - drop).tolist())), measure="nDCG@10")


def _no_nan(value) -> bool:
    if isinstance(value, float):
        return math.isfinite(value)
    if isinstance(value, dict):
        return all(_no_nan(v) for v in value.values())
    if isinstance(value, list):
        return all(_no_nan(v) for v in value)
    return True


@pytest.mark.parametrize("n", [0, 1, 30])
def test_the_record_is_json_without_nan_and_inverts(n):
    comparison = _comparison(n)
    record = comparison.to_record()
    assert set(record) == {f.name for f in dataclasses.fields(Comparison)}
    assert _no_nan(record)
    json.dumps(record, allow_nan=False)
    back = Comparison.from_record(json.loads(json.dumps(record)))
    assert back.to_record() == record
    assert back.policy == comparison.policy and back.worst_queries == comparison.worst_queries


def test_an_older_record_takes_the_defaults_and_an_unknown_field_is_refused():
    record = _comparison().to_record()
    del record["queries_gained"]  # a field added after the record was written
    assert Comparison.from_record(record).queries_gained == 0
    with pytest.raises(InputError, match=r"unknown fields \['d_z'\]"):
        Comparison.from_record({**record, "d_z": 0.1})


def test_the_public_view_is_the_record_under_its_public_names():
    comparison = _comparison()
    view, record = comparison.to_dict(), comparison.to_record()
    assert view["baseline"] == comparison.baseline_name and view["candidate"] == comparison.candidate_name
    assert not {"policy", "deltas", "direction", "degenerate", "baseline_name"} & set(view)
    assert all(view[k] == record[k] for k in view if k in record)
    assert list(view)[:4] == ["measure", "baseline", "candidate", "n"]


@pytest.mark.parametrize("n", [0, 30])
def test_one_mapper_to_the_warehouse_row_uses_the_record_s_names_and_none(n):
    comparison = _comparison(n)
    row = ab_test_result(comparison, baseline_run_id=1, candidate_run_id=2, family="gold")
    assert isinstance(row, ABTestResult)
    assert row.effect_size_dz == comparison.effect_size_dz and not hasattr(row, "d_z")  # one name, the record's
    assert row.ci_level == comparison.policy.confidence and row.family == "gold"
    for f in dataclasses.fields(row):
        value = getattr(row, f.name)
        assert not (isinstance(value, float) and math.isnan(value)), f.name
    if n == 0:
        assert row.delta is None and row.effect_size_ci_low is None


def test_the_report_row_is_read_from_the_record_by_name():
    comparison = _comparison()
    row = ABResult.from_record(comparison.to_record(), retriever="bm25", baseline_version="1",
                               candidate_version="2", query_set="gold", coverage="all answered")
    assert (row.delta, row.p_adjusted, row.effect_size_dz, row.severity) == (
        comparison.delta, comparison.p_adjusted, comparison.effect_size_dz, comparison.severity)
    assert row.reasons == list(comparison.reasons) and row.coverage == "all answered" and row.worst_queries == []


def test_the_report_row_holds_the_record_a_descriptive_decision_included():
    record = _comparison().to_record()
    row = ABResult.from_record({**record, "decision": "descriptive (regression)", "reasons": ["gated"]},
                               retriever="bm25", baseline_version="1", candidate_version="2", query_set="gold, judge")
    assert (row.decision, row.reasons) == ("descriptive (regression)", ["gated"])


def test_every_field_of_the_record_reads_on_the_report_row_and_the_gate_case():
    from evalops.gate import GateCase
    from evalops.stats import RECORD_FIELDS

    record = _comparison().to_record()
    row = ABResult.from_record(record, retriever="bm25", baseline_version="1", candidate_version="2",
                               query_set="gold")
    case = GateCase("bm25", "2", record["measure"], "passed", record["decision"], "fine", comparison=record)
    own = {"worst_queries", "coverage"}  # the report's rows with text, the coverage in words
    for name in RECORD_FIELDS:
        if name not in own:
            assert getattr(row, name) == record[name], name
        assert getattr(case, name) == record[name], name
    public = case.to_dict()
    assert public["delta"] == record["delta"] and "deltas" not in public and "policy" not in public


def test_a_record_read_by_attribute_refuses_an_unknown_field_and_defaults_an_absent_one():
    from evalops.errors import InputError
    from evalops.stats import ComparisonRecord

    record = _comparison().to_record()
    with pytest.raises(InputError, match=r"unknown fields \['deltaa'\]"):
        ComparisonRecord({**record, "deltaa": 0.1})
    older = ComparisonRecord({k: v for k, v in record.items() if k != "queries_gained"})
    assert older.queries_gained == 0 and "queries_gained" not in older
    with pytest.raises(AttributeError):
        older.no_such_field  # noqa: B018
