"""Baselines: promotion history, rollback, one current baseline by constraint, and stale lookups."""

from __future__ import annotations

import datetime as dt

import pytest
from sqlalchemy import insert
from sqlalchemy.exc import IntegrityError

from evalops.errors import InputError, WarehouseError
from evalops.warehouse import baseline_history, find_baseline, load_paired_scores, promote_baseline, rollback_baseline
from evalops.warehouse.models import BaselineModel
from warehouse_helpers import T0

POLICIES = {"ties": "trec_eval", "missing": "zero"}


def test_promotion_records_who_when_why(seed, engine):
    run = seed.run("v1")
    at = dt.datetime(2024, 5, 2, 9, 0, tzinfo=dt.UTC)
    baseline = promote_baseline(engine, run.id, by="alice", reason="first release", at=at)
    assert (baseline.retriever, baseline.version, baseline.run_id) == ("bm25", "v1", run.id)
    assert (baseline.promoted_by, baseline.reason, baseline.promoted_at) == ("alice", "first release", at)
    assert baseline.is_current and baseline.action == "promote" and baseline.previous_id is None
    lookup = find_baseline(engine, "bm25", run.fingerprint)
    assert lookup.status == "current" and lookup.is_current and lookup.baseline == baseline


def test_promoting_the_current_run_again_is_a_no_op(seed, engine):
    run = seed.run("v1")
    first = promote_baseline(engine, run.id, by="alice", reason="r")
    again = promote_baseline(engine, run.id, by="bob", reason="retry")
    assert again == first
    assert len(baseline_history(engine, "bm25")) == 1


def test_promotion_replaces_and_rollback_restores(seed, engine):
    v1, v2, v3 = (seed.run(v) for v in ("v1", "v2", "v3"))
    b1 = promote_baseline(engine, v1.id, by="a", reason="one", at=T0)
    b2 = promote_baseline(engine, v2.id, by="a", reason="two", at=T0 + dt.timedelta(hours=1))
    b3 = promote_baseline(engine, v3.id, by="a", reason="three", at=T0 + dt.timedelta(hours=2))
    assert (b2.previous_id, b3.previous_id) == (b1.id, b2.id)
    fp_hash = v1.fingerprint.hash

    back = rollback_baseline(engine, "bm25", fp_hash, by="carol", reason="v3 regressed", at=T0 + dt.timedelta(hours=3))
    assert (back.version, back.action, back.promoted_by, back.reason) == ("v2", "rollback", "carol", "v3 regressed")
    back_again = rollback_baseline(engine, "bm25", fp_hash, by="carol", reason="v2 too")
    assert back_again.version == "v1"
    with pytest.raises(WarehouseError, match="no earlier baseline"):
        rollback_baseline(engine, "bm25", fp_hash, by="carol", reason="nothing left")

    history = baseline_history(engine, "bm25")
    assert list(history["version"]) == ["v1", "v2", "v3", "v2", "v1"]
    assert list(history["action"]) == ["promote"] * 3 + ["rollback"] * 2
    assert history["is_current"].sum() == 1
    assert history["replaced_at"].notna().sum() == 4
    assert find_baseline(engine, "bm25", v1.fingerprint).baseline.version == "v1"


def test_the_database_refuses_a_second_current_baseline(seed, engine):
    run = seed.run("v1")
    current = promote_baseline(engine, run.id, by="a", reason="r")
    row = {
        "retriever": "bm25",
        "fingerprint_hash": current.fingerprint_hash,
        "run_id": run.id,
        "action": "promote",
        "is_current": True,
        "promoted_by": "mallory",
        "promoted_at": T0,
        "reason": "bypassing the repository",
    }
    with pytest.raises(IntegrityError):
        with engine.begin() as conn:
            conn.execute(insert(BaselineModel), [row])
    with engine.begin() as conn:  # a non-current row for the same pair is fine: that is history
        conn.execute(insert(BaselineModel), [{**row, "is_current": False}])
    assert baseline_history(engine, "bm25")["is_current"].sum() == 1


def test_only_succeeded_runs_can_be_promoted(seed, engine):
    run = seed.run("v1", status="partial")
    with pytest.raises(WarehouseError, match="status 'partial'"):
        promote_baseline(engine, run.id, by="a", reason="r")
    with pytest.raises(WarehouseError, match="no evaluation run"):
        promote_baseline(engine, 999, by="a", reason="r")
    with pytest.raises(InputError, match="reason"):
        promote_baseline(engine, run.id, by="a", reason=" ")


def test_lookup_reports_missing_when_there_was_never_a_baseline(seed, engine):
    lookup = find_baseline(engine, "bm25", seed.fingerprint())
    assert lookup.status == "missing" and lookup.baseline is None and lookup.changed == ()


@pytest.mark.parametrize(
    "component, change",
    [
        ("gold_set_version", {"gold": "gold-v2"}),
        ("kb_snapshot_id", {"kb": "kb-2"}),
        ("measures", {"measures": ("P@5", "nDCG@10", "R@100")}),
        ("policies", {"policies": {**POLICIES, "ties": "average"}}),
    ],
)
def test_a_changed_component_makes_the_baseline_stale_and_is_named(seed, engine, component, change):
    old_fp = seed.fingerprint(policies=POLICIES)
    old_run = seed.run("v1", fingerprint=old_fp)
    promote_baseline(engine, old_run.id, by="a", reason="r")
    new_fp = seed.fingerprint(**{"policies": POLICIES, **change})

    lookup = find_baseline(engine, "bm25", new_fp)

    assert lookup.status == "stale" and lookup.is_stale
    assert lookup.changed == (component,)
    assert lookup.baseline.run_id == old_run.id
    assert lookup.fingerprint_hash == new_fp.hash != lookup.baseline.fingerprint_hash
    assert lookup.explanation and lookup.explanation[0].startswith(component)
    # The stale baseline is never offered as current under the new fingerprint.
    assert find_baseline(engine, "bm25", old_fp).status == "current"


def test_stale_lookup_reports_the_most_recent_other_fingerprint(seed, engine):
    fp_a = seed.fingerprint(gold="gold-a")
    fp_b = seed.fingerprint(gold="gold-b", kb="kb-b")
    promote_baseline(engine, seed.run("v1", fingerprint=fp_a).id, by="a", reason="r", at=T0)
    promote_baseline(engine, seed.run("v2", fingerprint=fp_b).id, by="a", reason="r", at=T0 + dt.timedelta(days=1))
    lookup = find_baseline(engine, "bm25", seed.fingerprint(gold="gold-c", kb="kb-b"))
    assert lookup.baseline.version == "v2"
    assert lookup.changed == ("gold_set_version",)


def test_baselines_are_per_retriever(seed, engine):
    promote_baseline(engine, seed.run("v1", retriever="bm25").id, by="a", reason="r")
    promote_baseline(engine, seed.run("v1", retriever="dense").id, by="a", reason="r")
    fp = seed.fingerprint()
    assert find_baseline(engine, "bm25", fp).baseline.retriever == "bm25"
    assert find_baseline(engine, "dense", fp).baseline.retriever == "dense"
    assert find_baseline(engine, "hybrid", fp).status == "missing"


def test_a_new_ranking_rule_makes_baselines_stale_and_they_are_not_compared(seed, engine):
    """The retrievers' cut at k changed (float32 ties, trec_eval's rule): the pipeline's fingerprint carries
    the rule's version, so a baseline stored under the previous rule is stale, never current."""
    from evalops.config import Config
    from evalops.fingerprint import RANKING_RULE_VERSION
    from evalops.pipeline.registry import fingerprint_for

    seed.fingerprint()  # records gold-v1 and kb-1
    current = fingerprint_for(Config(), "gold-v1", "kb-1")
    assert current.policies["ranking_rule"] == RANKING_RULE_VERSION == 2
    before = {k: v for k, v in current.policies.items() if k != "ranking_rule"}  # as stored until now
    old_fp = seed.fingerprint(measures=current.measures, policies=before)
    assert old_fp.hash != current.hash
    old_run = seed.run("v1", fingerprint=old_fp)
    promote_baseline(engine, old_run.id, by="a", reason="r")

    lookup = find_baseline(engine, "bm25", current)
    assert lookup.status == "stale" and lookup.changed == ("policies",)
    assert lookup.explanation == (f"policies.ranking_rule: (unset) -> {RANKING_RULE_VERSION}",)
    new_run = seed.run("v2", fingerprint=current, dag_run_id="scheduled__2024-05-02")
    with pytest.raises(WarehouseError, match="different fingerprints .changed: policies"):
        load_paired_scores(engine, old_run.id, new_run.id, "nDCG@10")


def test_a_re_run_of_a_baseline_run_that_did_not_succeed_is_refused_and_the_run_kept(seed, engine):
    from evalops.warehouse import get_run, load_scores
    from warehouse_helpers import score_frame

    run = seed.run("v1", scores=score_frame(["q1", "q2"], ("P@5", "nDCG@10")))
    promote_baseline(engine, run.id, by="alice", reason="first")
    seed.run("v1", status="running")  # the re-run's attempt
    with pytest.raises(WarehouseError, match=r"is the current baseline of bm25 .* ended 'failed' \(retriever down\)"):
        seed.run("v1", status="failed", n_queries=2, n_failed=2, error="retriever down", scores=score_frame([], ()))
    assert get_run(engine, run.id).status == "succeeded" and len(load_scores(engine, run.id)) == 4
    assert find_baseline(engine, "bm25", run.fingerprint).is_current


def test_a_current_baseline_on_a_run_that_is_not_succeeded_fails_closed(seed, engine):
    from sqlalchemy import update

    from evalops.errors import UnusableBaselineError
    from evalops.warehouse.models import EvalRunModel

    v1, v2 = seed.run("v1"), seed.run("v2")
    promote_baseline(engine, v1.id, by="a", reason="one", at=T0)
    promote_baseline(engine, v2.id, by="a", reason="two", at=T0 + dt.timedelta(hours=1))
    with engine.begin() as conn:  # a warehouse damaged before re-runs kept finished runs
        conn.execute(update(EvalRunModel.__table__).values(status="abandoned"))
    with pytest.raises(UnusableBaselineError, match=rf"is run {v2.id} \(bm25@v2, .*status is 'abandoned'.*evalops promote bm25"):
        find_baseline(engine, "bm25", v2.fingerprint)
    with pytest.raises(WarehouseError, match=rf"would restore names run {v1.id} .*'abandoned'"):
        rollback_baseline(engine, "bm25", v2.fingerprint.hash, by="a", reason="back")
    with pytest.raises(WarehouseError, match="only a succeeded run"):
        promote_baseline(engine, v1.id, by="a", reason="again")
