"""The judgment cache in the warehouse: a second run over the same items makes no request."""

from __future__ import annotations

from evalops.judges import JudgeItem, LexicalJudge, OpenAIJudge, OpenAISettings
from evalops.judges.cache import CachedJudge, MemoryStore, cache_key
from evalops.judges.fakeserver import FakeChatServer, Reply, completion
from evalops.warehouse.judgments import (
    WarehouseJudgmentStore,
    count_judgments,
    load_judge_runs,
    record_judge_run,
)

ITEMS = [JudgeItem("context_relevance", f"vitamin d {i}", context=f"Vitamin D text {i % 4}") for i in range(10)]


def test_two_runs_the_second_makes_no_request(engine):
    with FakeChatServer() as server:
        settings = OpenAISettings(base_url=server.url, model="fake-judge", max_concurrency=4)
        with OpenAIJudge(settings, api_key="k") as inner:
            first = CachedJudge(inner, WarehouseJudgmentStore(engine)).judge(ITEMS)
        assert server.requests == 10 and count_judgments(engine) == 10
        assert sum(j.input_tokens for j in first) == 1000
        with OpenAIJudge(settings, api_key="k") as inner:
            cached = CachedJudge(inner, WarehouseJudgmentStore(engine))
            second = cached.judge(ITEMS)
        assert server.requests == 10, "the second run sent requests"
        assert cached.hits == 10 and cached.misses == 0
        assert [j.label for j in second] == [j.label for j in first]
        assert all(j.cached and j.input_tokens == 0 for j in second)


def test_the_key_separates_model_prompt_decoding_and_sample(engine):
    with FakeChatServer() as server:
        base = dict(base_url=server.url, model="fake-judge")
        for settings, item in [
            (OpenAISettings(**base), ITEMS[0]),
            (OpenAISettings(**base, temperature=0.7), ITEMS[0]),  # decoding
            (OpenAISettings(**{**base, "model": "other"}), ITEMS[0]),  # model
            (OpenAISettings(**base), JudgeItem("context_relevance_graded", ITEMS[0].query, context=ITEMS[0].context)),
            (OpenAISettings(**base), JudgeItem(ITEMS[0].task, ITEMS[0].query, context=ITEMS[0].context, sample=1)),
            (OpenAISettings(**base), JudgeItem(ITEMS[0].task, ITEMS[0].query, context="changed document")),
        ]:
            with OpenAIJudge(settings, api_key="k") as inner:
                CachedJudge(inner, WarehouseJudgmentStore(engine)).judge([item])
        assert server.requests == 6 and count_judgments(engine) == 6


def test_missing_labels_are_not_cached(engine):
    with FakeChatServer(script=[Reply(200, completion("no idea"))]) as server:
        settings = OpenAISettings(base_url=server.url, model="fake-judge")
        with OpenAIJudge(settings, api_key="k") as inner:
            [j] = CachedJudge(inner, WarehouseJudgmentStore(engine)).judge(ITEMS[:1])
            assert j.missing and count_judgments(engine) == 0
            [j] = CachedJudge(inner, WarehouseJudgmentStore(engine)).judge(ITEMS[:1])
        assert j.label == 1.0 and server.requests == 2


def test_duplicates_in_a_batch_are_judged_once():
    judge = CachedJudge(LexicalJudge(), MemoryStore())
    out = judge.judge([ITEMS[0], ITEMS[0], ITEMS[1]])
    assert judge.misses == 2 and judge.hits == 1 and len(judge.store.rows) == 2
    assert out[0].label == out[1].label and out[1].cached and not out[0].cached
    assert cache_key(LexicalJudge(), ITEMS[0]) != cache_key(LexicalJudge(threshold=0.3), ITEMS[0])


def test_judge_runs_are_upserted(engine):
    values = dict(judge={"model": "m"}, prompt="context_relevance@1", items=10, requests=10, cache_hits=0, missing=1,
                  missing_reasons={"refused": 1}, input_tokens=1000, output_tokens=100, cost=0.25,
                  gate={"status": "descriptive"}, agreement=None, results={})
    first = record_judge_run(engine, dag_id="d", dag_run_id="r", scope="production", values=values)
    again = record_judge_run(engine, dag_id="d", dag_run_id="r", scope="production", values={**values, "cost": 0.5})
    assert first == again
    frame = load_judge_runs(engine, "r")
    assert len(frame) == 1 and frame.loc[0, "cost"] == 0.5 and frame.loc[0, "input_tokens"] == 1000
