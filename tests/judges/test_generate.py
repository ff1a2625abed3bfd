"""Generated evaluation sets: drafts de-duplicated against the gold set, written to the annotation queue only."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from evalops.errors import InputError
from evalops.judges import LexicalJudge, OpenAIJudge, OpenAISettings
from evalops.judges.fakeserver import FakeChatServer, Reply, completion
from evalops.judges.generate import QUEUE_COLUMNS, draft_pairs, queue_row, write_queue
from tests.dags.conftest import INCLUDE

DOCS = {"d1": "Vitamin D protects bone. It is made in skin.", "d2": "Iron prevents anaemia in adults.",
        "d3": "Vitamin D protects bone. Another sentence."}


def test_drafts_are_deduplicated_against_gold_and_each_other():
    gold = ["What does the document say about iron prevents anaemia in adults?"]
    drafts = draft_pairs(LexicalJudge(), DOCS, gold)
    assert [r["doc_id"] for r in drafts.rows] == ["d1"]
    assert drafts.dropped == {"duplicates a gold query": 1, "duplicates another draft": 1}
    row = drafts.rows[0]
    assert set(row) == set(QUEUE_COLUMNS) and row["source"] == "generated" and row["proposed_grade"] == 2
    assert row["answer"] == "Vitamin D protects bone." and "lexical (offline, no model)" in row["origin"]


def test_a_malformed_draft_is_missing_not_invented():
    with FakeChatServer(script=[Reply(200, completion('{"question": ""}'))]) as server:
        settings = OpenAISettings(base_url=server.url, model="fake-judge", max_concurrency=1)  # replies in order
        with OpenAIJudge(settings, api_key="k") as judge:
            drafts = draft_pairs(judge, {"d2": DOCS["d2"], "d1": DOCS["d1"]}, [])
    assert "d2" in drafts.missing and "non-empty strings" in drafts.missing["d2"]
    assert [r["doc_id"] for r in drafts.rows] == ["d1"]


def test_the_queue_has_one_schema_is_idempotent_and_never_the_gold_set(tmp_path):
    queue = tmp_path / "queue.jsonl"
    rows = [queue_row(source="generated", query="q one", doc_id="d1", proposed_grade=2, origin="x"),
            queue_row(source="sampled_query", query="q two", query_id="p7", doc_id=None, proposed_grade=None,
                      origin="log sample")]
    assert write_queue(queue, rows) == 2
    assert write_queue(queue, rows) == 0
    lines = [json.loads(line) for line in queue.read_text().splitlines()]
    assert [set(r) for r in lines] == [set(QUEUE_COLUMNS)] * 2 and {r["source"] for r in lines} == {"generated",
                                                                                                "sampled_query"}
    gold = tmp_path / "goldset"
    gold.mkdir()
    with pytest.raises(InputError, match="must not be inside the gold set"):
        write_queue(gold / "queue.jsonl", rows, gold_paths=[gold])
    with pytest.raises(InputError, match="source must be one of"):
        queue_row(source="gold", query="q", doc_id=None, proposed_grade=None, origin="x")


def test_generate_queries_command(tmp_path, monkeypatch):
    from evalops.cli import main

    for key in ("EVALOPS_HOME", "EVALOPS_CONFIG"):
        monkeypatch.delenv(key, raising=False)
    (tmp_path / "evalops.yaml").write_text(
        f"gold_set:\n  path: {INCLUDE / 'goldset'}\nknowledge_base:\n  path: {INCLUDE / 'knowledge_base'}\n")
    gold_before = sorted((p.name, p.stat().st_mtime_ns) for p in (INCLUDE / "goldset").rglob("*"))
    result = CliRunner().invoke(main, ["generate-queries", "--project", str(tmp_path), "-n", "8", "--judge", "lexical"])
    assert result.exit_code == 0, result.output
    out = json.loads(result.output)
    assert out["documents"] == 8 and out["added"] == out["drafted"] > 0
    lines = (tmp_path / ".evalops" / "annotation" / "queue.jsonl").read_text().splitlines()
    assert len(lines) == out["added"] and all(json.loads(x)["source"] == "generated" for x in lines)
    again = CliRunner().invoke(main, ["generate-queries", "--project", str(tmp_path), "-n", "8", "--judge", "lexical"])
    assert json.loads(again.output)["added"] == 0
    assert sorted((p.name, p.stat().st_mtime_ns) for p in (INCLUDE / "goldset").rglob("*")) == gold_before
