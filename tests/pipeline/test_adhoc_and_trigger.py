"""Ad-hoc candidates (checked by the registry schema) and the triggering asset events of a run."""

from __future__ import annotations

import datetime as dt
from types import SimpleNamespace

import pytest

from evalops.config import load_config
from evalops.errors import ConfigError
from evalops.pipeline.adhoc import parse_candidate, record_candidate, recorded_candidate
from evalops.pipeline.context import RunContext
from evalops.pipeline.registry import load_registry_for

UTC = dt.timezone.utc
ENTRY = {"name": "handbook-search", "version": "9.9-adhoc", "adapter": "run_file", "deployed": False,
         "owner": "me", "params": {"path": "runs/candidate.trec"}}


@pytest.fixture
def cfg(tmp_path):
    (tmp_path / "retrievers.yaml").write_text(
        "retrievers:\n  - {name: handbook-search, version: '1.0', adapter: builtin, deployed: true, owner: x,\n"
        "     params: {kind: bm25}}\n", encoding="utf-8")
    return load_config(tmp_path, environ={})


@pytest.mark.parametrize(("entry", "message"), [
    ({**ENTRY, "adapter": "carrier-pigeon"}, "params.candidate:1: unknown adapter 'carrier-pigeon'"),
    ({k: v for k, v in ENTRY.items() if k != "owner"}, "params.candidate:1: retriever is missing 'owner'"),
    ({**ENTRY, "params": {}}, "params.candidate:1: retriever handbook-search@9.9-adhoc: run_file params"),
    ({**ENTRY, "colour": "red"}, "params.candidate:1: unknown key 'colour'"),
    ("bm25", "params.candidate: expected a registry entry"),
])
def test_a_bad_candidate_gets_the_registry_schema_message(cfg, entry, message):
    with pytest.raises(ConfigError, match=message.replace("(", r"\(")):
        parse_candidate(cfg, entry)


def test_the_candidate_joins_the_run_registry_only(cfg, tmp_path):
    run = RunContext.for_day("2024-06-01", dag_id="retrieval_eval", run_id="manual__1")
    other = RunContext.for_day("2024-06-01", dag_id="retrieval_eval", run_id="manual__2")
    entry = record_candidate(cfg, run, ENTRY)
    assert entry.deployed and entry.base_dir == tmp_path  # relative paths start at the project
    assert recorded_candidate(cfg, run).key == "handbook-search@9.9-adhoc"
    assert {e.key for e in load_registry_for(cfg, run)} == {"handbook-search@1.0", "handbook-search@9.9-adhoc"}
    assert {e.key for e in load_registry_for(cfg, other)} == {"handbook-search@1.0"}
    assert recorded_candidate(cfg, other) is None


def test_asset_triggered_run_keeps_its_events_extra():
    after = dt.datetime(2024, 6, 5, 14, 30, tzinfo=UTC)
    event = SimpleNamespace(asset=SimpleNamespace(name="knowledge-base"), extra={"snapshot": "kb-7", "n": 3},
                            source_dag_id="knowledge_base_producer", source_run_id="manual__x",
                            timestamp=after - dt.timedelta(seconds=5))
    dag_run = SimpleNamespace(run_id="asset_triggered__1", dag_id="retrieval_eval", logical_date=None,
                              run_after=after, run_type=SimpleNamespace(value="asset_triggered"))
    ctx = RunContext.from_airflow({"dag_run": dag_run, "triggering_asset_events": {"kb": [event]}})
    assert ctx.trigger_record() == {"type": "asset", "asset_events": [{
        "asset": "knowledge-base", "extra": {"snapshot": "kb-7", "n": 3}, "source_dag_id": "knowledge_base_producer",
        "source_run_id": "manual__x", "timestamp": (after - dt.timedelta(seconds=5)).isoformat()}]}
    scheduled = RunContext.from_airflow({"dag_run": SimpleNamespace(**{**vars(dag_run), "run_type": "scheduled",
                                                                        "logical_date": after}),
                                         "triggering_asset_events": {"kb": [event]}})
    assert scheduled.trigger_record() == {"type": "schedule", "asset_events": []}
