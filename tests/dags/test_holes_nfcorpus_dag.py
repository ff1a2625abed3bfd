"""The retrieval DAG raises the same alerts as ``evalops run`` on NFCorpus's sparse judgments.

A small version of ``tests/pipeline/test_holes_nfcorpus.py``: the built-in BM25 as the baseline (day 1,
then ``promote_baseline``), and on day 2 two run-file candidates made from BM25's own ranking: ``half-empty``
(every other query left out, ``missing: empty``) and ``shuffled`` (each query's top 10 shuffled, seeded).
The DAGs run with ``dag.test()`` in a child process (``evalops.airflow.runner``) on one project; ``evalops
run`` runs the same two days on a twin project; both warehouses must hold one alert per candidate, of the
same kind, from the same decided comparison.
"""

from __future__ import annotations

import datetime as dt
import json
import random
from pathlib import Path

import pytest
from click.testing import CliRunner

from tests.dags.conftest import DAGS

pytestmark = [pytest.mark.airflow, pytest.mark.slow]

DAY1, DAY2 = (dt.datetime(2024, 6, d, tzinfo=dt.timezone.utc) for d in (1, 2))
BM25 = "adapter: builtin, params: {kind: bm25, k1: 0.9, b: 0.4}"
# what each candidate is today (nDCG@10, a family of two): the alert kind
EXPECTED = {"half-empty": "regression", "shuffled": "regression"}


def _cli(*args):
    from evalops.cli import main

    return CliRunner().invoke(main, [str(a) for a in args], catch_exceptions=False)


def _registry(path: Path, entries: dict[str, str], deployed: bool = True) -> Path:
    path.write_text("retrievers:\n" + "".join(
        f"  - {{name: search, version: '{v}', deployed: {str(deployed).lower()}, owner: me, {spec}}}\n"
        for v, spec in entries.items()))
    return path


def _project(home: Path, data: Path) -> Path:
    home.mkdir(parents=True)
    (home / "evalops.yaml").write_text(
        f"gold_set: {{path: '{data}'}}\nknowledge_base: {{path: '{data / 'corpus.jsonl'}'}}\n"
        f"registry: retrievers.yaml\nmeasures: [nDCG@10]\nlog_sample_size: 0\n"
        f"warehouse_url: 'sqlite:///{home / 'warehouse.db'}'\n")
    _registry(home / "retrievers.yaml", {"1.0": BM25})
    return home


def _variants(bm25: Path, root: Path) -> dict[str, str]:
    ranked: dict[str, list[tuple[int, str, str]]] = {}
    for line in bm25.read_text().splitlines():
        q, _, d, rank, score, *_ = line.split()
        ranked.setdefault(q, []).append((int(rank), d, score))
    queries = sorted(ranked)
    half, shuffled = root / "half.trec", root / "shuffled.trec"
    with half.open("w") as out:
        for q in queries[::2]:
            out.writelines(f"{q} Q0 {d} {r} {s} half\n" for r, d, s in sorted(ranked[q]))
    rng = random.Random(7)
    with shuffled.open("w") as out:
        for q in queries:
            docs = [d for _, d, _ in sorted(ranked[q])]
            top = docs[:10]
            rng.shuffle(top)
            out.writelines(f"{q} Q0 {d} {r + 1} {1000 - r} shuffled\n" for r, d in enumerate(top + docs[10:]))
    return {"half-empty": f"adapter: run_file, params: {{path: '{half}', missing: empty}}",
            "shuffled": f"adapter: run_file, params: {{path: '{shuffled}', missing: empty}}"}


def _alerts_and_decisions(home: Path) -> tuple[dict[str, list[str]], dict[str, dict]]:
    from evalops.config import load_config
    from evalops.pipeline.store import engine_for
    from evalops.warehouse import get_run, list_alerts, load_ab_tests

    engine = engine_for(load_config(home, environ={}))
    alerts: dict[str, list[str]] = {}
    for a in list_alerts(engine, since=DAY2.date()).itertuples(index=False):
        alerts.setdefault(a.version, []).append(a.kind)
    frame = load_ab_tests(engine)
    decided = {get_run(engine, int(row["candidate_run_id"])).key.version: row for row in frame.to_dict("records")}
    return alerts, decided


def test_the_dag_raises_the_alerts_evalops_run_raises(shared_data, tmp_path, monkeypatch):
    import os

    from evalops.airflow.runner import run_steps_in_subprocess

    data = shared_data / "nfcorpus-orig-test"
    if not data.is_dir():
        pytest.skip(f"NFCorpus not found at {data}")
    for key in [k for k in os.environ if k.startswith("EVALOPS_") and k != "EVALOPS_SHARED_DATA"]:
        monkeypatch.delenv(key)
    dag_home, cli_home = _project(tmp_path / "dag", data), _project(tmp_path / "cli", data)
    bm25 = tmp_path / "bm25.trec"
    got = _cli("retrieve", "search@1.0", "--dataset", data, "-o", bm25, "--registry", cli_home / "retrievers.yaml")
    assert got.exit_code == 0, got.output
    candidates = _variants(bm25, tmp_path)

    # the DAGs: day 1, promote_baseline, day 2 with the candidates deployed by an overlay registry
    overlay = _registry(tmp_path / "day2.yaml", candidates)
    steps = [
        {"dag_id": "retrieval_eval", "logical_date": DAY1.isoformat(), "env": {"EVALOPS_RETRIEVERS_OVERLAY": None}},
        {"dag_id": "promote_baseline", "logical_date": DAY1.isoformat(), "env": {"EVALOPS_RETRIEVERS_OVERLAY": None},
         "conf": {"retriever": "search", "run": "latest", "version": "1.0", "reason": "day 1"}},
        {"dag_id": "retrieval_eval", "logical_date": DAY2.isoformat(),
         "env": {"EVALOPS_RETRIEVERS_OVERLAY": str(overlay)}},
    ]
    results = run_steps_in_subprocess(DAGS, steps, workdir=tmp_path / "airflow", log_path=tmp_path / "airflow.log",
                                      env={"EVALOPS_HOME": str(dag_home)}, inherit_evalops_env=False)
    assert [(r["dag_id"], r["state"]) for r in results] == [
        ("retrieval_eval", "success"), ("promote_baseline", "success"), ("retrieval_eval", "success")]

    # evalops run: the same two days on the twin project
    assert _cli("run", "--project", cli_home, "--date", DAY1.date()).exit_code == 0
    assert _cli("promote", "search", "1.0", "--project", cli_home, "--reason", "day 1", "--by", "t").exit_code == 0
    _registry(cli_home / "retrievers.yaml", {"1.0": BM25, **candidates})
    day2 = _cli("run", "--project", cli_home, "--date", DAY2.date(), "--format", "json")
    assert day2.exit_code == 0, day2.output
    printed = json.loads(day2.output[day2.output.index("{"):])
    cli_kinds = sorted((a["dedup_key"].split("|")[2], a["kind"]) for a in printed["alerts"])
    assert cli_kinds == sorted(EXPECTED.items())

    dag_alerts, dag_decided = _alerts_and_decisions(dag_home)
    cli_alerts, cli_decided = _alerts_and_decisions(cli_home)
    assert dag_alerts == cli_alerts == {v: [k] for v, k in EXPECTED.items()}  # one alert per candidate, same kind
    # the DAG's alert-task payload (the results asset) says the same
    [event] = [e for e in results[2]["asset_events"] if e["asset"] == "retrieval-eval-results"]
    assert sorted(a["kind"] for a in event["extra"]["alerts"]) == sorted(EXPECTED.values())
    # from the same decided comparisons
    assert set(dag_decided) == set(cli_decided) == set(EXPECTED)
    for version in EXPECTED:
        dag, cli = dag_decided[version], cli_decided[version]
        assert (dag["decision"], dag["severity"], dag["reason_code"]) == (cli["decision"], cli["severity"],
                                                                          cli["reason_code"])
        assert dag["decision"] == "regression"
        for field in ("delta", "interval_low", "interval_high"):
            assert dag[field] == pytest.approx(cli[field], abs=1e-12), (version, field)
        assert dag["judged_coverage"]["holes_relevant_delta"] == pytest.approx(
            cli["judged_coverage"]["holes_relevant_delta"], abs=1e-12), version
