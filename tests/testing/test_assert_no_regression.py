"""``evalops.testing.assert_no_regression``: runs + qrels, per-query scores, and a pipeline result."""

from __future__ import annotations

import numpy as np
import pytest

from evalops.testing import assert_no_regression


def _run_dict(path):
    run: dict[str, dict[str, float]] = {}
    for line in open(path, encoding="utf-8"):
        qid, _, doc, _, score, *_ = line.split()
        run.setdefault(qid, {})[doc] = float(score)
    return run


@pytest.fixture(scope="module")
def scifact(shared_data):
    folder = shared_data / "scifact"
    return folder / "qrels.tsv", folder / "runs" / "bm25.trec"


def test_a_run_compared_with_itself_passes_and_returns_the_decisions(scifact):
    qrels, bm25 = scifact
    decided = assert_no_regression(bm25, bm25, qrels=qrels, measures=["nDCG@10", "R@100"])
    assert [(c.measure, c.decision) for c in decided] == [("nDCG@10", "no_change"), ("R@100", "no_change")]


def test_a_planted_drop_fails_with_the_decision_in_words(scifact):
    qrels, bm25 = scifact
    baseline = _run_dict(bm25)
    # the candidate loses its best document on every query: a real, large drop
    candidate = {q: dict(sorted(docs.items(), key=lambda kv: -kv[1])[1:]) for q, docs in baseline.items()}
    with pytest.raises(AssertionError) as caught:
        assert_no_regression(baseline, candidate, qrels=str(qrels), measures=["nDCG@10", "R@100"])
    message = str(caught.value)
    assert message.startswith("1 of 2 comparisons regressed") or message.startswith("2 of 2 comparisons regressed")
    assert "regression (critical): nDCG@10" in message and "delta -0." in message and "[decision interval -0." in message
    assert "a material drop (critical)" in message  # the rule's own reason, in words


def test_per_query_scores_of_one_measure():
    rng = np.random.default_rng(7)
    ids = [f"q{i}" for i in range(80)]
    base = rng.uniform(0.3, 0.9, size=80)
    with pytest.raises(AssertionError, match=r"regression \(critical\): nDCG@10 0\.\d+ -> 0\.\d+, delta -0\.1"):
        assert_no_regression(dict(zip(ids, base)), dict(zip(ids, base - rng.uniform(0.05, 0.2, 80))),
                             measures="nDCG@10")
    (same,) = assert_no_regression((ids, base), (ids, base + rng.normal(0, 0.01, 80)), measures="nDCG@10")
    assert same.decision in ("no_change", "inconclusive")


def test_too_few_queries_is_inconclusive_and_passes():
    (c,) = assert_no_regression({"a": 0.9, "b": 0.2, "c": 0.7}, {"a": 0.5, "b": 0.6, "c": 0.4}, measures="RR")
    assert c.decision == "inconclusive" and c.reasons


def test_misuse_is_a_type_error():
    with pytest.raises(TypeError, match="needs a candidate"):
        assert_no_regression({"a": 1.0})
    with pytest.raises(TypeError, match="one measure"):
        assert_no_regression({"a": 1.0}, {"a": 1.0}, measures=["RR", "AP"])


@pytest.mark.slow
def test_a_pipeline_result_fails_on_its_regression_alert(tmp_path):
    import yaml

    from evalops.config import load_config
    from evalops.pipeline import RunContext, promote, run_local
    from tests.dags.conftest import INCLUDE

    entries = yaml.safe_load((INCLUDE / "retrievers.yaml").read_text())["retrievers"]

    def env_for(deployed):
        registry = tmp_path / f"registry-{len(deployed)}.yaml"
        registry.write_text(yaml.safe_dump({"retrievers": [
            {**e, "deployed": e["version"] in deployed} for e in entries if e["name"] == "handbook-search"]}))
        return {"EVALOPS_HOME": str(tmp_path), "EVALOPS_GOLD_SET": str(INCLUDE / "goldset"),
                "EVALOPS_KNOWLEDGE_BASE": str(INCLUDE / "knowledge_base"), "EVALOPS_REGISTRY": str(registry),
                "EVALOPS_LOG_SAMPLE_SIZE": "0", "EVALOPS_WAREHOUSE_URL": f"sqlite:///{tmp_path / 'w.db'}"}

    day1 = load_config(tmp_path, environ=env_for({"1.0"}))
    run1 = RunContext.for_day("2024-05-31")
    cases = assert_no_regression(run_local(day1, run1), config=day1, run=run1)
    assert {c.message for c in cases} == {"not compared: no baseline yet (promote one)"}
    promote(day1, retriever="handbook-search", version="1.0", reason="day 1", promoted_by="tests")
    day2 = load_config(tmp_path, environ=env_for({"1.0", "2.0-truncated"}))
    run2 = RunContext.for_day("2024-06-01")
    result = run_local(day2, run2)
    with pytest.raises(AssertionError, match=r"1 of 6 checks failed .*\n  handbook-search 2.0-truncated: "
                                             r"regression \(critical\): nDCG@10 0\.6433 -> 0\.3640"):
        assert_no_regression(result, config=day2, run=run2)
