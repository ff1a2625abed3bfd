"""``evalops demo``'s functions on a throw-away copy of the demo project: the backfill resumes after an
interruption and ends with the rows of an uninterrupted one; a second demo adds no row in any table; the
offline judge's labels and agreement are in the warehouse and the summary."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]


def _demo_home(root: Path) -> Path:
    """The demo's project (this checkout's evalops.yaml, include/ and dags/) in a folder of its own."""
    root.mkdir(parents=True)
    shutil.copy(REPO / "evalops.yaml", root / "evalops.yaml")
    (root / "include").symlink_to(REPO / "include", target_is_directory=True)
    (root / "dags").symlink_to(REPO / "dags", target_is_directory=True)
    return root


def _plan(home: Path):
    from evalops.config import load_config
    from evalops.pipeline.demo import plan_demo

    cfg = load_config(home, environ={})
    return cfg, plan_demo(cfg)


def _rows(cfg) -> dict:
    """Every warehouse table's row count, and what the runs scored (key, status, fingerprint, means)."""
    from sqlalchemy import text

    from evalops.pipeline.store import engine_for, warehouse_counts

    with engine_for(cfg).connect() as conn:
        scored = sorted(conn.execute(text(
            "select r.dag_run_id, r.version, r.dataset, r.status, r.fingerprint_hash, m.name, round(a.mean, 12) "
            "from eval_runs r join run_aggregates a on a.run_id = r.id join measures m on m.id = a.measure_id"
        )).all())
        current = sorted(conn.execute(text(
            "select b.retriever, r.dag_run_id, r.version from baselines b join eval_runs r on r.id = b.run_id "
            "where b.is_current")).all())
    return {"counts": warehouse_counts(cfg), "scored": scored, "current_baselines": current}


class _Interrupted(Exception):
    pass


@pytest.fixture(scope="module")
def uninterrupted(tmp_path_factory):
    """The rows of a three-day backfill that nothing interrupted."""
    from evalops.pipeline.demo import run_backfill

    with pytest.MonkeyPatch.context() as mp:
        for key in [k for k in os.environ if k.startswith("EVALOPS_") and k != "EVALOPS_SHARED_DATA"]:
            mp.delenv(key)
        cfg, plan = _plan(_demo_home(tmp_path_factory.mktemp("demo") / "uninterrupted"))
        days = run_backfill(cfg, plan, days=3)
        assert [(d.day, d.status) for d in days] == [
            ("2024-05-28", "scored"), ("2024-05-29", "scored"), ("2024-05-30", "scored")]
        rows = _rows(cfg)
    assert rows["counts"]["baselines"] == 1 and rows["counts"]["eval_runs"] == 6  # gold + production a day
    assert rows["counts"]["judge_runs"] == 6 and rows["counts"]["judgments"] > 0
    return rows


def test_an_interrupted_backfill_resumes_at_the_next_day_and_ends_as_an_uninterrupted_one(tmp_path, monkeypatch,
                                                                                          uninterrupted):
    import evalops.pipeline.local as local
    from evalops.pipeline.demo import run_backfill

    real = local.run_local
    scored: list[str] = []

    def recording(cfg, run, *args, **kwargs):
        out = real(cfg, run, *args, **kwargs)
        scored.append(run.day)
        return out

    def interrupted_after_first_day(cfg, run, *args, **kwargs):
        recording(cfg, run, *args, **kwargs)
        raise _Interrupted(f"stopped after {run.day}")  # before the first day's baseline is promoted

    cfg, plan = _plan(_demo_home(tmp_path / "interrupted"))
    monkeypatch.setattr(local, "run_local", interrupted_after_first_day)
    with pytest.raises(_Interrupted):
        run_backfill(cfg, plan, days=3)
    assert scored == ["2024-05-28"]

    monkeypatch.setattr(local, "run_local", recording)
    scored.clear()
    seen = []
    resumed = run_backfill(cfg, plan, days=3, progress=seen.append)
    assert scored == ["2024-05-29", "2024-05-30"]  # resumed at day 2 of 3
    assert [(d.n, d.total, d.day, d.status) for d in resumed] == [
        (1, 3, "2024-05-28", "skipped"), (2, 3, "2024-05-29", "scored"), (3, 3, "2024-05-30", "scored")]
    assert seen == resumed  # progress hears of every day before it is scored
    after_resume = _rows(cfg)

    scored.clear()
    again = run_backfill(cfg, plan, days=3)
    assert scored == [] and {d.status for d in again} == {"skipped"}
    assert _rows(cfg) == after_resume  # a third backfill writes nothing

    assert after_resume == uninterrupted


def test_a_backfill_interrupted_inside_a_day_scores_that_day_again(tmp_path, monkeypatch, uninterrupted):
    import evalops.pipeline.local as local
    from evalops.pipeline.demo import run_backfill

    real = local.score_shard

    def interrupted_on_the_second_day(env, run, shard):
        if run.day == "2024-05-29":
            raise KeyboardInterrupt  # Ctrl-C while the second day is scored
        return real(env, run, shard)

    cfg, plan = _plan(_demo_home(tmp_path / "home"))
    monkeypatch.setattr(local, "score_shard", interrupted_on_the_second_day)
    with pytest.raises(KeyboardInterrupt):
        run_backfill(cfg, plan, days=3)
    monkeypatch.setattr(local, "score_shard", real)
    resumed = run_backfill(cfg, plan, days=3)
    assert [d.status for d in resumed] == ["skipped", "scored", "scored"]
    assert _rows(cfg) == uninterrupted


def test_a_day_scored_under_other_inputs_is_scored_again(tmp_path, monkeypatch):
    from evalops.pipeline.demo import backfill_config, backfill_days, scored_days

    cfg, plan = _plan(_demo_home(tmp_path / "home"))
    from evalops.pipeline.demo import run_backfill

    run_backfill(cfg, plan, days=1)
    days = backfill_days(plan, 1)
    assert scored_days(backfill_config(cfg, plan), plan, days) == set(days)
    # another metric set changes the fingerprint: the stored day is not comparable, so it is not done
    (cfg.home / "evalops.yaml").write_text((cfg.home / "evalops.yaml").read_text() + "measures: [nDCG@5]\n")
    cfg2, plan2 = _plan(cfg.home)
    assert scored_days(backfill_config(cfg2, plan2), plan2, days) == set()


def test_the_backfill_is_at_most_the_days_the_demo_logs_cover(tmp_path):
    from evalops.errors import ConfigError
    from evalops.pipeline.demo import BACKFILL_DAYS, backfill_days

    _, plan = _plan(_demo_home(tmp_path / "home"))
    assert backfill_days(plan, 0) == []
    assert len(backfill_days(plan, BACKFILL_DAYS)) == BACKFILL_DAYS
    with pytest.raises(ConfigError, match="0 to 28 days"):
        backfill_days(plan, BACKFILL_DAYS + 1)


@pytest.mark.airflow
@pytest.mark.slow
def test_a_second_demo_adds_no_row_and_shows_the_judge(tmp_path):
    from evalops.airflow.runner import run_demo
    from evalops.pipeline.demo import demo_summary, run_backfill
    from evalops.pipeline.store import warehouse_counts

    cfg, plan = _plan(_demo_home(tmp_path / "home"))
    assert plan.judge == "lexical" and plan.steps[0]["env"]["EVALOPS_JUDGE__KIND"] == "lexical"
    summaries = []
    for _ in range(2):
        run_backfill(cfg, plan, days=2)
        summaries.append(demo_summary(cfg, plan, run_demo(cfg, plan)))
    first, second = summaries
    assert [s for _, _, s in first["states"]] == ["success"] * 3
    assert first["counts"] == second["counts"] == warehouse_counts(cfg)
    counts = first["counts"]
    # one baseline from the backfill's first day, one from day 1's promote_baseline; none from the re-run
    assert counts["baselines"] == 2 and counts["alerts"] == 1
    assert counts["judge_runs"] == 2 * 4 and counts["judgments"] > 0  # gold + production, four days
    judged = second["judge"]
    assert set(judged) == {"gold", "production"}
    assert judged["production"]["labels"] > 0 and judged["production"]["queries"] > 0
    assert judged["production"]["offline"] and judged["production"]["failed"] is None
    assert judged["gold"]["pairs_with_human_grades"] > 0 and -1 <= judged["gold"]["kappa"] <= 1
    assert judged["gold"]["gate"] in ("alerting", "descriptive")
    assert judged["gold"]["requests"] == 0  # the re-run's labels all come from the cache


def test_a_backfill_after_a_later_promotion_of_the_same_version_adds_no_baseline(tmp_path):
    """Day 1's promote_baseline makes the day-1 run of the deployed version the baseline; backfilling again
    (its first day promotes the deployed version too) must keep it rather than write a row per demo."""
    from evalops.pipeline.context import RunContext
    from evalops.pipeline.demo import DAY_ONE, backfill_config, backfill_days, run_backfill
    from evalops.pipeline.local import run_local
    from evalops.pipeline.promotion import promote
    from evalops.pipeline.store import warehouse_counts

    cfg, plan = _plan(_demo_home(tmp_path / "home"))
    run_backfill(cfg, plan, days=1)
    day_cfg = backfill_config(cfg, plan)
    day_one = RunContext.for_day(DAY_ONE.date(), dag_id="retrieval_eval", run_id="scheduled__2024-05-31")
    run_local(day_cfg, day_one)
    (retriever, version), = plan.baselines
    promoted = promote(day_cfg, retriever=retriever, version=version, promoted_by="test", reason="day 1",
                       as_of=day_one.anchor)
    assert promoted["changed"]
    before = warehouse_counts(cfg)
    assert before["baselines"] == 2

    earlier = RunContext.for_day(backfill_days(plan, 1)[0]).anchor
    kept = promote(day_cfg, retriever=retriever, version=version, promoted_by="test", reason="again",
                   as_of=earlier, keep_current_version=True)
    assert not kept["changed"] and kept["run_id"] == promoted["run_id"]
    run_backfill(cfg, plan, days=1)
    assert warehouse_counts(cfg) == before
    assert _rows(cfg)["current_baselines"] == [(retriever, "scheduled__2024-05-31", version)]


@pytest.mark.parametrize("named_in", ["environment", "evalops.yaml"])
def test_a_named_project_s_demo_runs_its_own_dag_ids(tmp_path, monkeypatch, named_in):
    """With a project_name the DAG files name their DAGs `<name>.retrieval_eval`: the demo's steps (and the
    summary's lookup of day 2) ask for those ids, and the steps' environment pins the name for the child."""
    home = _demo_home(tmp_path / "home")
    monkeypatch.delenv("EVALOPS_PROJECT_NAME", raising=False)
    if named_in == "environment":
        monkeypatch.setenv("EVALOPS_PROJECT_NAME", "support")
    else:
        (home / "evalops.yaml").write_text((home / "evalops.yaml").read_text() + "\nproject_name: support\n")
    _, plan = _plan(home)
    assert [s["dag_id"] for s in plan.steps] == (
        ["support.retrieval_eval"] + ["support.promote_baseline"] * len(plan.baselines) + ["support.retrieval_eval"])
    assert plan.eval_dag_id == "support.retrieval_eval"
    assert {s["env"]["EVALOPS_PROJECT_NAME"] for s in plan.steps} == {"support"}


def test_an_unnamed_project_s_demo_keeps_the_plain_dag_ids(tmp_path, monkeypatch):
    monkeypatch.delenv("EVALOPS_PROJECT_NAME", raising=False)
    _, plan = _plan(_demo_home(tmp_path / "home"))
    assert {s["dag_id"] for s in plan.steps} == {"retrieval_eval", "promote_baseline"}
    assert plan.eval_dag_id == "retrieval_eval"


@pytest.mark.airflow
def test_the_named_demo_s_dag_ids_are_the_ones_its_dag_files_define(tmp_path, monkeypatch):
    """The child's Airflow parses the demo's DAG folder under the steps' environment and finds every id."""
    import json
    import subprocess
    import sys

    from evalops.airflow.runner import airflow_environment

    monkeypatch.setenv("EVALOPS_PROJECT_NAME", "support")
    home = _demo_home(tmp_path / "home")
    _, plan = _plan(home)
    env = {**os.environ, **{k: v for k, v in plan.steps[0]["env"].items() if v is not None},
           **airflow_environment(tmp_path / "airflow", plan.dags), "EVALOPS_HOME": str(home)}
    code = ("import json, sys; from evalops.airflow.compat import dag_bag; "
            "bag = dag_bag()(dag_folder=sys.argv[1]); "
            "print(json.dumps([sorted(bag.dag_ids), sorted(bag.import_errors)]))")
    done = subprocess.run([sys.executable, "-c", code, str(plan.dags)], capture_output=True, text=True, env=env,
                          timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    ids, errors = json.loads(done.stdout.strip().splitlines()[-1])
    assert not errors and {s["dag_id"] for s in plan.steps} <= set(ids), ids


def test_the_demo_compares_its_two_chunkings_in_runs_of_their_own(tmp_path, monkeypatch, capsys):
    """handbook-chunks is BM25 over two chunkings of the knowledge base (include/chunks, with a registry of
    their own): windows of 96 characters deployed, windows of 192 its day-2 candidate. The demo scores both
    as MaxP document runs on the same gold set in runs of their own: the candidate is decided against the
    deployed chunking in a family of its own (handbook-search's five candidates keep theirs), the report
    and the printed table name each version's chunking, and a second demo writes no row."""
    import re

    from evalops.cli.pipeline import _echo_chunkings
    from evalops.pipeline.demo import CHUNKINGS_REGISTRY, chunking_summary, run_chunkings
    from evalops.pipeline.store import engine_for, warehouse_counts
    from evalops.warehouse import RunKey, find_run, load_ab_tests

    for key in [k for k in os.environ if k.startswith("EVALOPS_") and k != "EVALOPS_SHARED_DATA"]:
        monkeypatch.delenv(key)
    cfg, plan = _plan(_demo_home(tmp_path / "home"))
    chunkings = plan.chunkings
    assert chunkings is not None and chunkings.registry == cfg.home / CHUNKINGS_REGISTRY
    assert chunkings.baselines == [("handbook-chunks", "win96")]
    assert chunkings.candidates == [("handbook-chunks", "win192")]
    # the DAG's days know nothing of them: the day-2 family is handbook-search's five candidates
    assert {r for r, _ in plan.baselines + plan.candidates} == {"handbook-search"} and len(plan.candidates) == 5

    days = run_chunkings(cfg, plan)
    assert [d["run_id"] for d in days] == ["chunkings__2024-05-31", "chunkings__2024-06-01"]
    counts = warehouse_counts(cfg)
    summary = chunking_summary(cfg, plan)
    engine = engine_for(cfg)
    manifests = {name: sum(1 for _ in (REPO / "include" / "chunks" / f"{name}.jsonl").open())
                 for name in ("win96", "win192")}
    for version in ("win96", "win192"):  # each day-2 run records the chunking it retrieved from
        stored = find_run(engine, RunKey("cli", "chunkings__2024-06-01", "handbook-chunks", version, "gold"))
        assert stored is not None and stored.status == "succeeded"
        assert stored.contracts["chunking"]["name"] == version
        assert stored.contracts["chunking"]["chunks"] == manifests[version]

    base, cand = summary["versions"]
    assert (base["version"], base["chunking"], base["status"]) == ("win96", "win96", "succeeded")
    assert (cand["version"], cand["chunking"], cand["status"]) == ("win192", "win192", "succeeded")
    assert base["delta"] is None and base["mean"] is not None
    assert cand["delta"] == pytest.approx(cand["mean"] - base["mean"], abs=1e-9)
    assert cand["decision"] in {"improvement", "regression", "no_change", "inconclusive"}
    # decided on the same judgments, in a family of one (the chunking run's own)
    candidate_run = find_run(engine, RunKey("cli", "chunkings__2024-06-01", "handbook-chunks", "win192", "gold"))
    ab = load_ab_tests(engine, candidate_run_id=candidate_run.id)
    row = ab[ab["measure"] == summary["measure"]].iloc[0]
    assert (row["family"], row["family_size"], row["decision"]) == ("gold", 1, cand["decision"])
    baseline_run = find_run(engine, RunKey("cli", "chunkings__2024-05-31", "handbook-chunks", "win96", "gold"))
    assert row["baseline_run_id"] == baseline_run.id  # day 1's run, promoted

    report = Path(summary["report"]).with_suffix(".md").read_text()
    for version in ("win96", "win192"):
        assert re.search(rf"handbook-chunks@{version} retrieves from chunking {version} \([0-9a-f]{{16}}: "
                         rf"{manifests[version]} chunks of 213 documents", report), version
    decided = [line for line in report.splitlines()
               if line.startswith(f"| handbook-chunks | win96 → win192 | {summary['measure']} |")
               and "| 1 (gold) |" in line]  # the decisions' table (family size, family), not a segment's
    assert len(decided) == 1 and f"| {cand['delta']:+.4f} |" in decided[0] and f"{cand['decision']} (" in decided[0]

    _echo_chunkings(summary)
    printed = capsys.readouterr().out
    assert re.search(rf"handbook-chunks win96 +win96 +succeeded +{base['mean']:.4f} +– +– +–", printed), printed
    delta = re.escape(f"{cand['delta']:+.4f}")
    assert re.search(rf"handbook-chunks win192 +win192 +succeeded +{cand['mean']:.4f} +{delta} "
                     rf"+{cand['p_adjusted']:.2g} +{cand['decision']}", printed), printed
    assert "handbook-chunks@win192 retrieves from chunking win192" in printed

    run_chunkings(cfg, plan)  # a second demo
    assert warehouse_counts(cfg) == counts
