"""The planner's specs: what ``plan_run`` scores against what, and that they survive XCom (JSON) exactly, a
malformed XCom value refused by name."""

from __future__ import annotations

import dataclasses
import json

import pytest

from evalops.pipeline.planning import shard_bounds
from evalops.pipeline.specs import ShardSpec, SpecError, VersionSpec


def _version(**changes) -> VersionSpec:
    base = dict(label="bm25@v2 gold", retriever="bm25", version="v2", dataset="gold", role="candidate", run_id=7,
                fingerprint="f" * 64, snapshot_id="kb1", query_set_version="g1", n_queries=10, n_shards=3,
                baseline_version="v1", baseline_run_id=5, baseline_today=False, stored_baseline_run_id=5,
                baseline_note="baseline bm25 v1", rescore_reason=None, sample_folder=None)
    return VersionSpec(**{**base, **changes})


def test_round_trip_through_json_is_exact():
    spec = _version()
    wire = json.loads(json.dumps(spec.to_xcom()))
    assert VersionSpec.from_xcom(wire) == spec
    for shard in spec.shards():
        assert ShardSpec.from_xcom(json.loads(json.dumps(shard.to_xcom()))) == shard


def test_shards_cover_every_query_once():
    spec = _version(n_queries=10, n_shards=3)
    shards = spec.shards()
    assert [s.shard for s in shards] == [0, 1, 2] and {s.run_id for s in shards} == {7}
    assert [s.label for s in shards] == ["bm25@v2 gold 1/3", "bm25@v2 gold 2/3", "bm25@v2 gold 3/3"]
    covered = [q for s in shards for q in range(*shard_bounds(s.n_queries, s.n_shards, s.shard))]
    assert covered == list(range(10))


def test_specs_are_frozen_and_keyword_only():
    spec = _version()
    with pytest.raises(dataclasses.FrozenInstanceError):
        spec.run_id = 8  # type: ignore[misc]
    with pytest.raises(TypeError):
        VersionSpec("bm25@v2 gold", "bm25")  # type: ignore[misc]


@pytest.mark.parametrize("change, message", [
    (lambda d: d.pop("run_id"), r"missing \['run_id'\]"),
    (lambda d: d.update(extra=1), r"unknown \['extra'\]"),
    (lambda d: d.update(run_id="7"), r"VersionSpec.run_id: expected int, got '7'"),
    (lambda d: d.update(n_shards=True), r"VersionSpec.n_shards: expected int"),
    (lambda d: d.update(baseline_run_id=None, baseline_version=None), None),
    (lambda d: d.update(sample_folder=3), r"VersionSpec.sample_folder: expected str \| None, got 3"),
])
def test_a_malformed_xcom_value_is_refused_by_name(change, message):
    data = _version().to_xcom()
    change(data)
    if message is None:
        assert VersionSpec.from_xcom(data).baseline_run_id is None
        return
    with pytest.raises(SpecError, match=message):
        VersionSpec.from_xcom(data)


def test_a_shard_is_not_a_version():
    with pytest.raises(SpecError, match="ShardSpec: missing"):
        ShardSpec.from_xcom(_version().to_xcom())


def test_the_baseline_version_is_scored_on_the_production_sample_even_when_not_deployed(tiny_project):
    from evalops.config import PRODUCTION
    from evalops.conversations.pipeline import fingerprint_policy
    from evalops.pipeline.planning import plan_run
    from evalops.pipeline.registry import fingerprint_for
    from evalops.pipeline.store import engine_for
    from evalops.warehouse import RunKey, promote_baseline, record_run

    cfg, run, snapshot_id, gold = tiny_project({"1.0": False, "2.0": True})
    engine = engine_for(cfg)
    fp = fingerprint_for(cfg, gold["gold"], snapshot_id, extra=fingerprint_policy(cfg, "gold"))
    earlier = record_run(engine, RunKey(run.dag_id, "earlier", "r", "1.0", "gold"), fingerprint=fp,
                         logical_date=run.anchor, status="succeeded", started_at=run.anchor)
    promote_baseline(engine, earlier.id, by="test", reason="the version before 2.0")

    specs = plan_run(cfg, run, snapshot_id, gold, tiny_project.sample())
    assert [(s.version, s.baseline_run_id) for s in specs if s.dataset == "gold"] == [("2.0", earlier.id)]
    production = {s.version: s for s in specs if s.dataset == PRODUCTION}
    assert {v: s.role for v, s in production.items()} == {"2.0": "candidate", "1.0": "baseline"}
    assert production["2.0"].baseline_run_id == production["1.0"].run_id != earlier.id
