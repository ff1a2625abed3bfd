"""``evalops compare`` and ``evalops power``: JSON shape, the table, exit codes, clean errors."""

from __future__ import annotations

import json

import numpy as np
import pytest
from click.testing import CliRunner

from evalops.cli import main
from evalops.exitcodes import ExitCode
from evalops.stats import holm, paired_sample_size, paired_t_test
from evalops.stats.margins import DEFAULT_MARGINS

RECORD_KEYS = [
    "measure", "baseline", "candidate", "n", "coverage", "baseline_mean", "candidate_mean", "delta", "delta_sd",
    "delta_ci_low", "delta_ci_high", "relative_change", "decision", "severity", "criterion", "reason_code",
    "alert", "margin", "interval_low", "interval_high", "interval_level", "interval_method", "family_size",
    "queries_needed", "test", "test_method", "statistic", "p_value", "decision_p", "p_adjusted", "effect_size_dz",
    "effect_size_ci", "effect_size_gz", "wins", "ties", "losses", "queries_lost", "queries_gained",
    "query_drops_p", "reasons", "pooled", "worst_queries", "notes", "judged_coverage", "higher_is_better", "kind",
]


def invoke(*args: str):
    return CliRunner().invoke(main, list(args), catch_exceptions=False)


@pytest.fixture(scope="module")
def scifact(shared_data):
    folder = shared_data / "scifact"
    return (str(folder / "qrels.tsv"), str(folder / "runs" / "bm25.trec"),
            str(folder / "runs" / "itsumida-te3large-zerank1-top15.trec"))


@pytest.fixture(scope="module")
def report(scifact):
    out = invoke("compare", *scifact, "-m", "nDCG@10", "-m", "P@10", "-m", "RR", "--queries", "answered-by-both",
                 "--format", "json")
    assert out.exit_code == 0, out.output
    assert out.stderr == ""  # piped: no progress bar
    return json.loads(out.stdout)


def test_json_shape_on_the_real_scifact_runs(report, scifact):
    assert list(report) == ["qrels", "baseline", "candidates", "queries", "policy", "comparisons", "summary", "fail_on"]
    # named by file, with the tag because the tags differ
    assert report["baseline"] == {"run": scifact[1], "name": "bm25s-k1_0.9-b_0.4",
                                  "label": "bm25.trec (bm25s-k1_0.9-b_0.4)"}
    assert report["candidates"] == [{"run": scifact[2], "name": "itsumida-te3large-zerank1",
                                     "label": "itsumida-te3large-zerank1-top15.trec (itsumida-te3large-zerank1)"}]
    assert report["queries"] == {
        "selection": "answered-by-both", "judged": 300, "compared": 30, "no_answer_policy": "exclude",
        "treatment": "only the 30 judged queries every run answered are compared",
        "answered": [{"run": scifact[1], "name": "bm25s-k1_0.9-b_0.4", "label": "bm25.trec (bm25s-k1_0.9-b_0.4)",
                      "answered": 300, "judged": 300},
                     {"run": scifact[2], "name": "itsumida-te3large-zerank1",
                      "label": "itsumida-te3large-zerank1-top15.trec (itsumida-te3large-zerank1)", "answered": 30,
                      "judged": 300}],
    }
    assert report["policy"] == {"alpha": 0.05, "alternative": "two-sided", "min_delta": None, "margins": {},
                                "default_margins": dict(DEFAULT_MARGINS),
                                "alert_on": "warning", "correction": "holm", "test": "t", "zero_method": "wilcox",
                                "continuity": False, "interval": "robust", "ci_method": "bca", "query_drop": 0.3,
                                "broken_queries": True,
                                "min_coverage": 0.9, "max_judged_coverage_drop": 0.1,
                                "n_resamples": 10_000,
                                "seed": 0}
    assert [c["measure"] for c in report["comparisons"]] == ["nDCG@10", "P@10", "RR"]
    for record in report["comparisons"]:
        assert list(record) == RECORD_KEYS
        assert record["n"] == 30
        assert record["wins"] + record["ties"] + record["losses"] == 30
        assert isinstance(record["reasons"], list) and record["reasons"]
        assert len(record["effect_size_ci"]) == 2
        assert all(set(w) == {"query_id", "baseline", "candidate", "delta"} for w in record["worst_queries"])
    assert sum(v for k, v in report["summary"].items() if k != "alerts") == 3
    # the candidate answered 30 of the 300 judged queries: no comparison is decided on that
    assert all((r["decision"], r["reason_code"]) == ("inconclusive", "partial_run") for r in report["comparisons"])


def test_numbers_are_the_library_numbers(report, scifact):
    from evalops.formats import read_qrels, read_run
    from evalops.metrics import evaluate

    ndcg = report["comparisons"][0]
    # the data's README: 0.7524 (BM25) and 0.8183 on the 30 queries both runs answered
    assert ndcg["baseline_mean"] == pytest.approx(0.7524, abs=5e-5)
    assert ndcg["candidate_mean"] == pytest.approx(0.8183, abs=5e-5)
    gold, base, cand = read_qrels(scifact[0]), read_run(scifact[1]), read_run(scifact[2])
    gold = gold.restrict(cand.queries)
    b = evaluate(gold, base, ["nDCG@10"]).per_query["nDCG@10"]
    c = evaluate(gold, cand, ["nDCG@10"]).per_query["nDCG@10"]
    assert ndcg["p_value"] == pytest.approx(paired_t_test(b, c).p_value)
    # the adjusted p is the decision's: Bonferroni's m p of the robust interval's own test (3 comparisons)
    own = [r["decision_p"] for r in report["comparisons"]]
    np.testing.assert_allclose([r["p_adjusted"] for r in report["comparisons"]], np.minimum(1.0, np.multiply(own, 3)))
    plain = json.loads(invoke("compare", *scifact, "-m", "nDCG@10", "-m", "P@10", "-m", "RR", "--queries",
                              "answered-by-both", "--interval", "t", "--format", "json").stdout)
    raw = [r["p_value"] for r in plain["comparisons"]]
    np.testing.assert_allclose([r["p_adjusted"] for r in plain["comparisons"]], holm(raw))


def test_table_is_readable(scifact):
    out = invoke("compare", *scifact, "-m", "nDCG@10", "-m", "AP", "--queries", "answered-by-both")
    assert out.exit_code == 0
    lines = out.stdout.splitlines()
    header = next(line for line in lines if "measure" in line)
    for column in ("n", "baseline", "candidate", "delta", "rel %", "decision interval", "p adj", "d_z [95% CI]",
                   "W/T/L", "decision"):
        assert column in header
    assert "delta [" not in header  # one interval per comparison: the decision interval
    row = next(line for line in lines if line.lstrip().startswith("nDCG@10 "))
    assert "0.7524" in row and "0.8183" in row and "+8.8" in row
    assert all(len(line) <= 200 for line in lines)
    assert "only the 30 judged queries every run answered are compared" in out.stdout
    assert "Bonferroni intervals (Holm family) over 2 comparisons" in out.stdout
    # before any number: how many judged queries each run answered
    assert out.stdout.index("itsumida-te3large-zerank1-top15.trec (itsumida-te3large-zerank1): answered 30 of 300 "
                            "judged queries (10%)") < out.stdout.index(
        "0.7524")


def test_fail_on_regression_sets_the_exit_code(scifact):
    # over all 300 judged queries the candidate's 270 unanswered ones score 0: a partial run, not a regression;
    # its drop as judged is never passed quietly under the gate's policy (kind partial, exit 5, as the gate)
    partial = invoke("compare", *scifact, "-m", "nDCG@10", "--fail-on-regression", "--format", "json")
    assert partial.exit_code == ExitCode.VERSION_FAILED
    record = json.loads(partial.stdout)["comparisons"][0]
    assert (record["decision"], record["reason_code"], record["kind"]) == ("inconclusive", "partial_run", "partial")
    assert invoke("compare", *scifact, "-m", "nDCG@10", "--fail-on", "regression").exit_code == 0
    assert invoke("compare", *scifact, "-m", "nDCG@10").exit_code == 0  # no policy: compare reports only
    # accepting any coverage, the unanswered queries scored 0 make a clear, critical regression
    flagged = invoke("compare", *scifact, "-m", "nDCG@10", "--fail-on-regression", "--min-coverage", "0",
                     "--format", "json")
    assert flagged.exit_code == ExitCode.REGRESSION
    payload = json.loads(flagged.stdout)
    assert payload["summary"]["regression"] == 1 and payload["comparisons"][0]["severity"] == "critical"


def test_every_candidate_and_measure_is_one_family(scifact):
    qrels, base, cand = scifact
    out = invoke("compare", qrels, base, cand, base, "-m", "nDCG@10", "-m", "P@5", "--format", "json",
                 "--test", "wilcoxon", "--correction", "bh", "--queries", "answered-by-both")
    payload = json.loads(out.stdout)
    assert len(payload["comparisons"]) == 4
    raw = np.array([r["p_value"] for r in payload["comparisons"]])
    assert all(r["test"] == "wilcoxon" for r in payload["comparisons"])
    # the baseline against itself: every delta is zero
    itself = [r for r in payload["comparisons"] if r["candidate"] == "bm25s-k1_0.9-b_0.4"]
    assert all(r["decision"] == "no_change" and r["p_value"] == 1.0 for r in itself)
    assert all(r["p_adjusted"] >= p for r, p in zip(payload["comparisons"], raw))


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["-m", "nDCG@10", "--alpha", "1.5"], "alpha must be between 0 and 1"),
        (["-m", "nDCG@10", "--min-effect", "0.2"], "min_effect (a minimum |d_z|) was removed"),
        (["-m", "nDCG@10", "--min-delta", "0"], "min_delta"),
        (["-m", "nDCG@10", "--margin", "P@5"], "MEASURE=NUMBER"),
        (["-m", "nDCG@10", "--resamples", "5"], "n_resamples"),
    ],
)
def test_bad_input_is_a_one_line_error(scifact, args, message):
    out = invoke("compare", *scifact, *args)
    assert out.exit_code == ExitCode.BAD_INPUT
    assert out.stderr.startswith("error: ") and message in out.stderr
    assert "Traceback" not in out.output


def test_a_bad_measure_is_a_usage_error(scifact):
    out = invoke("compare", *scifact, "-m", "nDGC@10")
    assert out.exit_code == ExitCode.USAGE
    assert "Invalid value for '-m' / '--measure': unknown measure 'nDGC'" in out.stderr
    assert "Traceback" not in out.output


def test_missing_file_is_a_clean_error(scifact, tmp_path):
    out = invoke("compare", scifact[0], scifact[1], str(tmp_path / "nope.trec"), "-m", "nDCG@10")
    assert out.exit_code == ExitCode.BAD_INPUT and "nope.trec" in out.stderr


def test_power_solves_for_what_is_missing():
    n = invoke("power", "--effect", "0.3")
    assert n.exit_code == 0
    assert n.stdout.startswith("90 queries give power >= 0.8 to detect |d_z| = 0.3")
    assert "175 per group" in n.stdout  # the two-sample normal formula, shown as the wrong answer
    p = json.loads(invoke("power", "--effect", "0.3", "--n", "100", "--format", "json").stdout)
    assert p["solved_for"] == "power" and p["power"] == pytest.approx(0.8439, abs=1e-4)
    mde = json.loads(invoke("power", "--n", "300", "--power", "0.8", "--format", "json").stdout)
    assert mde["solved_for"] == "effect" and mde["effect"] == pytest.approx(0.1623, abs=1e-4)
    one = json.loads(invoke("power", "--effect", "0.2", "--alternative", "less", "--format", "json").stdout)
    assert one["n"] == paired_sample_size(0.2, alternative="less") == 156


@pytest.mark.parametrize("args", [[], ["--effect", "0.3", "--n", "50", "--power", "0.8"], ["--power", "0.8"],
                                  ["--effect", "0.3", "--alpha", "2"]])
def test_power_needs_two_of_three(args):
    out = invoke("power", *args)
    assert out.exit_code == ExitCode.BAD_INPUT and out.stderr.startswith("error: ")


def _tiny(tmp_path, tags):
    qrels = tmp_path / "qrels.tsv"
    qrels.write_text("query-id\tcorpus-id\tscore\n" + "".join(f"q{i}\td{i}\t1\n" for i in range(8)))
    paths = []
    for k, tag in enumerate(tags):
        path = tmp_path / f"run{k}.trec"
        path.write_text("".join(f"q{i} Q0 d{i if (i + k) % 3 else 'x'} 1 1.0 {tag}\n" for i in range(8)))
        paths.append(str(path))
    return str(qrels), paths


def test_candidates_are_named_by_file_and_by_tag_when_tags_differ(tmp_path):
    qrels, paths = _tiny(tmp_path, ["STANDARD"] * 3)
    report = json.loads(invoke("compare", qrels, *paths, "-m", "P@1", "--format", "json").stdout)
    assert [c["candidate"] for c in report["comparisons"]] == ["run1.trec", "run2.trec"]
    assert {c["baseline"] for c in report["comparisons"]} == {"run0.trec"}
    table = invoke("compare", qrels, *paths, "-m", "P@1").stdout
    assert "run2.trec" in table and "STANDARD" not in table.split("unanswered")[1]
    qrels, paths = _tiny(tmp_path, ["base", "cand-a", "cand-b"])
    report = json.loads(invoke("compare", qrels, *paths, "-m", "P@1", "--format", "json").stdout)
    assert [c["candidate"] for c in report["comparisons"]] == ["run1.trec (cand-a)", "run2.trec (cand-b)"]


def test_markdown_prints_the_numbers_as_the_terminal_does(scifact):
    args = ("compare", *scifact, "-m", "nDCG@10", "--queries", "answered-by-both")
    terminal = invoke(*args).stdout
    md = invoke(*args, "--format", "markdown").stdout
    header = next(line for line in md.splitlines() if line.startswith("| measure |"))
    row = next(line for line in md.splitlines() if line.startswith("| nDCG@10 |"))
    cells = dict(zip([c.strip() for c in header.strip("|").split("|")], [c.strip() for c in row.strip("|").split("|")]))
    baseline_mean, candidate_mean = cells["baseline → candidate"].split(" → ")
    delta, interval = cells["delta \\[decision interval\\]"].split(" ", 1)
    assert delta[0] in "+-" and len(delta.split(".")[1]) == 4  # signed, 4 decimals
    low, high = interval.strip("\\[]").split(" at ")[0].split(" .. ")
    level = interval.strip("\\[]").split(" at ")[1]
    assert level.endswith("%") and f"at {level}" in terminal
    for value in (baseline_mean, candidate_mean, delta, low, high):
        assert value in terminal, value
    assert cells["decision (severity, reason)"] in terminal


def test_markdown_is_narrow_enough_for_a_pull_request_comment(scifact):
    """Six columns (a 26-column table does not fit a pull-request comment); csv and json keep every field."""
    from evalops.cli.compare import COMPARISON_COLUMNS

    args = ("compare", *scifact, "-m", "nDCG@10", "-m", "P@10", "--queries", "answered-by-both")
    md = invoke(*args, "--format", "markdown").stdout
    header = next(line for line in md.splitlines() if line.startswith("| measure |"))
    assert [c.strip() for c in header.strip("|").split("|")] == [
        "measure", "candidate", "baseline → candidate", "delta \\[decision interval\\]",
        "decision (severity, reason)", "kind"]
    assert len([line for line in md.splitlines() if line.startswith("| ") and line != header]) == 2  # one per comparison
    csv_header = invoke(*args, "--format", "csv").stdout.splitlines()[0]
    assert csv_header.split(",") == list(COMPARISON_COLUMNS) and len(COMPARISON_COLUMNS) == 27
    record = json.loads(invoke(*args, "--format", "json").stdout)["comparisons"][0]
    assert {"p_adjusted", "effect_size_dz", "wins", "margin", "family_size"} <= set(record)
    assert "baseline → candidate" not in record


def test_power_from_a_pilot_of_real_deltas_is_the_library_simulation(tmp_path):
    from evalops.stats.pilot import pilot_power, pilot_sample_size

    rng = np.random.default_rng(4)
    deltas = np.round(np.where(rng.random(200) < 0.8, 0.0, rng.choice([-0.5, 0.2, 0.6], 200)), 4)
    path = tmp_path / "deltas.csv"
    path.write_text("query_id,delta\n" + "".join(f"q{i},{d}\n" for i, d in enumerate(deltas)))
    got = json.loads(invoke("power", "--pilot", str(path), "--delta", "-0.05", "--n", "300", "--simulations", "500",
                            "--format", "json").stdout)
    expected = pilot_power(deltas, -0.05, 300, 0.01, simulations=500)
    assert (got["solved_for"], got["pilot_queries"]) == ("power", 200)
    assert got["power"] == expected.power and got["mc_se"] == pytest.approx(expected.mc_se)
    n = json.loads(invoke("power", "--pilot", str(path), "--delta", "-0.05", "--simulations", "500",
                          "--format", "json").stdout)
    assert n["n"] == pilot_sample_size(deltas, -0.05, 0.01, simulations=500)[0] and n["power"] >= 0.8 - 3 * n["mc_se"]
    # the range the pilot's own uncertainty allows, and the measure's default margin
    assert n["n_low"] <= n["n"] <= n["n_high"] and (n["range_level"], n["range_resamples"]) == (0.9, 20)
    text = invoke("power", "--pilot", str(path), "--delta", "-0.05", "--measure", "nDCG@10", "--n", "100",
                  "--simulations", "200")
    assert text.exit_code == 0 and "margin of nDCG@10 0.02" in text.output


@pytest.mark.parametrize("args, message", [
    (["--delta", "-0.05"], "--pilot"),
    (["--pilot", "PILOT"], "--delta"),
    (["--pilot", "PILOT", "--delta", "-0.05", "--effect", "0.3"], "--effect"),
])
def test_pilot_options_go_together(tmp_path, args, message):
    path = tmp_path / "deltas.txt"
    path.write_text("0.1\n-0.2\nnot-a-number\n")
    out = invoke("power", *[str(path) if a == "PILOT" else a for a in args])
    assert out.exit_code != 0 and message in out.output and "Traceback" not in out.output
    bad = invoke("power", "--pilot", str(path), "--delta", "-0.05")
    assert bad.exit_code != 0 and "line 3" in bad.output


def test_a_measure_ir_measures_computes_is_compared_and_named(shared_data):
    folder = shared_data / "scifact"
    out = invoke("compare", str(folder / "qrels.tsv"), str(folder / "runs" / "bm25.trec"),
                 str(folder / "runs" / "itsumida-te3large-zerank1-top15.trec"), "-m", "infAP", "-m", "ndcg_cut_10",
                 "--queries", "answered-by-both")
    assert out.exit_code == 0, out.output
    assert "infAP: computed by ir_measures" in out.stdout and "nDCG@10: computed by" not in out.stdout
