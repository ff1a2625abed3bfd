"""A merge whose gold set breaks its contract writes nothing: the judgments file, the warehouse's versions
and merges stay as they were."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from evalops.cli import main
from evalops.judges.generate import queue_row, write_queue

pytestmark = pytest.mark.slow  # the gold-set contract runs Great Expectations


@pytest.fixture
def project(tmp_path, monkeypatch):
    import os

    for key in [k for k in os.environ if k.startswith("EVALOPS_") and k != "EVALOPS_SHARED_DATA"]:
        monkeypatch.delenv(key)
    gold = tmp_path / "gold"
    (gold / "qrels").mkdir(parents=True)
    (gold / "queries.jsonl").write_text("".join(json.dumps({"_id": f"q{i}", "text": f"query {i}"}) + "\n"
                                                for i in range(3)))
    (gold / "qrels" / "test.tsv").write_text("query-id\tcorpus-id\tscore\n" + "".join(
        f"q{i}\td{i}\t1\n" for i in range(3)))
    (tmp_path / "corpus.jsonl").write_text("".join(json.dumps({"_id": f"d{i}", "title": "", "text": f"doc {i}"})
                                                   + "\n" for i in range(5)))
    (tmp_path / "evalops.yaml").write_text(
        f"gold_set: {{path: '{gold}', rules: {{min_queries: 1}}}}\n"
        f"knowledge_base: {{path: '{tmp_path / 'corpus.jsonl'}'}}\n"
        f"measures: [nDCG@10]\nlog_sample_size: 0\nwarehouse_url: 'sqlite:///{tmp_path / 'warehouse.db'}'\n")
    from evalops.config import load_config
    from evalops.pipeline.store import engine_for
    from evalops.warehouse import upgrade
    from evalops.warehouse.labels import record_label

    cfg = load_config(tmp_path, environ={})
    engine = engine_for(cfg)
    upgrade(engine)
    rows = [queue_row(source="hole", query="query 0", query_id="q0", doc_id="d3", proposed_grade=None, origin="x"),
            queue_row(source="hole", query="query 1", query_id="q1", doc_id="gone", proposed_grade=None, origin="x")]
    write_queue(tmp_path / ".evalops" / "annotation" / "queue.jsonl", rows)
    for row in rows:
        record_label(engine, row, annotator="ana", grade=2)
    return {"home": tmp_path, "qrels": gold / "qrels" / "test.tsv", "engine": engine}


def test_a_judged_document_missing_from_the_knowledge_base_stops_the_merge(project):
    before = project["qrels"].read_text()
    result = CliRunner().invoke(main, ["gold", "merge", "--project", str(project["home"]), "--by", "carol"])
    assert result.exit_code == 3, result.output
    assert "gone" in result.output  # the contract names the judged document the knowledge base lacks
    assert project["qrels"].read_text() == before
    from evalops.warehouse.labels import load_gold_set_merges

    assert load_gold_set_merges(project["engine"]) == []
    assert not (project["home"] / ".evalops" / "gold").exists()
