"""``evalops compare`` on SciFact with judgments removed: every comparison carries its judged coverage."""

from __future__ import annotations

import json

import pytest

from click.testing import CliRunner

from evalops.cli import main
from evalops.formats import read_qrels
from evalops.metrics.topk import top_k


def test_removed_judgments_show_in_the_judged_coverage(shared_data, tmp_path):
    folder = shared_data / "scifact"
    qrels = read_qrels(folder / "qrels.tsv").to_dict()
    baseline, candidate = folder / "runs" / "bm25.trec", folder / "runs" / "itsumida-te3large-zerank1-top15.trec"
    from evalops.formats import read_run

    base_top, cand_top = top_k(read_run(baseline), 10), top_k(read_run(candidate), 10)
    # remove the relevant documents only the candidate ranks in its top 10
    thinned = {q: {d: g for d, g in docs.items()
                   if not (g > 0 and d in cand_top.get(q, []) and d not in base_top.get(q, []))}
               for q, docs in qrels.items()}
    thinned = {q: docs for q, docs in thinned.items() if docs}
    path = tmp_path / "qrels.tsv"
    path.write_text("query-id\tcorpus-id\tscore\n" + "".join(
        f"{q}\t{d}\t{g}\n" for q, docs in sorted(thinned.items()) for d, g in sorted(docs.items())))

    def run(*extra):
        out = CliRunner().invoke(main, ["compare", str(path), str(baseline), str(candidate), "-m", "nDCG@10",
                                        "--queries", "answered-by-both", "--min-coverage", "0", "--format", "json", *extra],
                                 catch_exceptions=False)
        assert out.exit_code == 0, out.output
        return json.loads(out.output)

    full = CliRunner().invoke(main, ["compare", str(folder / "qrels.tsv"), str(baseline), str(candidate), "-m",
                                     "nDCG@10", "--queries", "answered-by-both", "--min-coverage", "0", "--format", "json"])
    assert json.loads(full.output)["comparisons"][0]["delta"] > 0  # with every judgment the candidate is better
    report = run("--max-judged-coverage-drop", "0.05")
    assert report["policy"]["max_judged_coverage_drop"] == 0.05
    comp = report["comparisons"][0]
    assert comp["delta"] < json.loads(full.output)["comparisons"][0]["delta"]  # the holes cost it
    # the judged coverage the comparison carries is judged_coverage's over the compared queries
    from evalops.judged.coverage import judged_coverage

    answered = set(read_run(candidate).to_dict())
    expected = judged_coverage({q: d for q, d in thinned.items() if q in answered}, read_run(baseline),
                               read_run(candidate), 10).to_dict()
    assert {k: pytest.approx(comp["judged_coverage"][k]) for k in ("baseline", "candidate", "difference")} == {
        k: expected[k] for k in ("baseline", "candidate", "difference")}
    # the holes of either run's top 10, at least the candidate's own
    assert comp["judged_coverage"]["unjudged_documents"] >= expected["unjudged_documents"]
    # and the bounds: the removed documents, only the candidate's, can be relevant in the optimistic one
    j = comp["judged_coverage"]
    assert j["holes_pessimistic_delta"] <= comp["delta"] <= j["holes_relevant_delta"]
    assert j["holes_relevant_delta"] > comp["delta"] and len(j["holes_relevant_deltas"]) == comp["n"]
    assert comp["judged_coverage"]["difference"] < 0 and comp["judged_coverage"]["unjudged_documents"] > 0
    assert any(r.startswith("judged coverage Judged@10") for r in comp["reasons"])
