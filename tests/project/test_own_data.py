"""A project of your own, as a new user makes it: ``evalops init``, a BEIR collection copied beside it, two
versions (the built-in BM25 and a run file), ``evalops run``, ``history`` and ``report``, and the same
project under Airflow. On SciFact (binary, 300 queries) and the NFCorpus split (graded 1-2)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

from evalops.cli import main
from evalops.warehouse.config import url_for as warehouse_url_for

pytestmark = pytest.mark.slow

DAY = "2024-06-01"


def _registry(run_file: str) -> str:
    return f"""\
retrievers:
  - name: search
    version: "bm25"
    adapter: builtin
    deployed: true
    owner: me
    params: {{kind: bm25}}
  - name: search
    version: "run-file"
    adapter: run_file
    deployed: true
    owner: me
    params: {{path: {run_file}, missing: empty}}
"""


def make_project(tmp_path: Path, shared_data: Path, collection: str, run_file: str) -> Path:
    """``evalops init`` a folder, copy the collection elsewhere, and point the project at it."""
    data = tmp_path / "data" / collection
    shutil.copytree(shared_data / collection, data)
    root = tmp_path / "proj"
    result = CliRunner().invoke(main, ["init", str(root)])
    assert result.exit_code == 0, result.output
    text = (root / "evalops.yaml").read_text()
    text = text.replace('  path: "goldset"', f'  path: "{data}"').replace(
        '  path: "knowledge_base"', f'  path: "{data / "corpus.jsonl"}"')
    (root / "evalops.yaml").write_text(text)
    (root / "retrievers.yaml").write_text(_registry(str(data / "runs" / run_file)))
    return root


def cli(*args: str, cwd: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[int, str]:
    monkeypatch.chdir(cwd)
    result = CliRunner().invoke(main, list(args), catch_exceptions=False)
    return result.exit_code, result.output


@pytest.fixture(autouse=True)
def _clean_environment(monkeypatch):
    import os

    for key in list(os.environ):
        if key.startswith("EVALOPS_") and key != "EVALOPS_SHARED_DATA":
            monkeypatch.delenv(key)


@pytest.mark.parametrize("collection, run_file, grades", [
    ("scifact", "itsumida-te3large-zerank1-top15.trec", "1..1"),
    ("nfcorpus-orig-test", "bm25.trec", "1..2"),
])
def test_init_run_history_report_on_a_real_collection(tmp_path, shared_data, monkeypatch, collection, run_file,
                                                      grades):
    root = make_project(tmp_path, shared_data, collection, run_file)
    (root / "sub").mkdir()

    code, out = cli("validate", "--no-docs", cwd=root / "sub", monkeypatch=monkeypatch)
    assert code == 0, out
    assert "not applicable: each query type present (no query types)" in out

    code, out = cli("run", "--date", DAY, cwd=root / "sub", monkeypatch=monkeypatch)
    assert code == 0, out
    assert "report:" in out

    code, out = cli("history", "--format", "json", cwd=root, monkeypatch=monkeypatch)
    assert code == 0, out
    rows = json.loads(out)
    assert sorted((r["retriever"], r["version"]) for r in rows) == [("search", "bm25"), ("search", "run-file")]
    assert all(r["status"] in ("succeeded", "partial") for r in rows)

    code, report = cli("report", "--project", str(root), cwd=tmp_path, monkeypatch=monkeypatch)
    assert code == 0, report
    assert "contract gold_set gold" in report and "min_queries 50" in report
    assert "observed_grades" in report and "allowed_grades \"auto\"" in report
    assert "not applicable: each query type present (no query types)" in report
    assert "handbook" not in report  # the demo's retriever never reaches a project of your own

    from evalops.config import load_config
    from evalops.warehouse import create_warehouse_engine, get_run

    cfg = load_config(root, environ={})
    engine = create_warehouse_engine(warehouse_url_for(cfg))
    try:
        stored = [get_run(engine, r["run_id"]) for r in rows]
    finally:
        engine.dispose()
    for run in stored:  # the rules in force are recorded with every run
        assert run.contracts["rules"]["gold_sets"]["gold"]["allowed_grades"] == "auto"
        outcome = run.contracts["outcomes"]["gold_set:gold"]
        assert outcome["not_applicable"][0]["reason"] == "no query types"
        assert "..".join(map(str, outcome["rules"]["observed_grades"])) == grades


def test_bad_settings_write_nothing(tmp_path, shared_data, monkeypatch):
    root = make_project(tmp_path, shared_data, "scifact", "bm25.trec")
    yaml_path = root / "evalops.yaml"
    good = yaml_path.read_text()
    cases = [
        (good.replace("# rules:\n    # min_queries: 50", "rules:\n    min_queries: lots"),
         f"{yaml_path}:", "gold_set.rules.min_queries"),
        (good + "colour: blue\n", f"{yaml_path}:", "unknown setting 'colour'"),
    ]
    for text, where, what in cases:
        yaml_path.write_text(text)
        code, out = cli("run", "--date", DAY, cwd=root, monkeypatch=monkeypatch)
        assert code != 0 and where in out and what in out, out
        assert not (root / ".evalops" / "warehouse.db").exists()
    yaml_path.write_text(good)
    (root / "retrievers.yaml").write_text(_registry(str(tmp_path / "missing.trec")))
    code, out = cli("run", "--date", DAY, cwd=root, monkeypatch=monkeypatch)
    assert code != 0 and "missing.trec" in out, out
    from evalops.config import load_config
    from evalops.pipeline.store import warehouse_counts

    counts = warehouse_counts(load_config(root, environ={})) if (root / ".evalops" / "warehouse.db").exists() else {}
    assert counts.get("query_scores", 0) == 0 and counts.get("eval_runs", 0) == 0, counts


@pytest.mark.airflow
def test_the_project_runs_under_airflow(tmp_path, shared_data):
    from evalops.airflow.runner import run_steps_in_subprocess
    from evalops.config import load_config
    from evalops.pipeline.store import warehouse_counts

    root = make_project(tmp_path, shared_data, "nfcorpus-orig-test", "bm25.trec")
    results = run_steps_in_subprocess(
        root / "dags", [{"dag_id": "retrieval_eval", "logical_date": f"{DAY}T00:00:00+00:00"}],
        workdir=tmp_path / "airflow", log_path=tmp_path / "airflow.log",
        env={"EVALOPS_HOME": str(root), "EVALOPS_RETRY_DELAY_SECONDS": "1"}, inherit_evalops_env=False)
    assert [r["state"] for r in results] == ["success"], (tmp_path / "airflow.log").read_text()[-3000:]
    counts = warehouse_counts(load_config(root, environ={}))
    assert counts["eval_runs"] == 2 and counts["query_scores"] > 0


def _run_file_project(tmp_path: Path, shared_data: Path, run_files: dict[str, Path]) -> Path:
    """``evalops init`` over SciFact (read in place, not copied); one run_file version per item of
    ``run_files`` (version -> path), all deployed with ``missing: fail``."""
    data = shared_data / "scifact"
    root = tmp_path / "proj"
    result = CliRunner().invoke(main, ["init", str(root), "--gold-set", str(data),
                                       "--knowledge-base", str(data / "corpus.jsonl")])
    assert result.exit_code == 0, result.output
    (root / "retrievers.yaml").write_text(_run_file_registry(run_files))
    return root


def _run_file_registry(run_files: dict[str, Path]) -> str:
    return "retrievers:\n" + "".join(
        f"  - {{name: sf, version: '{v}', adapter: run_file, deployed: true, owner: me, "
        f"params: {{path: '{p}', missing: fail}}}}\n" for v, p in run_files.items())


def test_a_partial_run_file_is_read_for_every_query_and_fails_with_the_true_count(tmp_path, shared_data,
                                                                                   monkeypatch):
    """The circuit breaker is for remote services: a run file answering 30 of the 300 queries fails 270 of
    them as absent, none 'not called', and the 30 it answers are scored."""
    from evalops.config import load_config
    from evalops.warehouse import create_warehouse_engine, list_alerts, load_scores
    from evalops.warehouse.history import latest_runs

    runs = shared_data / "scifact" / "runs"
    partial = runs / "itsumida-te3large-zerank1-top15.trec"
    root = _run_file_project(tmp_path, shared_data, {"bm25": runs / "bm25.trec", "partial": partial})
    code, out = cli("run", "--date", DAY, cwd=root, monkeypatch=monkeypatch)
    assert code == 5 and "sf@partial gold (270 of 300 queries failed" in out and "could not be scored" in out, out
    engine = create_warehouse_engine(warehouse_url_for(load_config(root, environ={})))
    try:
        (message,) = list_alerts(engine)["message"]  # the retriever_failed alert, as the notifiers send it
        assert "270 of 300 queries failed (90.0%), above the failure budget of 2.0%" in message, message
        assert f"is absent from the run file {partial} (set `missing: empty`" in message
        assert "not called" not in message and "circuit breaker" not in message

        monkeypatch.setenv("EVALOPS_FAILURE_BUDGET", "0.95")  # within the budget the answered queries are kept
        code, out = cli("run", "--date", "2024-06-02", cwd=root, monkeypatch=monkeypatch)
        assert code == 0, out
        rows = latest_runs(engine, statuses=("partial", "succeeded"))
        row = rows[rows["version"] == "partial"].iloc[0]
        assert (row["status"], int(row["n_queries"]), int(row["n_failed"])) == ("partial", 300, 270)
        scored = set(load_scores(engine, int(row["run_id"]))["query_id"])
    finally:
        engine.dispose()
    answered = {line.split()[0] for line in partial.read_text().splitlines()}
    assert len(answered) == 30 and scored == answered


def test_a_malformed_run_file_is_bad_input_named_by_line_and_writes_nothing(tmp_path, shared_data, monkeypatch):
    from evalops.config import load_config
    from evalops.pipeline.store import warehouse_counts

    runs = shared_data / "scifact" / "runs"
    root = _run_file_project(tmp_path, shared_data, {"bm25": runs / "bm25.trec"})
    code, out = cli("run", "--date", DAY, cwd=root, monkeypatch=monkeypatch)
    assert code == 0, out
    before = warehouse_counts(load_config(root, environ={}))
    assert before["eval_runs"] == 1 and before["query_scores"] > 0

    lines = (runs / "bm25.trec").read_text().splitlines(keepends=True)
    fields = lines[49].split()
    lines[49] = " ".join([*fields[:4], "abc", *fields[5:]]) + "\n"
    bad = tmp_path / "bad.trec"
    bad.write_text("".join(lines))
    binary = tmp_path / "run.bin"
    binary.write_bytes(b"\x00\xff\xfe\x80 not a run file\x81\n")
    for path, line, what in [(bad, 50, "score: 'abc' is not a number"), (binary, 1, "expected 6 or more columns")]:
        (root / "retrievers.yaml").write_text(_run_file_registry({"bm25": runs / "bm25.trec", "bad": path}))
        code, out = cli("run", "--date", "2024-06-02", cwd=root, monkeypatch=monkeypatch)
        assert code == 3, out  # ExitCode.BAD_INPUT, not VERSION_FAILED
        assert out.startswith(f"error: {path}:{line}: {what}"), out
        assert "set deployed: false on retriever sf@bad" in out and "Traceback" not in out
        assert "could not be scored" not in out and "failed queries" not in out
        assert warehouse_counts(load_config(root, environ={})) == before  # history untouched


def test_validate_says_a_run_file_does_not_answer_the_gold_queries(tmp_path, shared_data, monkeypatch):
    """`validate` predicts what `run` does with a run file: 270 of 300 gold queries absent under
    `missing: fail` fails it (exit 3, the file, the count and the fix named); under `missing: empty` the partial
    file is a warning, and a file for other queries (every id renamed) fails."""
    runs = shared_data / "scifact" / "runs"
    partial = runs / "itsumida-te3large-zerank1-top15.trec"
    root = _run_file_project(tmp_path, shared_data, {"bm25": runs / "bm25.trec", "partial": partial})
    code, out = cli("validate", "--no-docs", cwd=root, monkeypatch=monkeypatch)
    assert code == 3, out
    assert "run files contract FAILED 1 of 2 expectations" in out, out
    assert "270 of 300 rows failed" in out and str(partial) in out and "set `missing: empty` on sf@partial" in out

    registry = (root / "retrievers.yaml").read_text().replace("missing: fail", "missing: empty")
    (root / "retrievers.yaml").write_text(registry)
    code, out = cli("validate", "--no-docs", cwd=root, monkeypatch=monkeypatch)
    assert code == 0, out
    assert "warning: sf@partial" in out and "answers 30 of 300 gold queries" in out, out

    renamed = tmp_path / "renamed.trec"
    renamed.write_text("".join("x" + line for line in (runs / "bm25.trec").read_text().splitlines(keepends=True)))
    (root / "retrievers.yaml").write_text(registry.replace(str(partial), str(renamed)))
    code, out = cli("validate", "--no-docs", cwd=root, monkeypatch=monkeypatch)
    assert code == 3 and "sf@partial answers none of them" in out and "Traceback" not in out, out
