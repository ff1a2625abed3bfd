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
from evalops.warehouse import ABTestResult


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
def test_one_mapper_to_the_warehouse_columns_stores_the_record_and_reads_it_back(n):
    from evalops.warehouse.abtests import ab_test_columns, ab_test_of, ab_test_view

    comparison = _comparison(n)
    stored = ABTestResult(comparison, baseline_run_id=1, candidate_run_id=2, family="gold")
    columns = ab_test_columns(stored)
    assert set(columns) == {"baseline_run_id", "candidate_run_id", "decision", "policy", "family", "segments",
                            "record", "judge_run_id"}  # the record once, and the columns SQL reads
    assert columns["judge_run_id"] is None  # a comparison on the run's own labels, not a judge run's
    assert "deltas" not in columns["record"] and json.dumps(columns["record"], allow_nan=False)
    view = ab_test_view(stored)  # the dashboard's flat names
    assert view["d_z"] == comparison.effect_size_dz and view["ci_level"] == comparison.policy.confidence
    for name, value in view.items():
        assert not (isinstance(value, float) and math.isnan(value)), name
    if n == 0:
        assert view["delta"] is None and view["d_z_ci_low"] is None
    back = ab_test_of({**columns, "id": 7, "created_at": None})
    assert back.comparison.to_record() == {**comparison.to_record(), "deltas": []}
    assert (back.family, back.id, back.baseline_run_id) == ("gold", 7, 1)


def test_the_report_row_and_the_gate_case_hold_the_comparison_itself():
    from evalops.gate import GateCase

    comparison = _comparison()
    row = ABResult(comparison=comparison, retriever="bm25", baseline_version="1", candidate_version="2",
                   query_set="gold", coverage="all answered")
    case = GateCase("bm25", "2", comparison.measure, "passed", comparison.decision, "fine", comparison=comparison)
    assert row.comparison is comparison and case.comparison is comparison
    assert row.coverage == "all answered" and row.worst_queries == []
    public = case.to_dict()
    assert public["delta"] == comparison.delta and "deltas" not in public and "policy" not in public
    # neither forwards the comparison's fields: they read from ``.comparison`` only
    assert not hasattr(row, "delta") and not hasattr(case, "delta")


def test_a_public_view_reads_back_under_the_record_s_names():
    comparison = _comparison()
    back = Comparison.from_record(comparison.to_dict())
    assert (back.baseline_name, back.candidate_name) == (comparison.baseline_name, comparison.candidate_name)
    assert back.to_dict() == comparison.to_dict()
    with pytest.raises(InputError, match=r"unknown fields \['deltaa'\]"):
        Comparison.from_record({**comparison.to_dict(), "deltaa": 0.1})
