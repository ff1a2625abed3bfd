"""The judge step stopped between recording its judge run and storing that run's comparisons.

The judge step records, per query set, a ``judge_runs`` row (what it measured, its gate) and the comparisons
on that run's labels (``ab_tests`` rows naming it). Stopped while storing the comparisons (the process killed,
the warehouse gone), the warehouse holds both or neither: never a judge run without its comparisons, which
the report and the next day's look counter would read as a judge step that compared nothing. A re-run (the
DAG's judge task retried, or ``evalops run`` again for the day) then completes the day with exactly the rows
of an uninterrupted run, and no more.
"""

from __future__ import annotations

import json

import pytest
import yaml
from sqlalchemy.exc import OperationalError

from evalops.errors import WarehouseError
from tests.dags.conftest import INCLUDE

pytestmark = [pytest.mark.slow, pytest.mark.timeout(600, method="thread")]  # a hang guard for five runs

DAY, NEXT_DAY = "2024-05-31", "2024-06-01"
# what a re-run legitimately changes in a judge run: its id is kept, its time and its requests are its own
# (the labels the stopped attempt made are in the judgment cache: the re-run reads them instead)
_ATTEMPT_COLUMNS = ("id", "created_at", "requests", "cache_hits")


class _Killed(BaseException):
    """The process dying mid-write (not an exception any handler catches)."""


def _home(root):
    """(day-two config with a deployed candidate, day two): day one run with the lexical judge and promoted."""
    from evalops.config import load_config
    from evalops.pipeline import RunContext, promote, run_local

    root.mkdir(parents=True, exist_ok=True)
    env = {"EVALOPS_HOME": str(root), "EVALOPS_GOLD_SET": str(INCLUDE / "goldset"),
           "EVALOPS_KNOWLEDGE_BASE": str(INCLUDE / "knowledge_base"),
           "EVALOPS_REGISTRY": str(INCLUDE / "retrievers.yaml"), "EVALOPS_LOG_SAMPLE_SIZE": "0",
           "EVALOPS_JUDGE__KIND": "lexical"}
    run_local(load_config(root, environ=env), RunContext.for_day(DAY))
    promote(load_config(root, environ=env), retriever="handbook-search", run="latest", reason="day one",
            promoted_by="tests")
    overlay = root / "candidates.yaml"
    shipped = yaml.safe_load((INCLUDE / "retrievers.yaml").read_text())["retrievers"]
    truncated = next(e for e in shipped if e["version"] == "2.0-truncated")
    overlay.write_text(yaml.safe_dump({"retrievers": [{**truncated, "deployed": True}]}))
    return load_config(root, environ={**env, "EVALOPS_RETRIEVERS_OVERLAY": str(overlay)}), RunContext.for_day(NEXT_DAY)


def judge_rows(cfg, run) -> tuple[dict[str, dict], dict[str, list[tuple]], int]:
    """(the day's judge runs by query set, without what an attempt changes; their comparisons by query set,
    each by its versions, measure, family and record; every judge-label comparison in the warehouse)."""
    from sqlalchemy import func, select

    from evalops.pipeline.store import engine_for
    from evalops.warehouse.abtests import judge_ab_tests
    from evalops.warehouse.models import EvalRunModel
    from evalops.warehouse.tables import ab_tests, judge_runs

    engine = engine_for(cfg)
    eval_runs = EvalRunModel.__table__
    with engine.connect() as conn:
        recs = [dict(r) for r in conn.execute(select(judge_runs).where(
            judge_runs.c.dag_id == run.dag_id, judge_runs.c.dag_run_id == run.run_id)).mappings()]
        version = dict(conn.execute(select(eval_runs.c.id, eval_runs.c.version)).all())
        everything = conn.execute(select(func.count()).select_from(ab_tests)
                                  .where(ab_tests.c.judge_run_id.is_not(None))).scalar_one()
    scope = {rec["id"]: rec["scope"] for rec in recs}
    stored = judge_ab_tests(engine, scope)
    comparisons = {scope[i]: sorted((version[r.baseline_run_id], version[r.candidate_run_id], r.comparison.measure,
                                     r.family, json.dumps(r.comparison.to_record(), sort_keys=True))
                                    for r in rows) for i, rows in stored.items()}
    runs = {rec["scope"]: {k: v for k, v in rec.items() if k not in _ATTEMPT_COLUMNS} for rec in recs}
    return runs, comparisons, everything


@pytest.fixture(scope="module")
def uninterrupted(tmp_path_factory):
    """The judge rows of day two run once, undisturbed."""
    from evalops.pipeline import run_local

    cfg, day = _home(tmp_path_factory.mktemp("uninterrupted"))
    run_local(cfg, day)
    rows = judge_rows(cfg, day)
    runs, comparisons, everything = rows
    assert comparisons["gold"] and everything == sum(map(len, comparisons.values()))  # something to lose
    return rows


def _stopped(kind: str) -> BaseException:
    if kind == "killed":
        return _Killed()
    return OperationalError("INSERT INTO ab_tests", {}, Exception("server closed the connection unexpectedly"))


@pytest.mark.parametrize("stop, rerun", [("killed", "task retried"), ("warehouse gone", "day re-run")])
def test_a_judge_step_stopped_storing_its_comparisons_leaves_both_or_neither_and_a_rerun_completes_it(
        stop, rerun, uninterrupted, tmp_path, monkeypatch):
    import evalops.pipeline.local as local
    import evalops.warehouse.abtests as abtests
    from evalops.pipeline import run_local
    from evalops.pipeline.judging import judge_versions

    cfg, day = _home(tmp_path / "home")
    writer = abtests._store  # the one writer of ab_tests: stop it on the judge step's rows only
    planned: list = []

    def stopping(conn, results):
        if any(r.judge_run_id is not None for r in results):
            raise _stopped(stop)
        return writer(conn, results)

    def judging(cfg_, run_, versions, **kwargs):
        planned[:] = versions  # what the DAG's judge task gets again from XCom when it is retried
        return judge_versions(cfg_, run_, versions, **kwargs)

    with monkeypatch.context() as patch:
        patch.setattr(abtests, "_store", stopping)
        patch.setattr(local, "judge_versions", judging)
        with pytest.raises((_Killed, WarehouseError)):
            run_local(cfg, day)

    runs, comparisons, _ = judge_rows(cfg, day)
    ref_runs, ref_comparisons, ref_everything = uninterrupted
    # both or neither: a judge run left behind is a whole one, with every comparison it has undisturbed
    assert {scope: comparisons[scope] for scope in runs} == {scope: ref_comparisons[scope] for scope in runs}
    assert {scope: runs[scope] for scope in runs} == {scope: ref_runs[scope] for scope in runs}

    if rerun == "task retried":
        judge_versions(cfg, day, planned)
    else:
        run_local(cfg, day)
    assert judge_rows(cfg, day) == uninterrupted  # the day complete, and no row twice
    assert judge_rows(cfg, day)[2] == ref_everything
