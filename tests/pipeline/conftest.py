"""Pipeline tests configure evalops explicitly (``load_config(home, environ=...)``); a developer's own
``EVALOPS_*`` variables must not leak in (the warehouse URL, for one, is also read from the process)."""

from __future__ import annotations

import os

import pytest


@pytest.fixture(autouse=True)
def _no_evalops_environment(monkeypatch):
    for key in list(os.environ):
        if key.startswith("EVALOPS_") and key != "EVALOPS_SHARED_DATA":
            monkeypatch.delenv(key)


@pytest.fixture
def planted_project(tmp_path, repo_root):
    """A project over the sample knowledge base whose retriever ``name`` has two versions read from TREC runs
    (``1.0`` deployed baseline, ``2.0`` candidate, both deployed): ``make(gold, baseline, candidate, measures)``
    writes it, runs day 1, promotes 1.0 and runs day 2; returns (config, day-2 context, day-2 result)."""
    import json

    from evalops.config import load_config
    from evalops.goldset import save_gold_set

    kb = repo_root / "include" / "knowledge_base"
    pads = [json.loads(line)["_id"] for line in (kb / "corpus.jsonl").read_text().splitlines()[:12]]

    def write_run(path, ranked):
        with path.open("w") as out:
            for q, docs in ranked.items():
                for r, d in enumerate(docs):
                    out.write(f"{q} Q0 {d} {r + 1} {100 - r} planted\n")

    def make(gold, baseline, candidate, measures, name="planted", extra=""):
        from evalops.pipeline import RunContext, run_local
        from evalops.pipeline.promotion import promote

        save_gold_set(gold, tmp_path / "gold")
        write_run(tmp_path / "baseline.trec", baseline)
        write_run(tmp_path / "candidate.trec", candidate)
        entry = "  - {{name: {n}, version: '{v}', adapter: run_file, deployed: true, owner: s, params: {{path: {p}}}}}\n"
        (tmp_path / "retrievers.yaml").write_text(
            "retrievers:\n" + entry.format(n=name, v="1.0", p="baseline.trec")
            + entry.format(n=name, v="2.0", p="candidate.trec"))
        (tmp_path / "evalops.yaml").write_text(
            f"gold_set: {{path: gold}}\nknowledge_base: {{path: {kb}}}\nregistry: retrievers.yaml\n"
            f"measures: [{', '.join(measures)}]\nlog_sample_size: 0\n{extra}")
        cfg = load_config(tmp_path, environ={})
        run_local(cfg, RunContext.for_day("2024-06-01"))
        promote(cfg, retriever=name, version="1.0", promoted_by="test", reason="the deployed version")
        day2 = RunContext.for_day("2024-06-02")
        return cfg, day2, run_local(cfg, day2)

    make.pads = pads
    return make


def _write_beir(folder, prefix: str, qrels_name: str) -> None:
    """Two queries ``{prefix}0``, ``{prefix}1``, each judging one of the tiny project's documents."""
    import json

    folder.mkdir(parents=True, exist_ok=True)
    (folder / "queries.jsonl").write_text(
        "".join(json.dumps({"_id": f"{prefix}{i}", "text": f"topic {i}"}) + "\n" for i in range(2)))
    qrels = folder / qrels_name
    qrels.parent.mkdir(parents=True, exist_ok=True)
    qrels.write_text("query-id\tcorpus-id\tscore\n" + "".join(f"{prefix}{i}\td{i}\t1\n" for i in range(2)))


@pytest.fixture
def tiny_project(tmp_path):
    """A project of three documents and two-query gold sets, made ready for ``plan_run`` without scoring
    anything: ``make(versions, gold_sets=("gold",))`` writes retriever ``r`` with ``versions`` (version ->
    deployed), migrates the warehouse, snapshots the knowledge base and validates the gold sets for day
    2024-06-01; returns (config, run context, snapshot id, {gold set: version}). ``make.sample()`` writes a
    judged production sample and returns the ``log_sample`` that ``sample_query_logs`` would."""
    import json

    from evalops.config import load_config
    from evalops.pipeline import RunContext
    from evalops.pipeline.inputs import snapshot_knowledge_base, validate_inputs
    from evalops.pipeline.store import migrate_warehouse

    def make(versions, gold_sets=("gold",)):
        kb = tmp_path / "kb"
        kb.mkdir()
        (kb / "corpus.jsonl").write_text("".join(
            json.dumps({"_id": f"d{i}", "title": f"doc {i}", "text": f"text about topic {i}"}) + "\n"
            for i in range(3)))
        for name in gold_sets:
            _write_beir(tmp_path / name, name, "qrels/test.tsv")
        entry = "  - {{name: r, version: '{v}', adapter: builtin, deployed: {d}, owner: x, params: {{kind: bm25}}}}\n"
        (tmp_path / "retrievers.yaml").write_text("retrievers:\n" + "".join(
            entry.format(v=v, d=str(deployed).lower()) for v, deployed in versions.items()))
        (tmp_path / "evalops.yaml").write_text(
            "gold_sets:\n" + "".join(f"  {name}: {{path: {name}, rules: {{min_queries: 1}}}}\n" for name in gold_sets)
            + "knowledge_base: {path: kb}\nregistry: retrievers.yaml\nlog_sample_size: 0\n")
        cfg = load_config(tmp_path, environ={})
        run = RunContext.for_day("2024-06-01")
        migrate_warehouse(cfg, run)
        snapshot_id = snapshot_knowledge_base(cfg, run)
        return cfg, run, snapshot_id, validate_inputs(cfg, run, snapshot_id)

    def sample():
        folder = tmp_path / "sample"
        _write_beir(folder, "p", "weak_qrels.tsv")
        return {"folder": str(folder), "queries": 2, "judged": 2, "version": "sample-2024-06-01"}

    make.sample = sample
    return make
