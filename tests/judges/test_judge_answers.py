"""Generated answers from RAG endpoints, end to end: two versions of a local fake HTTP retriever that return
answers (JSON field ``answer``), judged by the local fake OpenAI-compatible server for faithfulness and
answer relevance, compared per query, gated and reported like the context measures."""

from __future__ import annotations

import pytest
import yaml

from evalops.judges.fakeserver import FakeChatServer
from tests.dags.conftest import INCLUDE, make_home
from tests.judges.conftest import judge_comparisons

pytestmark = pytest.mark.slow

# The answer of version 2.0 carries a claim no context supports.
UNSUPPORTED = "Refunds are paid in gold bars by the moon office."


@pytest.fixture(autouse=True)
def _no_evalops_environment(monkeypatch):
    import os

    for key in list(os.environ):
        if key.startswith("EVALOPS_") and key != "EVALOPS_SHARED_DATA":
            monkeypatch.delenv(key)


def _rag_handler(faithful: bool):
    """A RAG endpoint over the sample knowledge base: BM25's top k, and an answer made of the top document's
    first sentence (faithful) or of that sentence plus an unsupported claim."""
    from evalops.formats import read_beir_corpus
    from evalops.retrievers import BM25Retriever, Query

    corpus = read_beir_corpus(INCLUDE / "knowledge_base" / "corpus.jsonl")
    texts = dict(zip(corpus["doc_id"].astype(str), corpus["text"].astype(str)))
    bm25 = BM25Retriever(corpus)

    def handle(body, _headers):
        result = bm25.retrieve([Query(str(body["query_id"]), str(body["query"]))], int(body["k"]))[0]
        first = texts[result.ranked[0][0]].split(". ")[0] + "." if result.ranked else "I do not know."
        answer = first if faithful else f"{first} {UNSUPPORTED}"
        return 200, {"query_id": body["query_id"], "answer": answer,
                     "results": [{"doc_id": d, "score": s} for d, s in result.ranked]}

    return handle


def _registry(path, urls: dict[str, str], deployed: set[str]):
    # The versions the generated query logs carry, so the logs' contract holds.
    urls = {**urls, "2.0-truncated": urls["1.0"]}
    entries = [{"name": "handbook-search", "version": v, "adapter": "http", "deployed": v in deployed,
                "owner": "search-platform", "params": {"url": url, "timeout": 10, "concurrency": 4}}
               for v, url in urls.items()]
    path.write_text(yaml.safe_dump({"retrievers": entries}))
    return path


def test_two_rag_versions_get_faithfulness_and_answer_relevance_compared_and_reported(tmp_path, monkeypatch):
    from evalops.config import load_config
    from evalops.pipeline import RunContext, promote, run_local
    from evalops.pipeline.store import engine_for
    from evalops.retrievers import LocalService
    from evalops.warehouse.judgments import load_judge_runs

    env = make_home(tmp_path / "home", log_start="2024-05-29", log_days=4)
    monkeypatch.setenv("FAKE_JUDGE_KEY", "sk-test")  # the judge reads its key from the process's environment
    with LocalService(_rag_handler(True)) as good, LocalService(_rag_handler(False)) as bad, \
            FakeChatServer() as judge_server:
        urls = {"1.0": good.url, "2.0-hybrid": bad.url}
        env.update({"EVALOPS_REGISTRY": str(_registry(tmp_path / "day1.yaml", urls, {"1.0"})),
                    "EVALOPS_JUDGE__KIND": "openai", "EVALOPS_JUDGE__BASE_URL": judge_server.url,
                    "EVALOPS_JUDGE__MODEL": "fake-judge", "EVALOPS_JUDGE__API_KEY_ENV": "FAKE_JUDGE_KEY",
                    "FAKE_JUDGE_KEY": "sk-test", "EVALOPS_JUDGE__TOP_K": "3",
                    "EVALOPS_JUDGE__PRODUCTION_QUERIES": "10", "EVALOPS_LOG_SAMPLE_SIZE": "20",
                    "EVALOPS_JUDGE__AGREEMENT_THRESHOLD": "-1"})
        cfg = load_config(tmp_path / "home", environ=env)
        run_local(cfg, RunContext.for_day("2024-05-31"))
        promote(cfg, retriever="handbook-search", run="latest", reason="day one", promoted_by="tests")
        env2 = {**env, "EVALOPS_REGISTRY": str(_registry(tmp_path / "day2.yaml", urls, {"1.0", "2.0-hybrid"}))}
        cfg2 = load_config(tmp_path / "home", environ=env2)
        day2 = RunContext.for_day("2024-06-01")
        served = good.requests + bad.requests
        out = run_local(cfg2, day2)
        # The judge reuses what the score step retrieved: each query is asked once per version.
        scored = {s["label"]: s for s in out["versions"]}
        assert good.requests + bad.requests - served == sum(s["n_queries"] for s in scored.values())
        day3 = RunContext.for_day("2024-06-02")
        run_local(cfg2, day3)  # the second day the candidate is compared on production: its second look

    engine = engine_for(cfg2)
    runs = load_judge_runs(engine, day2.run_id)
    gold = runs[runs["scope"] == "gold"].iloc[0]
    results = gold["results"]
    comparisons = judge_comparisons(engine, gold["id"])
    assert "withheld" not in results and out["judged"]["scopes"]["gold"]["withheld"] is False
    assert results["answers"] == {"1.0": 86, "2.0-hybrid": 86}
    assert results["prompts"] == {"AnswerRelevance": "answer_relevance@1", "Faithfulness": "faithfulness@1"}
    v1, v2 = results["versions"]["1.0"], results["versions"]["2.0-hybrid"]
    # The faithful answer is the top context's own sentence: every claim is supported.
    assert v1["Faithfulness"] == pytest.approx(1.0)
    assert v2["Faithfulness"] < 0.75
    assert 1 <= v2["AnswerRelevance"] <= 5 and 1 <= v1["AnswerRelevance"] <= 5
    measures = {c["measure"]: c for c in comparisons}
    assert {"judge:Faithfulness", "judge:AnswerRelevance"} <= set(measures)
    faith = measures["judge:Faithfulness"]
    assert faith["baseline"] == "handbook-search@1.0" and faith["candidate"] == "handbook-search@2.0-hybrid"
    assert faith["n"] == 86 and faith["delta"] < 0 and faith["losses"] > 0
    assert faith["decision"] == "regression"
    assert set(results["per_query"]["2.0-hybrid"]["Faithfulness"]) == set(results["per_query"]["1.0"]["Faithfulness"])
    production = runs[runs["scope"] == "production"].iloc[0]["results"]
    production_comparisons = judge_comparisons(engine, runs[runs["scope"] == "production"].iloc[0]["id"])
    assert {"judge:Faithfulness", "judge:AnswerRelevance"} <= {c["measure"] for c in production_comparisons}

    # Multiple comparisons: each query set's judge comparisons are one stated family, Holm-corrected.

    family = results["families"]["judge-gold"]
    assert family["size"] == len(comparisons) >= 5 and family["correction"] == "holm"
    assert all(c["family"] == "judge-gold" and c["family_size"] == family["size"] for c in comparisons)
    # the adjusted p is the decision's own p, Bonferroni across the family (the robust interval's rule)
    m = len(comparisons)
    assert [c["p_adjusted"] for c in comparisons] == pytest.approx(
        [min(1.0, m * (1.0 if c["decision_p"] is None else c["decision_p"])) for c in comparisons])
    assert production["families"]["judge-production"]["looks"] == {"handbook-search@2.0-hybrid": 1}
    later_runs = load_judge_runs(engine, day3.run_id).set_index("scope")
    later = later_runs.loc["production", "results"]
    assert later["families"]["judge-production"]["looks"] == {"handbook-search@2.0-hybrid": 2}
    later_comparisons = judge_comparisons(engine, later_runs.loc["production", "id"])
    assert later_comparisons and all(c["family"] == "judge-production" for c in later_comparisons)
    # The second look pools both days (the pooled test over every query since the restart); a measure the
    # pooled test cannot read (answer relevance, 1-5) spends less of alpha: a wider interval than at look 1.
    first = {c["measure"]: c for c in production_comparisons}
    pooled = [c for c in later_comparisons if c["interval_method"] == "pooled betting sequence"]
    assert {"judge:Faithfulness", "judge:P@3"} <= {c["measure"] for c in pooled}
    for c in later_comparisons:
        if c in pooled:
            assert c["pooled"]["looks"] == 2 and c["pooled"]["queries"] == first[c["measure"]]["n"] + c["n"]
            assert c["pooled"]["restart"] == "first look" and c["reasons"][-1].startswith("pooled over 2 days since")
        else:
            assert c["interval_level"] > first[c["measure"]]["interval_level"]

    report = (cfg2.report_dir / "cli_cli__2024-06-01" / "report.md").read_text()
    assert "judge:Faithfulness" in report and "judge:AnswerRelevance" in report
    assert (f"| judge family judge-gold | {family['size']} comparisons (every judge measure x candidate version), "
            "holm at alpha 0.05 |") in report
    assert "judge family judge-production" in report
    # what decided: the pooled test for the measures in [0, 1], the look counter for answer relevance (1-5)
    pooled_first = [c for c in production_comparisons if c.get("pooled")]
    assert pooled_first and all(c["measure"] != "judge:AnswerRelevance" for c in pooled_first)
    assert (f"handbook-search@2.0-hybrid pooled over 1 look since {pooled_first[0]['pooled']['since']} (first look), "
            f"{pooled_first[0]['pooled']['queries']:,} queries (") in report
    assert "handbook-search@2.0-hybrid look 1, alpha spent over the looks (" in report
    assert "judge:AnswerRelevance" in report.split("alpha spent over the looks (")[1].split(")")[0]


def test_a_version_without_answers_has_no_answer_measures(tmp_path):
    from evalops.config import load_config
    from evalops.pipeline import RunContext, run_local
    from evalops.pipeline.store import engine_for
    from evalops.warehouse.judgments import load_judge_runs

    env = {"EVALOPS_HOME": str(tmp_path), "EVALOPS_GOLD_SET": str(INCLUDE / "goldset"),
           "EVALOPS_KNOWLEDGE_BASE": str(INCLUDE / "knowledge_base"), "EVALOPS_REGISTRY": str(INCLUDE / "retrievers.yaml"),
           "EVALOPS_LOG_SAMPLE_SIZE": "0", "EVALOPS_JUDGE__KIND": "lexical"}
    cfg = load_config(tmp_path, environ=env)
    run_local(cfg, RunContext.for_day("2024-05-31"))
    (row,) = load_judge_runs(engine_for(cfg)).to_dict("records")
    assert row["results"]["answers"] == {}
    assert "Faithfulness" not in row["results"]["versions"]["1.0"]


def _gold_with_references(folder):
    """The sample gold set with a reference answer on every answerable query: the first sentence of
    the query's best judged document (so a version that retrieves that document recalls it)."""
    import json
    import shutil

    from evalops.formats import read_beir_corpus

    shutil.copytree(INCLUDE / "goldset", folder)
    corpus = read_beir_corpus(INCLUDE / "knowledge_base" / "corpus.jsonl")
    texts = dict(zip(corpus["doc_id"].astype(str), corpus["text"].astype(str)))
    best: dict[str, tuple[int, str]] = {}
    for line in (folder / "qrels" / "test.tsv").read_text().splitlines()[1:]:
        q, d, g = line.split("\t")
        if int(g) > best.get(q, (0, ""))[0] and d in texts:
            best[q] = (int(g), d)
    lines = (folder / "queries.jsonl").read_text().splitlines()
    out, referenced = [], {}
    for line in lines:
        record = json.loads(line)
        if record["_id"] in best:
            reference = texts[best[record["_id"]][1]].split(". ")[0] + "."
            record["metadata"]["reference_answer"] = referenced[record["_id"]] = reference
        out.append(json.dumps(record, ensure_ascii=False))
    (folder / "queries.jsonl").write_text("\n".join(out) + "\n")
    return folder, referenced


def test_context_recall_against_reference_answers_is_scored_compared_and_reported(tmp_path):
    from evalops.config import load_config
    from evalops.pipeline import RunContext, promote, run_local
    from evalops.pipeline.store import engine_for
    from evalops.warehouse.judgments import load_judge_runs

    gold, referenced = _gold_with_references(tmp_path / "goldset")
    env = {"EVALOPS_HOME": str(tmp_path), "EVALOPS_GOLD_SET": str(gold),
           "EVALOPS_KNOWLEDGE_BASE": str(INCLUDE / "knowledge_base"), "EVALOPS_REGISTRY": str(INCLUDE / "retrievers.yaml"),
           "EVALOPS_LOG_SAMPLE_SIZE": "0", "EVALOPS_JUDGE__KIND": "lexical", "EVALOPS_JUDGE__AGREEMENT_THRESHOLD": "-1"}
    cfg = load_config(tmp_path, environ=env)
    run_local(cfg, RunContext.for_day("2024-05-31"))
    promote(cfg, retriever="handbook-search", run="latest", reason="day one", promoted_by="tests")
    shipped = yaml.safe_load((INCLUDE / "retrievers.yaml").read_text())["retrievers"]
    truncated = next(e for e in shipped if e["version"] == "2.0-truncated")
    (tmp_path / "candidates.yaml").write_text(yaml.safe_dump({"retrievers": [{**truncated, "deployed": True}]}))
    cfg2 = load_config(tmp_path, environ={**env, "EVALOPS_RETRIEVERS_OVERLAY": str(tmp_path / "candidates.yaml")})
    day2 = RunContext.for_day("2024-06-01")
    run_local(cfg2, day2)

    (row,) = load_judge_runs(engine_for(cfg2), day2.run_id).to_dict("records")
    results = row["results"]
    assert "withheld" not in results
    assert results["prompts"] == {"ContextRecall@5": "context_recall@1"}
    for v in ("1.0", "2.0-truncated"):
        recalled = results["per_query"][v]["ContextRecall@5"]
        assert set(recalled) == set(referenced)  # only the queries with a reference answer
        assert all(0 <= x <= 1 for x in recalled.values())
    # The baseline retrieves most best documents; the half index loses some of them.
    assert results["versions"]["1.0"]["ContextRecall@5"] > results["versions"]["2.0-truncated"]["ContextRecall@5"]
    (recall,) = [c for c in judge_comparisons(engine_for(cfg2), row["id"]) if c["measure"] == "judge:ContextRecall@5"]
    assert recall["n"] == len(referenced) and recall["delta"] < 0
    report = (cfg2.report_dir / "cli_cli__2024-06-01" / "report.md").read_text()
    assert "judge:ContextRecall@5" in report and "context_recall@1" in report


def test_the_judged_production_queries_go_to_the_annotation_queue_once(tmp_path):
    import json

    from evalops.config import load_config
    from evalops.judges.generate import QUEUE_COLUMNS, queue_row, write_queue
    from evalops.pipeline import RunContext, run_local
    from evalops.pipeline.store import engine_for
    from evalops.warehouse.judgments import load_judge_runs

    env = make_home(tmp_path / "home", log_start="2024-05-29", log_days=4)
    env.update({"EVALOPS_JUDGE__KIND": "lexical", "EVALOPS_LOG_SAMPLE_SIZE": "30",
                "EVALOPS_JUDGE__PRODUCTION_QUERIES": "8"})
    cfg = load_config(tmp_path / "home", environ=env)
    queue = tmp_path / "home" / ".evalops" / "annotation" / "queue.jsonl"
    # A generated pair already waits in the queue: one schema, one file for every source.
    write_queue(queue, [queue_row(source="generated", query="What is the hotel limit in Tokyo?", doc_id="travel-04",
                                  proposed_grade=2, origin="tests", answer="USD 260 per night.")])
    day = RunContext.for_day("2024-05-31")
    run_local(cfg, day)
    rows = [json.loads(line) for line in queue.read_text().splitlines()]
    assert all(list(r) == list(QUEUE_COLUMNS) for r in rows)
    sampled = [r for r in rows if r["source"] == "sampled_query"]
    production = load_judge_runs(engine_for(cfg), day.run_id).set_index("scope").loc["production", "results"]
    assert production["annotation_queue"]["added"] == len(sampled) == 8
    assert all(r["doc_id"] is None and r["proposed_grade"] is None and r["answer"] is None and r["query_id"]
               and r["status"] == "pending" and "production sample 2024-05-31" in r["origin"] for r in sampled)
    assert [r["source"] for r in rows].count("generated") == 1
    before = queue.read_text()
    run_local(cfg, day)  # a re-run offers the same queries: nothing is queued twice
    assert queue.read_text() == before
    again = load_judge_runs(engine_for(cfg), day.run_id).set_index("scope").loc["production", "results"]
    assert again["annotation_queue"] == {**production["annotation_queue"], "added": 0}
    report = (cfg.report_dir / "cli_cli__2024-05-31" / "report.md").read_text()
    assert "annotation queue: 0 of the 8 judged production queries added as sampled_query rows" in report
