"""A candidate that finds relevant but unjudged documents: the rule withholds the regression and the
holes go to the annotation queue, the planted ones first."""

from __future__ import annotations

import dataclasses
import json

import pytest

from evalops.goldset import GoldSet, load_gold_set

pytestmark = pytest.mark.slow


def _specs(result):
    """The typed version specs of a run's result (``run_local`` returns their JSON form)."""
    from evalops.pipeline.specs import VersionSpec

    return [VersionSpec.from_xcom(v) for v in result["versions"]]

def _plant(gold: GoldSet, pads: list[str]):
    """Remove the judgments of every positive document but the lowest-graded one of each query with two or
    more; the candidate ranks exactly those removed documents first and the kept one after five pads (a
    better ranking under the full gold set), the baseline the judgments kept. Returns the thinned gold set,
    both runs and the removed pairs."""
    j = gold.judgments.sort_values(["query_id", "grade", "doc_id"], ascending=[True, False, True])
    removed, keep, baseline, candidate = set(), [], {}, {}
    for q, rows in j.groupby("query_id", sort=True):
        docs = list(zip(rows["doc_id"], rows["grade"]))
        positives = [d for d, g in docs if g > 0]
        gone = positives[:-1] if len(positives) >= 2 else []
        removed |= {(q, d) for d in gone}
        kept = [d for d, _ in docs if d not in gone]
        keep += [(q, d, g) for d, g in docs if d not in gone]
        own_pads = [p for p in pads if p not in dict(docs)][:3]
        baseline[q] = kept + own_pads
        more_pads = [p for p in pads if p not in dict(docs)][:5]
        candidate[q] = (gone + more_pads + kept) if gone else (kept + own_pads)
    import pandas as pd

    judgments = pd.DataFrame(keep, columns=["query_id", "doc_id", "grade"])
    return GoldSet.from_frames(gold.queries, judgments, source="thinned"), baseline, candidate, removed


def test_unjudged_documents_make_the_comparison_inconclusive_and_fill_the_queue(tmp_path, repo_root, planted_project):
    from evalops.pipeline import run_local
    from evalops.pipeline.deciding import load_decisions
    from evalops.stats import Comparison
    from evalops.pipeline.holes import load_holes
    from evalops.pipeline.workdir import comparison_file
    from evalops.pipeline.store import engine_for
    from evalops.stats import adjust_and_decide
    from evalops.warehouse import load_ab_tests

    thinned, baseline, candidate, removed = _plant(load_gold_set(repo_root / "include" / "goldset"),
                                                   planted_project.pads)
    assert len(removed) > 40
    cfg, day2, result = planted_project(thinned, baseline, candidate, ["nDCG@5", "R@10"])

    decisions = load_decisions(engine_for(cfg), _specs(result))
    [record] = [r.to_record() for r in decisions if r.comparison.measure == "nDCG@5"]
    comp = record["comparison"]
    assert (comp["decision"], comp["reason_code"]) == ("inconclusive", "unjudged_documents")
    judged = comp["judged_coverage"]
    assert judged["measure"] == "Judged@5"
    assert judged["difference"] < -0.1
    assert judged["unjudged_documents"] >= len(removed)  # the removed ones and the candidate's pads in its top 5
    [why] = [r for r in comp["reasons"] if r.startswith("unjudged_documents:")]
    assert "the bounds disagree" in why and "judge the" in why and "unjudged documents" in why
    # the optimistic bound (the holes the candidate ranks higher relevant) does not lose: on the record
    assert judged["holes_relevant_delta"] > -0.01 > comp["delta"]
    assert f"delta {comp['delta']:+.4f} with every unjudged document non-relevant" in why

    # today's rule (no threshold on judged coverage) calls the same comparison a regression (re-decided with
    # the per-query deltas, which the compare step's output holds and the stored record leaves out)
    assert "deltas" not in comp
    compared = json.loads(comparison_file(cfg, day2, record["candidate_run_id"]).read_text())["comparisons"]
    [deltas] = [c["deltas"] for c in compared if c["measure"] == "nDCG@5"]
    before = Comparison.from_record({**comp, "deltas": deltas})
    lax = dataclasses.replace(before.policy, max_judged_coverage_drop=1.0)
    [old] = [c for c in adjust_and_decide([dataclasses.replace(before, policy=lax)], lax)]
    assert old.decision == "regression"

    # the warehouse keeps the judged coverage and the policy's threshold with the comparison
    stored = load_ab_tests(engine_for(cfg), candidate_run_id=record["candidate_run_id"])
    row = stored[stored["measure"] == "nDCG@5"].iloc[0]
    assert row["reason_code"] == "unjudged_documents"
    assert row["judged_coverage"]["difference"] == pytest.approx(judged["difference"])
    assert row["policy"]["max_judged_coverage_drop"] == 0.1

    # the queue: every hole once, the removed documents first
    lines = [json.loads(line) for line in (tmp_path / ".evalops" / "annotation" / "queue.jsonl").read_text().splitlines()]
    assert {r["source"] for r in lines} == {"hole"}
    pairs = [(r["query_id"], r["doc_id"]) for r in lines]
    assert len(pairs) == len(set(pairs))
    assert set(pairs[:len(removed)]) == removed
    assert len(pairs) > len(removed)  # the pads are holes too, after the planted documents
    summary = load_holes(cfg, day2)
    assert summary["policy"]["cutoff"] == 5
    assert summary["query_sets"]["gold"]["planted"]["holes"] == len(pairs)

    # the report shows the judged coverage of each comparison, the threshold and the holes
    from pathlib import Path

    report = (Path(result["report"]).parent / "report.md").read_text()
    assert "judged coverage" in report and "unjudged_documents" in report
    assert "regression.max_judged_coverage_drop" in report
    assert "Holes in the judgments" in report
    first = pairs[0]
    assert f"| {first[0]} | {first[1]} |" in report

    # a second run of the same day adds nothing to the queue
    run_local(cfg, day2)
    assert len((tmp_path / ".evalops" / "annotation" / "queue.jsonl").read_text().splitlines()) == len(lines)


def test_a_configured_judge_proposes_grades_for_the_holes_and_the_gold_set_is_untouched(repo_root, planted_project):
    thinned, baseline, candidate, removed = _plant(load_gold_set(repo_root / "include" / "goldset"),
                                                   planted_project.pads)
    cfg, day2, result = planted_project(thinned, baseline, candidate, ["nDCG@5"], extra="judge: {kind: lexical}\n")
    lines = [json.loads(line) for line in (cfg.home / ".evalops" / "annotation" / "queue.jsonl").read_text().splitlines()]
    graded = [r for r in lines if r["proposed_grade"] is not None]
    assert len(graded) == len(lines)  # the lexical judge labels every pair it is given
    assert {r["proposed_grade"] for r in graded} <= {0, 1}
    assert all("proposed by lexical" in r["origin"] for r in graded)
    assert load_gold_set(cfg.home / "gold").version == thinned.version  # never merged into the gold set


def test_a_failed_candidate_is_not_compared_adds_no_holes_and_the_report_says_why(tmp_path, repo_root, planted_project):
    """A candidate that answers 3 of the gold queries fails its failure budget: it is never compared, so
    none of the baseline's unjudged documents are queued on its account, and the report says it failed
    (not that every version is a baseline). Day 1, with no baseline, says that once."""
    from pathlib import Path

    from evalops.config import load_config
    from evalops.goldset import save_gold_set
    from evalops.pipeline import IncompleteRunError, RunContext, run_local
    from evalops.pipeline.holes import load_holes
    from evalops.pipeline.promotion import promote

    thinned, baseline, candidate, _ = _plant(load_gold_set(repo_root / "include" / "goldset"), planted_project.pads)
    save_gold_set(thinned, tmp_path / "gold")
    for name, ranked in (("baseline", baseline), ("candidate", dict(sorted(candidate.items())[:3]))):
        with (tmp_path / f"{name}.trec").open("w") as out:
            out.writelines(f"{q} Q0 {d} {r + 1} {100 - r} t\n" for q, docs in ranked.items() for r, d in enumerate(docs))
    entry = "  - {{name: planted, version: '{v}', adapter: run_file, deployed: true, owner: s, params: {{path: {p}}}}}\n"
    (tmp_path / "retrievers.yaml").write_text("retrievers:\n" + entry.format(v="1.0", p="baseline.trec")
                                              + entry.format(v="2.0", p="candidate.trec"))
    (tmp_path / "evalops.yaml").write_text(
        f"gold_set: {{path: gold}}\nknowledge_base: {{path: {repo_root / 'include' / 'knowledge_base'}}}\n"
        "registry: retrievers.yaml\nmeasures: [nDCG@5]\nlog_sample_size: 0\n")
    cfg = load_config(tmp_path, environ={})

    def report(day: str) -> str:
        with pytest.raises(IncompleteRunError, match="planted@2.0") as failed:
            run_local(cfg, RunContext.for_day(day))
        html = Path(failed.value.result["report"])
        assert "because it failed" in html.read_text() or day == "2024-06-01"  # the HTML says the same
        return (html.parent / "report.md").read_text()

    first = report("2024-06-01")
    ab = first[first.index("## A/B results"):]
    assert first.count("has no baseline yet") == 1 and "has no baseline yet" in ab
    assert "No candidate was compared" not in first and "because it failed" not in first

    promote(cfg, retriever="planted", version="1.0", promoted_by="test", reason="the deployed version")
    second = report("2024-06-02")
    ab = second[second.index("## A/B results"):]
    assert "planted 2.0 was not compared because it failed (" in ab and " queries failed)" in ab
    assert "No candidate was compared" not in second and "no baseline yet" not in second
    assert load_holes(cfg, RunContext.for_day("2024-06-02"))["query_sets"] == {}
    assert "Holes in the judgments" not in second
    assert not (tmp_path / ".evalops" / "annotation" / "queue.jsonl").exists()
    assert not (tmp_path / "annotation").exists()
