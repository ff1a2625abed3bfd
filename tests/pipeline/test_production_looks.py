"""Daily production looks pool the days since the restart (``evalops.pipeline.pooling``).

Each test writes production days to a warehouse as the pipeline does (a baseline and a candidate run per
day on that day's sample, their per-query scores, then the decided production family in ``ab_tests``) and
decides each day with the decide step's function for a production candidate run
(``decide_production_run``). Every day's sample is new (its own query-set version in the fingerprint);
the deltas are planted exactly: 200 queries a day, half at ``+0.25 + shift`` and half at ``-0.25 + shift``
(sd 0.25), in a seeded order.

Every test runs on SQLite and, when ``EVALOPS_TEST_POSTGRES_URL`` names a server, on PostgreSQL (a database of
the module's own, created and dropped here; tables emptied before each test).
"""

from __future__ import annotations

import datetime as dt
import os

import numpy as np
import pandas as pd
import pytest

from evalops.config import PRODUCTION
from evalops.fingerprint import EvalFingerprint
from evalops.pipeline.pooling import POOLED_METHOD, decide_production_run
from evalops.pipeline.specs import VersionSpec
from evalops.stats import Policy, align, compare
from evalops.warehouse import (
    ABTestResult,
    RunKey,
    connect,
    load_ab_tests,
    record_ab_tests,
    record_gold_set_version,
    record_kb_snapshot,
    record_run,
    upgrade,
)

MEASURE = "P@10"
N = 200
T0 = dt.datetime(2026, 11, 1, tzinfo=dt.timezone.utc)


# Read at import: this folder's autouse fixture removes EVALOPS_* variables before each test runs.
_PG_SERVER = os.environ.get("EVALOPS_TEST_POSTGRES_URL")


@pytest.fixture(scope="module")
def pg_database():
    """A migrated PostgreSQL database of this module's own (dropped at the end)."""
    from tests.warehouse.warehouse_helpers import create_pg_database, drop_pg_database

    if not _PG_SERVER:
        pytest.skip("EVALOPS_TEST_POSTGRES_URL is not set")
    url = create_pg_database(_PG_SERVER, prefix="evalops_looks")
    engine = connect(url)
    try:
        upgrade(engine)
        engine.dispose()
        yield url
    finally:
        from evalops.pipeline.store import _engine

        _engine.cache_clear()  # the judge step's pooled connections, before dropping
        engine.dispose()
        drop_pg_database(url)


@pytest.fixture(params=["sqlite", pytest.param("postgresql", marks=pytest.mark.postgres)])
def warehouse_url(request, tmp_path):
    """A migrated, empty warehouse on each backend."""
    from sqlalchemy import text

    from evalops.warehouse.models import Base

    if request.param == "sqlite":
        url = f"sqlite:///{tmp_path / 'warehouse.db'}"
        engine = connect(url)
        upgrade(engine)
    else:
        url = request.getfixturevalue("pg_database")
        engine = connect(url)
        with engine.begin() as conn:
            conn.execute(text(f"TRUNCATE {', '.join(t.name for t in Base.metadata.sorted_tables)} "
                              "RESTART IDENTITY CASCADE"))
    engine.dispose()
    return url


@pytest.fixture
def engine(warehouse_url):
    engine = connect(warehouse_url)
    yield engine
    engine.dispose()


def planted(day: int, shift: float) -> np.ndarray:
    signs = np.repeat([1.0, -1.0], N // 2)
    return np.random.default_rng(day).permutation(signs) * 0.25 + shift


class Days:
    """Writes and decides production days of retriever ``search``: candidate 2.0 against a baseline."""

    def __init__(self, engine):
        self.engine = engine
        self.policy = Policy(alpha=0.05)

    def fingerprint(self, day: int, kb: str) -> EvalFingerprint:
        sample = f"sample-{day}"  # the day's log sample: a new query-set version every day
        record_gold_set_version(self.engine, sample, name=PRODUCTION, n_queries=N, n_judgments=0)
        record_kb_snapshot(self.engine, kb, n_documents=100, content_hash=f"sha-{kb}")
        return EvalFingerprint.of(sample, kb, [MEASURE], {"labels": "implicit-feedback"})

    def run(self, day: int, version: str, values: np.ndarray, fp: EvalFingerprint, hour: int = 0):
        when = T0 + dt.timedelta(days=day, hours=hour)
        dag_run = f"manual__{when:%Y-%m-%dT%H}" if hour else f"scheduled__{when:%Y-%m-%d}"
        scores = pd.DataFrame({"query_id": [f"q{day}-{i:03d}" for i in range(N)], "measure": MEASURE,
                               "value": values})
        return record_run(self.engine, RunKey("retrieval_eval", dag_run, "search", version, PRODUCTION),
                          fingerprint=fp, logical_date=when, status="succeeded", started_at=when,
                          finished_at=when, n_queries=N, scores=scores)

    def decide(self, day: int, shift: float, baseline: str = "1.0", kb: str = "kb-1", store: bool = True,
               hour: int = 0, candidate: str = "2.0"):
        """Score, compare and decide day ``day`` (``hour``: a manual run later that day); returns the decided
        comparison."""
        fp = self.fingerprint(day, kb)
        base_values = np.full(N, 0.5)
        cand_values = base_values + planted(day, shift)
        base = self.run(day, baseline, base_values, fp, hour)
        cand = self.run(day, candidate, cand_values, fp, hour)
        ids = [f"q{day}-{i:03d}" for i in range(N)]
        paired = align((ids, base_values.tolist()), (ids, cand_values.tolist()))
        comp = compare(paired, measure=MEASURE, policy=self.policy, baseline_name=f"search@{baseline}",
                       candidate_name=f"search@{candidate}", rng=0)
        [decided] = decide_production_run(self.engine, [comp], candidate_run_id=cand.id, baseline_run_id=base.id)
        if store:
            record_ab_tests(self.engine, [ABTestResult(decided, baseline_run_id=base.id, candidate_run_id=cand.id,
                                                         family="production")])
        return decided


def test_a_sustained_drop_is_found_once_enough_days_pool_while_one_day_alone_is_not(engine):
    days = Days(engine)
    decided = [days.decide(day, -0.03) for day in range(1, 13)]
    # one day alone: a drop of 0.03 in 200 queries of sd 0.25 is not significant (t about -1.7)
    assert {d.pooled["today_alone"] for d in decided} <= {"inconclusive", "no_change"}
    first = next(k for k, d in enumerate(decided) if d.decision == "regression")
    assert 2 <= first < 11  # found after pooling some days, and it stays found
    assert all(d.decision == "regression" for d in decided[first:])
    last = decided[-1]
    assert last.interval_method == POOLED_METHOD
    assert last.pooled["looks"] == 12 and last.pooled["queries"] == 12 * N
    assert last.pooled["since"] == "2026-11-02" and last.pooled["restart"] == "first look"
    assert decided[first].pooled["decided_on"] == f"2026-11-{first + 2:02d}"  # the day it was first shown
    assert decided[first].severity == "warning" and last.severity == "critical"  # past the margin later
    assert last.pooled["upper"] < 0 < last.pooled["upper"] - last.pooled["lower"]
    assert last.interval_high == last.pooled["upper"]
    assert last.reasons[-1].startswith(f"pooled over 12 days since 2026-11-02 (first look), {12 * N:,} queries")
    # the record the report and the alerts read back holds it
    stored = load_ab_tests(engine).sort_values("candidate_run_id").iloc[-1]
    assert stored["record"]["pooled"] == last.pooled


def test_an_unchanged_pair_watched_for_weeks_never_alerts(engine):
    days = Days(engine)
    decided = [days.decide(day, 0.0) for day in range(1, 21)]
    assert not any(d.decision in ("regression", "improvement") for d in decided)
    assert decided[-1].pooled["looks"] == 20
    assert decided[-1].pooled["lower"] < 0 < decided[-1].pooled["upper"]


def test_a_promotion_restarts_the_window(engine):
    days = Days(engine)
    before = [days.decide(day, -0.03) for day in range(1, 11)]
    assert before[-1].decision == "regression"
    after = days.decide(11, -0.03, baseline="1.5")  # the baseline changed: a new pair of versions
    assert after.pooled["looks"] == 1 and after.pooled["since"] == "2026-11-12"
    assert after.pooled["restart"] == "baseline changed (1.0 before)"
    assert after.decision != "regression"
    later = days.decide(12, -0.03, baseline="1.5")
    assert later.pooled["looks"] == 2 and later.pooled["since"] == "2026-11-12"


def test_another_candidate_in_between_restarts_the_window(engine):
    days = Days(engine)
    [days.decide(day, -0.03) for day in range(1, 4)]
    newer = days.decide(4, -0.03, candidate="3.0")  # a new version: its own first look
    assert newer.pooled["looks"] == 1 and newer.pooled["restart"] == "first look"
    back = days.decide(5, -0.03)  # 2.0 deployed again: its earlier days are before the change
    assert back.pooled["looks"] == 1
    assert back.pooled["restart"] == "candidate changed (2.0 was not deployed on 2026-11-05)"


def test_numbers_under_another_fingerprint_are_never_pooled(engine):
    days = Days(engine)
    before = [days.decide(day, -0.03) for day in range(1, 11)]
    assert before[-1].decision == "regression"
    after = days.decide(11, -0.03, kb="kb-2")  # the knowledge base changed
    assert after.pooled["looks"] == 1 and after.pooled["restart"] == "fingerprint changed (kb_snapshot_id)"
    assert after.decision != "regression"


def test_a_new_policy_restarts_the_window(engine):
    days = Days(engine)
    [days.decide(day, -0.03) for day in range(1, 6)]
    days.policy = Policy(alpha=0.05, min_delta=0.02)
    after = days.decide(6, -0.03)
    assert after.pooled["looks"] == 1 and after.pooled["restart"] == "regression policy changed"


def test_a_re_run_of_a_day_decides_the_same(engine):
    days = Days(engine)
    [days.decide(day, -0.03) for day in range(1, 8)]
    first = days.decide(8, -0.03)
    again = days.decide(8, -0.03)  # the day's own stored row is not one of its earlier looks
    assert again.to_record() == first.to_record()
    assert len(load_ab_tests(engine)) == 8
    # a manual run later the same day pools the same days: today's earlier run is not an earlier day
    manual = days.decide(8, -0.03, hour=10)
    assert manual.pooled == first.pooled and manual.decision == first.decision


def test_the_report_and_the_alert_text_say_what_was_pooled(engine):
    from evalops.alerting import AlertContext, regression_alerts
    from evalops.reports import ABResult, ReportData, VersionScores, render_markdown

    days = Days(engine)
    [days.decide(day, -0.03) for day in range(1, 4)]
    days.decide(10, -0.03, baseline="1.5")  # promoted: the window restarts on 2026-11-11
    decided = [days.decide(day, -0.06, baseline="1.5") for day in range(11, 15)][-1]
    assert decided.decision == "regression" and decided.pooled["since"] == "2026-11-11"
    words = f"pooled over 5 days since 2026-11-11 (baseline changed (1.0 before)), {5 * N:,} queries"
    record = decided.to_record()
    row = ABResult(comparison=decided, retriever="search", baseline_version="1.5", candidate_version="2.0",
                   query_set=PRODUCTION, family="production")
    agg = {MEASURE: {"mean": 0.5, "ci_low": 0.45, "ci_high": 0.55, "n": N}}
    data = ReportData(run_key="scheduled__2026-11-15", day="2026-11-15", generated_at="2026-11-15T03:00:00+00:00",
                      fingerprint="fp", fingerprint_components={}, policies={},
                      versions=[VersionScores("search", "2.0", "candidate", PRODUCTION, agg, n_queries=N)],
                      ab_results=[row], changes=[], stale_baselines=[], alerts=[])
    assert words in render_markdown(data)
    context = AlertContext(retriever="search", version="2.0", baseline_version="1.5", fingerprint="fp",
                           day="2026-11-15", query_set=PRODUCTION)
    [alert] = regression_alerts({MEASURE: record}, context, policy={}, query_text={}, scrub=str)
    assert words in alert.message


# -- the judge-label production family (ab_tests of judge runs) -----------------------------------------------

def _judge_config(tmp_path, url: str, graded: bool = False):
    from evalops.config import load_config
    from tests.dags.conftest import INCLUDE

    env = {"EVALOPS_HOME": str(tmp_path), "EVALOPS_WAREHOUSE_URL": url,
           "EVALOPS_GOLD_SET": str(INCLUDE / "goldset"), "EVALOPS_KNOWLEDGE_BASE": str(INCLUDE / "knowledge_base"),
           "EVALOPS_REGISTRY": str(INCLUDE / "retrievers.yaml"), "EVALOPS_JUDGE__KIND": "lexical",
           "EVALOPS_JUDGE__GRADED": "true" if graded else "false"}
    return load_config(tmp_path, environ=env)


def _judge_day(cfg, engine, day: int, shift: float) -> dict:
    """One production day judged: the candidate's judge-label comparison decided as the judge step does
    (``_decide_families``) and stored as the judge step stores it: the judge run with the day's per-query
    labels in ``judge_runs``, its comparison in ``ab_tests``."""
    from evalops.judges.prompts import load_prompt
    from evalops.pipeline.judging.comparisons import _decide_families
    from evalops.pipeline.judging.preflight import build_judge
    from evalops.warehouse.abtests import record_judge_ab_tests
    from evalops.warehouse.judgments import record_judge_run

    days = Days(engine)
    fp = days.fingerprint(day, "kb-1")
    base_values, cand_values = np.full(N, 0.5), 0.5 + planted(day, shift)
    base = days.run(day, "1.0", base_values, fp)
    cand = days.run(day, "2.0", cand_values, fp)
    ids = [f"q{day}-{i:03d}" for i in range(N)]
    policy = cfg.stats_policy(0)
    comp = compare(align((ids, base_values.tolist()), (ids, cand_values.tolist())), measure="judge:nDCG@5",
                   policy=policy, baseline_name="search@1.0", candidate_name="search@2.0", rng=0)
    spec = VersionSpec(label="search@2.0 production", retriever="search", version="2.0", dataset=PRODUCTION,
                       role="candidate", run_id=cand.id, fingerprint=fp.hash, snapshot_id="kb-1",
                       query_set_version="day", n_queries=N, n_shards=1, baseline_version="1.0",
                       baseline_run_id=None, baseline_today=True, stored_baseline_run_id=None, baseline_note="",
                       rescore_reason=None, sample_folder=None)
    records, _ = _decide_families(cfg, PRODUCTION, [(spec, comp, base.id)], policy)
    when = T0 + dt.timedelta(days=day)
    task = "context_relevance_graded" if cfg.judge.graded else "context_relevance"
    results = {"per_query": {"1.0": {"nDCG@5": dict(zip(ids, base_values.tolist(), strict=True))},
                             "2.0": {"nDCG@5": dict(zip(ids, cand_values.tolist(), strict=True))}}}
    judge_run_id = record_judge_run(
        engine, dag_id="retrieval_eval", dag_run_id=f"scheduled__{when:%Y-%m-%d}", scope=PRODUCTION,
        values={"judge": build_judge(cfg.judge).fingerprint.to_dict(), "prompt": load_prompt(task).ref,
                "items": 0, "requests": 0, "cache_hits": 0, "missing": 0, "missing_reasons": {},
                "input_tokens": 0, "output_tokens": 0, "cost": 0.0, "gate": {"status": "alerting"},
                "agreement": None, "results": results})
    record_judge_ab_tests(engine, judge_run_id, [r.stored(judge_run_id) for r in records])
    return records[0].comparison.to_dict()


def test_judge_labels_on_production_pool_the_days_and_a_new_judge_restarts(tmp_path, warehouse_url):
    from evalops.pipeline.store import engine_for

    cfg = _judge_config(tmp_path, warehouse_url)
    engine = engine_for(cfg)
    decided = [_judge_day(cfg, engine, day, -0.03) for day in range(1, 11)]
    assert decided[0]["decision"] != "regression" and decided[-1]["decision"] == "regression"
    assert decided[-1]["pooled"]["looks"] == 10 and decided[-1]["pooled"]["restart"] == "first look"
    assert decided[-1]["interval_method"] == POOLED_METHOD
    graded = _judge_day(_judge_config(tmp_path, warehouse_url, graded=True), engine, 11, -0.03)  # another prompt
    assert graded["pooled"]["looks"] == 1 and graded["pooled"]["restart"] == "judge changed"


# -- which method decides: the measure's declared range, never the day's data ------------------------------

def _compare_today(measure: str, base: np.ndarray, cand: np.ndarray):
    ids = [f"q{i:03d}" for i in range(len(base))]
    return compare(align((ids, base.tolist()), (ids, cand.tolist())), measure=measure, policy=Policy(alpha=0.05),
                   baseline_name="search@1.0", candidate_name="search@2.0", rng=0)


def _earlier(days: list[np.ndarray]):
    from evalops.warehouse.looks import EarlierLook, EarlierLooks

    today = (T0 + dt.timedelta(days=len(days) + 1)).date()
    looks = tuple(EarlierLook((T0 + dt.timedelta(days=k + 1)).date(), 2 * k + 2, 2 * k + 1, d)
                  for k, d in enumerate(days))
    return lambda comps, policy: {c.measure: EarlierLooks(today, looks, "first look", None) for c in comps}


def test_the_method_is_the_measures_range_so_a_measure_never_switches_from_day_to_day():
    from evalops.pipeline.pooling import pool_family, unit_range

    assert unit_range("P@10") and unit_range("judge:nDCG@5") and unit_range("judge:Faithfulness")
    assert not unit_range("judge:AnswerRelevance") and not unit_range("Tokens@5") and not unit_range("unknown")
    rng = np.random.default_rng(5)
    base = rng.uniform(2.0, 4.0, N)
    # answer relevance (1-5): days whose deltas happen to lie in [-1, 1] and days whose deltas do not
    small, large = base + rng.uniform(-0.5, 0.5, N), np.clip(base + rng.normal(0.0, 1.5, N), 1.0, 5.0)
    history = [small - base, large - base, small - base]
    for k, today in enumerate((small, large, small)):
        [decided] = pool_family([_compare_today("judge:AnswerRelevance", base, today)], _earlier(history[:k]))
        assert decided.pooled is None and decided.interval_method != POOLED_METHOD
        assert decided.reasons[-1].startswith("not pooled: judge:AnswerRelevance is not declared within [0, 1]")
    # a measure in [0, 1]: pooled every day, whatever the day's deltas
    unit = rng.uniform(0.2, 0.8, N)
    for k in range(3):
        [decided] = pool_family([_compare_today("P@10", unit, unit + 0.01)], _earlier([np.full(N, 0.01)] * k))
        assert decided.interval_method == POOLED_METHOD and decided.pooled["looks"] == k + 1


def test_a_measure_declared_in_the_unit_range_with_deltas_outside_it_is_an_error_naming_the_day():
    from evalops.errors import InputError
    from evalops.pipeline.pooling import pool_family

    unit = np.full(N, 0.5)
    with pytest.raises(InputError, match=r"P@10 .* declared within \[0, 1\].* 2026-11-02 leave \[-1, 1\]"):
        pool_family([_compare_today("P@10", unit, unit + 0.01)], _earlier([np.full(N, 1.5)]))


def test_the_judge_family_line_says_what_the_pooled_test_used():
    from evalops.pipeline.judging.summaries import _family_looks
    from tests.conftest import comparison_of

    pooled = {"looks": 3, "since": "2026-11-02", "restart": "first look", "queries": 600}
    comparisons = [comparison_of(candidate="search@2.0", measure="judge:P@3", pooled=pooled),
                   comparison_of(candidate="search@2.0", measure="judge:AnswerRelevance", pooled=None)]
    line = _family_looks({"looks": {"search@2.0": 3}}, comparisons)
    assert line == ("search@2.0 pooled over 3 looks since 2026-11-02 (first look), 600 queries (judge:P@3); "
                    "search@2.0 look 3, alpha spent over the looks (judge:AnswerRelevance)")
    # no member pooled (a gold set, or the spending rule alone): the look counter, as before
    assert _family_looks({"looks": {"search@2.0": 1}}, comparisons[1:]) == "search@2.0 look 1"


def test_a_familys_earlier_days_are_read_together_and_each_measure_keeps_its_own_window(engine):
    from evalops.warehouse.looks import earlier_looks, earlier_looks_of

    measures = ["P@10", "nDCG@10"]
    policy = Policy(alpha=0.05)
    rng = np.random.default_rng(9)
    runs, values = {}, {}
    for day in range(1, 5):
        sample = f"sample-{day}"
        record_gold_set_version(engine, sample, name=PRODUCTION, n_queries=N, n_judgments=0)
        record_kb_snapshot(engine, "kb-1", n_documents=100, content_hash="sha-kb-1")
        fp = EvalFingerprint.of(sample, "kb-1", measures, {"labels": "implicit-feedback"})
        when = T0 + dt.timedelta(days=day)
        ids = [f"q{day}-{i:03d}" for i in rng.permutation(N)]  # stored in no particular order
        for version in ("1.0", "2.0"):
            values[day, version] = {m: rng.random(N) for m in measures}
            scores = pd.DataFrame({"query_id": ids * 2, "measure": np.repeat(measures, N),
                                   "value": np.concatenate([values[day, version][m] for m in measures])})
            runs[day, version] = record_run(
                engine, RunKey("retrieval_eval", f"scheduled__{when:%Y-%m-%d}", "search", version, PRODUCTION),
                fingerprint=fp, logical_date=when, status="succeeded", started_at=when, finished_at=when,
                n_queries=N, scores=scores).id
        if day < 4:
            compared = measures if day != 2 else ["P@10"]  # nDCG@10 was not compared on day 2: no look
            comps = [compare(align((ids, values[day, "1.0"][m].tolist()), (ids, values[day, "2.0"][m].tolist())),
                             measure=m, policy=policy, baseline_name="search@1.0", candidate_name="search@2.0", rng=0)
                     for m in compared]
            record_ab_tests(engine, [ABTestResult(c, baseline_run_id=runs[day, "1.0"],
                                                    candidate_run_id=runs[day, "2.0"], family="production")
                                     for c in comps])
        expected = {m: dict(zip(ids, values[day, "2.0"][m] - values[day, "1.0"][m])) for m in measures}
        values[day, "deltas"] = {m: np.array([expected[m][q] for q in sorted(ids)]) for m in measures}
    both = earlier_looks_of(engine, runs[4, "2.0"], runs[4, "1.0"], measures, policy.to_dict())
    assert [look.day.day for look in both["P@10"].looks] == [2, 3, 4]
    assert [look.day.day for look in both["nDCG@10"].looks] == [2, 4]
    for m in measures:
        for look in both[m].looks:
            np.testing.assert_array_equal(look.deltas, values[look.day.day - 1, "deltas"][m])
        alone = earlier_looks(engine, runs[4, "2.0"], runs[4, "1.0"], m, policy.to_dict())
        assert [(x.day, x.candidate_run_id) for x in alone.looks] == [
            (x.day, x.candidate_run_id) for x in both[m].looks]
