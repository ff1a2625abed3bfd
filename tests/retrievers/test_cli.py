"""``evalops retrieve`` and ``evalops retrievers`` through click's runner."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from evalops.cli import main
from evalops.exitcodes import ExitCode


@pytest.fixture
def beir(tmp_path, small_corpus):
    folder = tmp_path / "kb"
    folder.mkdir()
    with open(folder / "corpus.jsonl", "w", encoding="utf-8") as fh:
        for r in small_corpus.itertuples():
            fh.write(json.dumps({"_id": r.doc_id, "title": r.title, "text": r.text}, ensure_ascii=False) + "\n")
    queries = {"q1": "refund unopened product", "q2": "hotel price per night", "q3": "出差住宿标准", "q9": "not judged"}
    (folder / "queries.jsonl").write_text("".join(json.dumps({"_id": q, "text": t}) + "\n" for q, t in queries.items()))
    (folder / "qrels.tsv").write_text("query-id\tcorpus-id\tscore\nq1\trefund-1\t1\nq2\ttravel-2\t1\nq3\tzh-travel\t1\n")
    return folder


def run(*args):
    return CliRunner().invoke(main, list(args), catch_exceptions=False)


def test_retrieve_a_builtin_writes_a_trec_run(beir, tmp_path):
    out = tmp_path / "bm25.trec"
    res = run("retrieve", "bm25", "--dataset", str(beir), "-k", "2", "-o", str(out))
    assert res.exit_code == 0, res.stderr
    lines = [line.split() for line in out.read_text().splitlines()]
    assert {row[0] for row in lines} == {"q1", "q2", "q3"}  # the judged queries only
    assert [row[2] for row in lines if row[0] == "q3"][0] == "zh-travel"
    assert all(row[5] == "bm25@builtin" and row[1] == "Q0" for row in lines)
    assert "bm25@builtin: 3 of 3 queries answered" in res.stderr


def test_retrieve_to_stdout(beir):
    res = run("retrieve", "tfidf", "--dataset", str(beir), "-k", "1", "--tag", "mine")
    assert res.exit_code == 0
    assert res.stdout.splitlines()[0].startswith("q1 Q0 refund-1 1 ") and res.stdout.split()[5] == "mine"


def http_registry(tmp_path, url):
    p = tmp_path / "mine.yaml"
    p.write_text(
        "retrievers:\n"
        f"  - {{name: svc, version: '3', adapter: http, deployed: true, owner: me, params: {{url: '{url}', max_retries: 0}}}}\n"
    )
    return p


def test_retrieve_a_registered_service_reports_a_partial_run(beir, tmp_path, service):
    def handler(body, headers):
        if body["query_id"] == "q2":
            return 500, {"error": "index shard down"}
        return 200, {"results": [{"doc_id": "refund-1", "score": 1.0}]}

    reg = http_registry(tmp_path, service(handler).url)
    out = tmp_path / "svc.trec"
    res = run("retrieve", "svc@3", "--dataset", str(beir), "--registry", str(reg), "-o", str(out), "--failure-budget", "0.5")
    assert res.exit_code == 0, res.stderr
    assert {line.split()[0] for line in out.read_text().splitlines()} == {"q1", "q3"}
    assert "warning: partial run: 1 failed queries were left out (not scored as 0): q2" in res.stderr
    assert "index shard down" in res.stderr


def test_retrieve_over_the_failure_budget_fails_loudly(beir, tmp_path, service):
    reg = http_registry(tmp_path, service(lambda body, h: (503, {"error": "down"})).url)
    out = tmp_path / "svc.trec"
    res = run("retrieve", "svc", "--dataset", str(beir), "--registry", str(reg), "-o", str(out))
    assert res.exit_code == ExitCode.VERSION_FAILED
    assert res.stderr.startswith("error: retriever 'svc@3': 3 of 3 queries failed (100.0%), above the failure budget of 2.0%")
    assert not out.exists()


def test_unknown_retriever_and_bad_registry(beir, tmp_path):
    res = run("retrieve", "nope", "--dataset", str(beir))
    assert res.exit_code == ExitCode.BAD_INPUT and "unknown retriever 'nope'" in res.stderr and "built-in: bm25, tfidf" in res.stderr
    bad = tmp_path / "bad.yaml"
    bad.write_text("retrievers:\n  - {name: x}\n")
    res = run("retrievers", "--registry", str(bad))
    assert res.exit_code == ExitCode.BAD_INPUT and f"{bad}:2: retriever is missing 'version'" in res.stderr


def test_retrievers_lists_the_registry(tmp_path, repo_root, monkeypatch):
    monkeypatch.chdir(repo_root)
    monkeypatch.delenv("EVALOPS_RETRIEVERS_OVERLAY", raising=False)
    user = http_registry(tmp_path, "http://127.0.0.1:9/s")
    res = run("retrievers", "--registry", str(user), "--format", "json")
    keys = [(r["name"], r["version"], r["deployed"]) for r in json.loads(res.stdout)["retrievers"]]
    assert ("handbook-search", "1.0", True) in keys and ("svc", "3", True) in keys
    res = run("retrievers", "--deployed")
    lines = res.stdout.splitlines()
    assert lines[0].split() == ["name", "version", "adapter", "deployed", "owner", "source"]
    assert [line.split()[:2] for line in lines[1:]] == [["handbook-search", "1.0"]]
    res = run("retrievers", "--format", "csv")
    assert res.stdout.splitlines()[0] == "name,version,adapter,deployed,owner,source"
