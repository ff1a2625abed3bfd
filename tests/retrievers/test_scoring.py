"""retrieve_run: failures are excluded and counted, never scored as 0; the failure budget fails loudly."""

from __future__ import annotations

import numpy as np
import pytest

from evalops.data import Qrels
from evalops.errors import InputError, RetrieverError
from evalops.retrievers import (
    FailureBudgetExceeded,
    FunctionRetriever,
    Query,
    QueryResult,
    retrieve_run,
)

QUERIES = {f"q{i:03d}": f"text {i}" for i in range(100)}


def failing_on(bad: set[str]):
    def fn(queries, k):
        return [
            QueryResult.failure(q.id, f"query {q.id!r}: HTTP 503") if q.id in bad else [(f"{q.id}-a", 2.0), (f"{q.id}-b", 1.0)]
            for q in queries
        ]

    return FunctionRetriever(fn)


def test_a_clean_run_has_every_query():
    result = retrieve_run(failing_on(set()), QUERIES, k=5, name="v1")
    assert not result.partial and result.failed == {}
    assert result.run.name == "v1" and len(result.run) == 200
    assert result.summary()["answered"] == 100


def test_failed_queries_are_excluded_counted_and_listed_within_the_budget():
    result = retrieve_run(failing_on({"q007", "q042"}), QUERIES, k=5)
    assert result.partial and result.failed_ids == ["q007", "q042"]
    assert result.failed["q042"] == "query 'q042': HTTP 503"
    assert result.failure_rate == pytest.approx(0.02)
    assert not {"q007", "q042"} & set(result.run.query_ids.tolist())
    s = result.summary()
    assert (s["queries"], s["answered"], s["failed"], s["partial"]) == (100, 98, 2, True)


def test_exclude_failed_drops_them_from_the_qrels_so_they_are_not_scored_as_zero():
    result = retrieve_run(failing_on({"q007"}), QUERIES, k=5)
    qrels = Qrels.from_dict({"q007": {"q007-a": 1}, "q008": {"q008-a": 1}})
    kept = result.exclude_failed(qrels)
    assert kept.queries.tolist() == ["q008"]


def test_above_the_budget_it_raises_with_the_result_attached():
    with pytest.raises(FailureBudgetExceeded) as info:
        retrieve_run(failing_on({"q001", "q002", "q003"}), QUERIES, k=5, name="svc@2")
    err = info.value
    assert isinstance(err, RetrieverError)
    # The first batch (64 queries) spends the budget; the circuit breaker then calls no more.
    failed = err.result.failed
    assert [q for q in err.result.failed_ids if "HTTP 503" in failed[q]] == ["q001", "q002", "q003"]
    assert sorted(q for q in failed if failed[q].startswith("not called")) == [f"q{i:03d}" for i in range(64, 100)]
    assert "retriever 'svc@2': 39 of 100 queries failed (39.0%), above the failure budget of 2.0%" in str(err)
    assert "q001: query 'q001': HTTP 503" in str(err)


def test_the_circuit_breaker_stops_calling_once_the_budget_cannot_be_met():
    asked = []

    def fn(queries, k):
        asked.extend(q.id for q in queries)
        return [QueryResult.failure(q.id, "HTTP 503") for q in queries]

    with pytest.raises(FailureBudgetExceeded) as info:
        retrieve_run(FunctionRetriever(fn), QUERIES, k=5, batch_size=1, failure_budget=0.05)
    assert asked == [f"q{i:03d}" for i in range(6)]  # 5 allowed, the 6th opens the breaker
    assert info.value.result.failed["q099"] == (
        "not called: the circuit breaker opened after 6 failed queries (the failure budget allows 5)"
    )


def test_no_breaker_without_a_budget_check():
    asked = []

    def fn(queries, k):
        asked.extend(q.id for q in queries)
        return [QueryResult.failure(q.id, "HTTP 503") for q in queries]

    result = retrieve_run(FunctionRetriever(fn), QUERIES, k=5, batch_size=10, check_budget=False)
    assert len(asked) == 100 and len(result.failed) == 100


def test_the_budget_is_configurable():
    assert retrieve_run(failing_on({"q001", "q002", "q003"}), QUERIES, k=5, failure_budget=0.05).partial
    with pytest.raises(FailureBudgetExceeded):
        retrieve_run(failing_on({"q001"}), QUERIES, k=5, failure_budget=0.0)


def test_an_empty_answer_is_kept_as_a_real_answer_not_a_failure():
    result = retrieve_run(FunctionRetriever(lambda qs, k: [[] for _ in qs]), {"a": "x"}, k=5)
    assert not result.partial and len(result.run) == 0


def test_a_batch_that_raises_fails_its_queries_and_the_others_go_on():
    class Flaky:
        def retrieve(self, queries, k):
            if any(q.id == "q050" for q in queries):
                raise ConnectionError("service restarted")
            return [[(q.id + "-a", 1.0)] for q in queries]

    result = retrieve_run(Flaky(), QUERIES, k=5, batch_size=10, failure_budget=0.10)
    assert result.failed_ids == [f"q{i:03d}" for i in range(50, 60)]
    assert result.failed["q055"] == "ConnectionError: service restarted"
    assert len(result.run) == 90


def test_ranks_are_preserved_exactly_in_the_run():
    order = ["z", "a", "m", "b"]
    result = retrieve_run(FunctionRetriever(lambda qs, k: [order for _ in qs]), {"q": "x"}, k=10)
    assert result.run.doc_ids.tolist() == order and np.isnan(result.run.scores).all()


def test_progress_is_reported_per_batch_and_retries_and_latencies_are_collected():
    seen: list[int] = []

    def fn(queries, k):
        return [QueryResult(q.id, (("d", 1.0),), retries=1, seconds=0.01) for q in queries]

    result = retrieve_run(FunctionRetriever(fn), QUERIES, k=5, batch_size=32, on_progress=seen.append)
    assert seen == [32, 32, 32, 4]
    assert result.retries == 100
    t = result.timings()
    assert t["latency_p50"] == pytest.approx(0.01)  # the latencies the retriever reported
    assert np.isfinite(t["wall_seconds"])


def test_bad_arguments():
    r = failing_on(set())
    with pytest.raises(InputError, match="k must be at least 1"):
        retrieve_run(r, QUERIES, k=0)
    with pytest.raises(InputError, match="no queries"):
        retrieve_run(r, {}, k=5)
    with pytest.raises(InputError, match="'q1' appears more than once"):
        retrieve_run(r, [Query("q1", "a"), Query("q1", "b")], k=5)
    with pytest.raises(InputError, match="failure_budget"):
        retrieve_run(r, QUERIES, k=5, failure_budget=2)


def test_sharded_results_combine_into_the_unsharded_result_and_the_budget_applies_to_the_whole():
    from evalops.retrievers import combine_results

    r = failing_on({"q010", "q090"})
    whole = retrieve_run(r, QUERIES, k=5, name="v")
    items = list(QUERIES.items())
    shards = [retrieve_run(r, dict(items[i : i + 25]), k=5, name="v", check_budget=False) for i in range(0, 100, 25)]
    assert shards[0].failure_rate == pytest.approx(0.04)  # one shard alone is over the budget
    combined = combine_results(shards)
    assert combined.run.to_dict() == whole.run.to_dict()
    assert combined.failed == whole.failed and combined.query_ids == whole.query_ids
    assert combined.top_documents(2) == whole.top_documents(2)
    assert len(whole.top_documents(2)) == 98 and all(len(d) <= 2 for d in whole.top_documents(2).values())
    with pytest.raises(FailureBudgetExceeded):
        combine_results([retrieve_run(failing_on({"q001", "q002", "q003"}), QUERIES, k=5, check_budget=False)])
    with pytest.raises(InputError, match="overlap"):
        combine_results([shards[0], shards[0]])


def test_generated_answers_are_collected_and_combined_across_shards():
    from evalops.retrievers import combine_results

    def fn(queries, k):
        return [QueryResult(q.id, ((f"{q.id}-a", 1.0),), answer=f"answer to {q.text}" if q.id != "q002" else None)
                for q in queries]

    r = FunctionRetriever(fn)
    whole = retrieve_run(r, QUERIES, k=5, name="v")
    assert len(whole.answers) == 99 and "q002" not in whole.answers
    assert whole.answers["q001"] == f"answer to {QUERIES['q001']}"
    items = list(QUERIES.items())
    shards = [retrieve_run(r, dict(items[i : i + 50]), k=5, name="v", check_budget=False) for i in (0, 50)]
    assert combine_results(shards).answers == whole.answers


# --- the circuit breaker guards remote retrievers only ---------------------------------------------------

MANY = {f"q{i:03d}": f"text {i}" for i in range(300)}


def _partial_run_file(tmp_path, answered):
    """A run file answering the queries ``answered`` (2 documents each), spread over the query set."""
    path = tmp_path / "partial.trec"
    path.write_text("".join(f"{q} Q0 {q}-d{r} {r + 1} {2 - r} theirs\n" for q in answered for r in range(2)))
    return path


def test_a_run_file_is_read_for_every_query_and_its_failures_are_the_true_count(tmp_path):
    from evalops.retrievers import RunFileRetriever
    from evalops.transport import CircuitBreaker

    answered = [f"q{i:03d}" for i in range(9, 300, 10)]  # 30 of 300, most after the budget's 6th failure
    retriever = RunFileRetriever(_partial_run_file(tmp_path, answered))
    with pytest.raises(FailureBudgetExceeded) as info:
        retrieve_run(retriever, MANY, k=10, name="sf@partial", batch_size=7)
    result = info.value.result
    assert len(result.failed) == 270 and not set(answered) & set(result.failed)
    assert all("is absent from the run file" in why and "`missing: empty`" in why for why in result.failed.values())
    assert sorted(set(result.run.query_ids.tolist())) == answered  # every answered query is in the run
    assert "'sf@partial': 270 of 300 queries failed (90.0%)" in str(info.value)
    # a shard passes a breaker sized for the whole version: it does not apply to a run file either
    shard = retrieve_run(retriever, MANY, k=10, failure_budget=1.0, breaker=CircuitBreaker(300, 0.02))
    assert len(shard.failed) == 270 and len(shard.run) == 60


def test_the_breaker_still_guards_remote_retrievers_and_wrappers_over_them(tmp_path):
    from evalops.retrievers import HttpRetriever, ReciprocalRankFusion, RunFileRetriever
    from evalops.retrievers.base import is_remote

    run_file = RunFileRetriever(_partial_run_file(tmp_path, ["q000"]))
    asked = []

    def down(queries, k):
        asked.extend(q.id for q in queries)
        return [QueryResult.failure(q.id, "HTTP 503") for q in queries]

    service = FunctionRetriever(down)  # user code, which may call a service: remote unless it says otherwise
    assert is_remote(service) and is_remote(HttpRetriever("http://127.0.0.1:9/x")) and not is_remote(run_file)
    assert is_remote(ReciprocalRankFusion([run_file, service]))
    assert not is_remote(ReciprocalRankFusion([run_file, run_file]))
    with pytest.raises(FailureBudgetExceeded) as info:
        retrieve_run(ReciprocalRankFusion([run_file, service]), MANY, k=5, batch_size=1)
    assert len(asked) == 7  # 2 % of 300 allows 6; the 7th failure opens the breaker
    assert info.value.result.failed["q299"].startswith("not called: the circuit breaker opened")


def test_the_judges_top_k_is_the_evaluators_with_tied_scores():
    from evalops.metrics import top_k

    # A service returning tied scores with the lower doc id first: trec_eval breaks ties by doc id
    # descending, so its top 2 is b, c, not the list's a, b.
    def tied(queries, k):
        return [[(f"{q.id}-a", 1.0), (f"{q.id}-b", 1.0), (f"{q.id}-c", 1.0), (f"{q.id}-z", 0.5)] for q in queries]

    result = retrieve_run(FunctionRetriever(tied), {"q1": "x", "q2": "y"}, k=4)
    assert result.top_documents(2) == top_k(result.run, 2) == {"q1": ["q1-c", "q1-b"], "q2": ["q2-c", "q2-b"]}
