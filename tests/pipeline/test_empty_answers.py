"""An answer with no document is scored 0 and said beside the coverage: a run file that covers 30 of SciFact's
300 judged queries under ``missing: empty`` answers every query, 270 of them with nothing, and the report and
the stored comparison say so (they said "every judged query was answered by both", while ``evalops compare``
of the same files says ``partial_run``)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from evalops.cli import main
from evalops.data import Run
from evalops.pipeline.comparing import _coverage
from evalops.retrievers.scoring import RetrievalResult

pytestmark = pytest.mark.slow

DAY1, DAY2 = "2024-06-01", "2024-06-02"


def test_empty_ids_are_the_answered_queries_with_no_document():
    run = Run(["a", "a", "c"], ["d1", "d2", "d3"], [2.0, 1.0, 1.0])
    result = RetrievalResult(run=run, query_ids=("a", "b", "c", "e"), failed={"e": "timeout"}, k=10,
                             failure_budget=1.0, wall_seconds=0.0)
    assert result.empty_ids == ["b"]  # "e" failed: unanswered, not empty


def test_coverage_says_how_many_answers_held_no_document():
    plain = _coverage(300, 300, 300)
    assert "held no document" not in plain.describe()
    said = _coverage(300, 300, 300, candidate_empty=270)
    assert said.describe().endswith("every judged query was answered by both; the candidate's answers to 270 of "
                                    "them held no document (scored 0 on every measure: a run file's absent "
                                    "queries under `missing: empty`, or a retriever that found nothing)")
    assert "baseline's" not in said.describe()
    assert "the baseline's answers to 5 of them" in _coverage(300, 300, 300, baseline_empty=5).describe()
    assert "baseline's" not in _coverage(300, 300, 300, baseline_empty=None).describe()  # a stored run: unknown


def _project(home: Path, scifact: Path, versions: dict[str, str]) -> None:
    entries = "".join(f"  - {{name: search, version: '{v}', adapter: run_file, deployed: true, owner: me, "
                      f"params: {{path: '{p}', missing: empty}}}}\n" for v, p in versions.items())
    (home / "retrievers.yaml").write_text("retrievers:\n" + entries)
    (home / "evalops.yaml").write_text(
        f"gold_set:\n  path: '{scifact}'\nknowledge_base: {{path: '{scifact / 'corpus.jsonl'}'}}\n"
        f"registry: retrievers.yaml\nmeasures: [nDCG@10]\nlog_sample_size: 0\n"
        f"warehouse_url: 'sqlite:///{home / 'warehouse.db'}'\n")


def test_a_run_file_covering_a_tenth_of_the_queries_says_so_in_the_report(shared_data, tmp_path):
    scifact = shared_data / "scifact"
    bm25 = scifact / "runs" / "bm25.trec"
    lines = bm25.read_text().splitlines()
    kept = sorted({line.split()[0] for line in lines})[:30]
    partial = tmp_path / "partial.trec"
    partial.write_text("".join(f"{line}\n" for line in lines if line.split()[0] in set(kept)))
    judged = {line.split("\t")[0] for line in (scifact / "qrels.tsv").read_text().splitlines()[1:]}
    empty = len(judged - set(kept))
    assert empty > 200

    home = tmp_path / "proj"
    home.mkdir()
    _project(home, scifact, {"1.0": str(bm25)})
    day1 = CliRunner().invoke(main, ["run", "--project", str(home), "--date", DAY1], catch_exceptions=False)
    assert day1.exit_code == 0, day1.output
    promoted = CliRunner().invoke(main, ["promote", "search", "1.0", "--project", str(home), "--reason", "day 1",
                                         "--by", "tests"])
    assert promoted.exit_code == 0, promoted.output
    _project(home, scifact, {"1.0": str(bm25), "partial": str(partial)})
    day2 = CliRunner().invoke(main, ["gate", "--project", str(home), "--date", DAY2, "--format", "json",
                                     "--junit-xml", str(tmp_path / "junit.xml")], catch_exceptions=False)
    payload = json.loads(day2.output[day2.output.index("{"):])
    said = f"the candidate's answers to {empty} of them held no document"
    report = (Path(payload["report"]).parent / "report.md").read_text()
    assert said in report
    from evalops.config import load_config
    from evalops.pipeline.store import engine_for
    from evalops.warehouse import load_ab_tests

    stored = load_ab_tests(engine_for(load_config(home, environ={})))
    [record] = stored[stored["family"] == "gold"]["record"].tolist()
    assert said in json.dumps(record)

