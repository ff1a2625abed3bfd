"""Holes bound the decision both ways, and a floor fails the gate, on SciFact through ``evalops gate``.

The gold set is SciFact's qrels plus the shipped BM25 run's top 10 judged non-relevant (a pool, as
annotators build one), so BM25's top 10 is fully judged. Against BM25 as the baseline:

* ``broken`` loses every relevant document and, for 40 % of the queries, returns only unjudged documents:
  its judged coverage drops far past ``max_judged_coverage_drop``; the optimistic bound (those documents
  relevant) is not a drop, but on the judged documents alone (condensed lists) it is, so it is a critical
  regression on the judged evidence, alerts and fails the gate (exit 4);
* ``swap`` changes nothing but three judged non-relevant documents per query, swapped for three unjudged
  ones ranked first: a drop if they are non-relevant, a gain if relevant, and unchanged on the judged
  documents, so it stays ``inconclusive (unjudged_documents)`` with the bounds printed; a drop as judged
  that evalops cannot tell apart from a gain raises an ``unjudged`` alert and fails the gate closed until the
  holes are judged.

A floor above BM25's nDCG@10 fails the gate of a project with no baseline yet (exit 4, the floor named).
"""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from click.testing import CliRunner

from evalops.cli import main
from evalops.exitcodes import ExitCode

pytestmark = pytest.mark.slow

DAY1, DAY2 = "2024-06-01", "2024-06-02"


def _read_run(path: Path) -> dict[str, list[str]]:
    ranked: dict[str, list[tuple[int, str]]] = {}
    for line in path.read_text().splitlines():
        q, _, d, rank, *_ = line.split()
        ranked.setdefault(q, []).append((int(rank), d))
    return {q: [d for _, d in sorted(docs)] for q, docs in ranked.items()}


def _write_run(path: Path, ranked: dict[str, list[str]]) -> str:
    with path.open("w") as out:
        for q, docs in sorted(ranked.items()):
            out.writelines(f"{q} Q0 {d} {r + 1} {1000 - r} t\n" for r, d in enumerate(docs))
    return str(path)


def _project(home: Path, shared_data: Path, versions: dict[str, str], extra: str = "") -> Path:
    entries = "".join(f"  - {{name: search, version: '{v}', adapter: run_file, deployed: true, owner: me, "
                      f"params: {{path: '{p}', missing: empty}}}}\n" for v, p in versions.items())
    (home / "retrievers.yaml").write_text("retrievers:\n" + entries)
    (home / "evalops.yaml").write_text(
        f"gold_set:\n  path: gold\n{extra}knowledge_base: {{path: '{shared_data / 'scifact' / 'corpus.jsonl'}'}}\n"
        f"registry: retrievers.yaml\nmeasures: [nDCG@10]\nlog_sample_size: 0\n"
        f"warehouse_url: 'sqlite:///{home / 'warehouse.db'}'\n")
    return home


@pytest.fixture(scope="module")
def scifact_pool(shared_data, tmp_path_factory):
    """The folder holding the pooled gold set (SciFact + BM25's top 10 judged 0) and the three runs by name."""
    import pandas as pd

    from evalops.goldset import GoldSet, load_gold_set, save_gold_set

    gold = load_gold_set(shared_data / "scifact")
    bm25 = _read_run(shared_data / "scifact" / "runs" / "bm25.trec")
    relevant: dict[str, set[str]] = {}
    for q, d in zip(gold.judgments["query_id"], gold.judgments["doc_id"]):
        relevant.setdefault(str(q), set()).add(str(d))
    pool = [(q, d, 0) for q in sorted(relevant) for d in bm25.get(q, [])[:10] if d not in relevant[q]]
    judgments = pd.concat([gold.judgments[["query_id", "doc_id", "grade"]],
                           pd.DataFrame(pool, columns=["query_id", "doc_id", "grade"])], ignore_index=True)
    folder = tmp_path_factory.mktemp("scifact-pool")
    save_gold_set(GoldSet.from_frames(gold.queries, judgments, source="scifact + bm25 pool"), folder / "gold")
    judged = {(q, d) for q, d, _ in pool} | {(q, d) for q in relevant for d in relevant[q]}

    broken, swap = {}, {}
    for i, q in enumerate(sorted(relevant)):
        docs = bm25.get(q, [])
        unjudged = [d for d in docs[10:] if (q, d) not in judged]
        non_relevant = [d for d in docs[:10] if d not in relevant[q]]
        # broken: 40 % of the queries (2 in 5) answered with unjudged documents only; every relevant one lost
        broken[q] = unjudged[:10] if i % 5 < 2 else non_relevant
        # swap: the three lowest-ranked judged non-relevant documents replaced by three unjudged ones, first
        dropped = set(non_relevant[-3:])
        swap[q] = unjudged[:3] + [d for d in docs[:10] if d not in dropped]
    runs = {"bm25": str(shared_data / "scifact" / "runs" / "bm25.trec"),
            "broken": _write_run(folder / "broken.trec", broken), "swap": _write_run(folder / "swap.trec", swap)}
    return folder, runs


def _home(tmp_path: Path, scifact_pool) -> tuple[Path, dict[str, str]]:
    """A project folder whose gold set is the pooled one (the environment is cleared by the conftest)."""
    folder, runs = scifact_pool
    home = tmp_path / "proj"
    home.mkdir()
    (home / "gold").symlink_to(folder / "gold")
    return home, runs


def _gate(home: Path, day: str, junit: Path, *more: str):
    result = CliRunner().invoke(main, ["gate", "--project", str(home), "--date", day, "--junit-xml", str(junit),
                                       "--format", "json", *more], catch_exceptions=False)
    return result.exit_code, json.loads(result.output[result.output.index("{"):])


def _junit(path: Path) -> dict[tuple[str, str], ET.Element]:
    return {(c.get("classname"), c.get("name")): c for c in ET.parse(path).getroot().iter("testcase")}


def test_a_broken_candidate_off_the_judged_pool_is_a_regression_and_a_swap_stays_inconclusive(
        scifact_pool, shared_data, tmp_path):
    home, runs = _home(tmp_path, scifact_pool)
    _project(home, shared_data, {"1.0": runs["bm25"]})
    code, _ = _gate(home, DAY1, tmp_path / "day1.xml")
    assert code == ExitCode.SUCCESS
    promoted = CliRunner().invoke(main, ["promote", "search", "1.0", "--project", str(home), "--reason", "day 1",
                                         "--by", "tests"])
    assert promoted.exit_code == 0, promoted.output

    _project(home, shared_data, {"1.0": runs["bm25"], "broken": runs["broken"],
                                                   "swap": runs["swap"]})
    code, payload = _gate(home, DAY2, tmp_path / "day2.xml")
    assert code == ExitCode.REGRESSION == 4
    cases = {c["version"]: c for c in payload["gate"]["cases"]}

    broken = cases["broken"]
    assert (broken["outcome"], broken["kind"], broken["decision"]) == ("failure", "regression", "regression")
    assert broken["message"].startswith("regression (critical, unjudged_documents): nDCG@10")
    # its optimistic bound gives every unjudged document of the 40 % of queries only it answered one grade in
    # both versions: not a drop there, so the bounds disagree; the judged documents alone show the drop
    assert "bounds of the unjudged documents -0.6762 .. " in broken["message"]
    assert "condensed lists -0.6762" in broken["message"]
    assert "a regression on the judged evidence, not a bound" in broken["details"]
    assert [a["kind"] for a in payload["alerts"] if a["dedup_key"].split("|")[2] == "broken"] == ["regression"]
    from evalops.config import load_config
    from evalops.pipeline.store import engine_for
    from evalops.warehouse import list_alerts

    engine = engine_for(load_config(home, environ={}))
    alerts = list_alerts(engine)
    [alert] = [a for a in alerts.itertuples(index=False) if a.kind == "regression"]
    assert alert.version == "broken" and alert.severity == "critical"
    assert "as judged, bounds of the unjudged documents" in alert.message
    assert not [k for k in alert.payload["judged_coverage"] if k.endswith("_deltas")]
    assert alert.payload["judged_coverage"]["condensed_delta"] < 0

    swap = cases["swap"]
    assert (swap["outcome"], swap["kind"], swap["decision"]) == ("failure", "unjudged", "inconclusive")
    assert "fails closed" in swap["message"]
    assert swap["message"].startswith("inconclusive (unjudged_documents): nDCG@10")
    lower, upper = swap["delta"], swap["judged_coverage"]["holes_relevant_delta"]
    assert lower < -0.01 and upper > 0.01  # the bounds disagree: a drop as judged, a gain with the holes relevant
    assert abs(swap["judged_coverage"]["condensed_delta"]) < 0.01  # judged documents alone: unchanged
    assert "the bounds disagree" in swap["details"]
    # never silent: its own alert, which says what would decide it
    [held_alert] = [a for a in payload["alerts"] if a["dedup_key"].split("|")[2] == "swap"]
    assert held_alert["kind"] == "unjudged" and held_alert["title"].startswith("Unconfirmed drop (unjudged documents)")

    xml = _junit(tmp_path / "day2.xml")
    failure = xml["search@broken", "nDCG@10"].find("failure")
    assert failure.get("type") == "regression" and "unjudged_documents" in failure.get("message")
    held = xml["search@swap", "nDCG@10"].find("failure")
    assert held.get("type") == "unjudged" and "inconclusive (unjudged_documents)" in held.get("message")
    assert "bounds of the unjudged documents" in held.get("message")

    # a regression called on the judged evidence still queues its holes for judging
    queue = [json.loads(line) for line in (home / ".evalops" / "annotation" / "queue.jsonl").read_text().splitlines()]
    assert {r["source"] for r in queue} == {"hole"}
    assert any("broken" in r["origin"] for r in queue) and any("swap" in r["origin"] for r in queue)

    # the report shows the bounds beside the judged coverage, and the bounds' policy
    report = (Path(payload["report"]).parent / "report.md").read_text()
    assert "bounds of the unjudged documents" in report and "holes.upper" in report and "holes.condensed" in report
    assert "regression.default_margins" in report and "nDCG 0.02" in report  # the margin table in force
    assert "the bounds disagree" in report and "condensed lists" in report

    # the warehouse keeps the bounds with the comparison
    from evalops.warehouse import load_ab_tests

    stored = load_ab_tests(engine)
    row = stored[stored["decision"] == "inconclusive"].iloc[0]
    assert row["delta"] == pytest.approx(lower, abs=1e-4)
    assert row["judged_coverage"]["holes_relevant_delta"] == pytest.approx(upper, abs=1e-4)


def test_a_floor_breach_with_no_baseline_fails_the_gate(scifact_pool, shared_data, tmp_path):
    home, runs = _home(tmp_path, scifact_pool)
    _project(home, shared_data, {"1.0": runs["bm25"]},
             extra="  floors: {nDCG@10: 0.9}\n  floor_on: lower_bound\n")
    code, payload = _gate(home, DAY1, tmp_path / "junit.xml")
    assert code == ExitCode.REGRESSION == 4
    [case] = payload["gate"]["cases"]
    assert (case["outcome"], case["kind"]) == ("failure", "floor")
    assert case["message"].startswith("floor (critical): nDCG@10 95% CI lower bound 0.")
    assert "under the floor 0.9" in case["message"] and "no baseline yet" in case["message"]
    failure = _junit(tmp_path / "junit.xml")["search@1.0", "nDCG@10"].find("failure")
    assert failure.get("type") == "floor" and "nDCG@10" in failure.get("message") and "floor 0.9" in failure.get("message")
    assert [a["kind"] for a in payload["alerts"]] == ["floor"]
    report = (Path(payload["report"]).parent / "report.md").read_text()
    assert "Absolute floors" in report and "BREACHED (critical)" in report
    assert "nDCG@10 >= 0.9 (on the lower bound, critical)" in report  # the floor policy, printed

    # the same floor on the mean, well under BM25's nDCG@10, passes
    _project(home, shared_data, {"1.0": runs["bm25"]}, extra="  floors: {nDCG@10: 0.3}\n")
    code, payload = _gate(home, "2024-06-02", tmp_path / "junit2.xml")
    assert code == ExitCode.SUCCESS, payload["gate"]
