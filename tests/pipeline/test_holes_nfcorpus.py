"""The issue's acceptance on NFCorpus: sparse, graded judgments (grades 1 and 2, no 0), BM25 baseline.

NFCorpus's qrels judge about 31 % of BM25's top 10, so most of what a changed retriever puts in its top 10 is
unjudged. The project's baseline is the built-in BM25 (day 1, promoted); day 2 deploys four candidates:

* ``half-index``: the built-in BM25 over half the knowledge base (``index_fraction: 0.5``);
* ``half-empty``: the baseline's ranking as a run file with every other query left out, ``missing: empty``;
* ``shuffled``: the baseline's ranking with each query's top 10 shuffled (seeded);
* ``dense``: the built-in dense retriever (wordllama, 256 dimensions).

What each one is today (nDCG@10, family of four):

=============  ===============================================  ==========  ===========================
candidate      decision (pipeline)                              alert kind  why
=============  ===============================================  ==========  ===========================
half-index     regression (critical, unjudged_documents)        regression  condensed lists show it
half-empty     regression (critical, unjudged_documents)        regression  both bounds show it
shuffled       regression (warning)                             regression  coverage unchanged
dense          inconclusive (unjudged_documents)                unjudged    bounds disagree, condensed
                                                                            lists inconclusive
=============  ===============================================  ==========  ===========================

``evalops compare`` on the run files agrees with the gate when the inputs are the same; a run file's absent
queries are *unanswered* for ``compare`` (a partial run) and *empty answers* under ``missing: empty`` in the
pipeline, so the two halves differ there, on the kind only. Judging the candidates' new documents relevant
clears them; identical runs and runs that differ only in the file order of tied documents raise nothing.
"""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest
from click.testing import CliRunner

from evalops.cli import main
from evalops.exitcodes import ExitCode

pytestmark = pytest.mark.slow

DAY1, DAY2, DAY3 = "2024-06-01", "2024-06-02", "2024-06-03"
CANDIDATES = ("half-index", "half-empty", "shuffled", "dense")
FAIL_ON = "regression,unjudged,partial"
# what each candidate is today, in the pipeline (evalops run / gate): (decision, severity, reason_code, kind)
PIPELINE = {
    "half-index": ("regression", "critical", "unjudged_documents", "regression"),
    "half-empty": ("regression", "critical", "unjudged_documents", "regression"),
    "shuffled": ("regression", "warning", None, "regression"),
    "dense": ("inconclusive", None, "unjudged_documents", "unjudged"),
}
ALERT_KIND = {"regression": "regression", "unjudged": "unjudged", "partial": "partial_run"}
TITLE = {"regression": "Regression", "unjudged": "Unconfirmed drop (unjudged documents)",
         "partial_run": "Unconfirmed drop (partial run)"}


def _cli(*args: str):
    return CliRunner().invoke(main, [str(a) for a in args], catch_exceptions=False)


def _json(output: str) -> dict:
    return json.loads(output[output.index("{"):])


def _read_run(path: Path) -> dict[str, list[tuple[str, str]]]:
    """``{query: [(doc, score text), ...]}`` in rank order."""
    ranked: dict[str, list[tuple[int, str, str]]] = {}
    for line in path.read_text().splitlines():
        q, _, d, rank, score, *_ = line.split()
        ranked.setdefault(q, []).append((int(rank), d, score))
    return {q: [(d, s) for _, d, s in sorted(rows)] for q, rows in ranked.items()}


def _write(path: Path, ranked: dict[str, list[tuple[str, str]]], tag: str) -> Path:
    with path.open("w") as out:
        for q in sorted(ranked):
            out.writelines(f"{q} Q0 {d} {r + 1} {s} {tag}\n" for r, (d, s) in enumerate(ranked[q]))
    return path


def _registry(home: Path, entries: dict[str, str]) -> None:
    (home / "retrievers.yaml").write_text("retrievers:\n" + "".join(
        f"  - {{name: search, version: '{v}', deployed: true, owner: me, {spec}}}\n" for v, spec in entries.items()))


BM25 = "adapter: builtin, params: {kind: bm25, k1: 0.9, b: 0.4}"


def _run_file(path: Path) -> str:
    return f"adapter: run_file, params: {{path: '{path}', missing: empty}}"


@pytest.fixture(scope="module")
def nf(shared_data, tmp_path_factory):
    """Day 1 (BM25, promoted), day 2 (four candidates: run, then gate), the run files and the gate's JSON."""
    data = shared_data / "nfcorpus-orig-test"
    if not data.is_dir():
        pytest.skip(f"NFCorpus not found at {data}")
    root = tmp_path_factory.mktemp("nfcorpus")
    home = root / "proj"
    home.mkdir()
    with pytest.MonkeyPatch.context() as mp:  # a developer's EVALOPS_* must not leak into the project
        import os

        for key in [k for k in os.environ if k.startswith("EVALOPS_") and k != "EVALOPS_SHARED_DATA"]:
            mp.delenv(key)
        (home / "evalops.yaml").write_text(
            f"gold_set: {{path: '{data}'}}\nknowledge_base: {{path: '{data / 'corpus.jsonl'}'}}\n"
            f"registry: retrievers.yaml\nmeasures: [nDCG@10]\nlog_sample_size: 0\n"
            f"warehouse_url: 'sqlite:///{home / 'warehouse.db'}'\n")
        _registry(home, {"1.0": BM25})
        day1 = _cli("run", "--project", home, "--date", DAY1)
        assert day1.exit_code == 0, day1.output
        promoted = _cli("promote", "search", "1.0", "--project", home, "--reason", "day 1", "--by", "tests")
        assert promoted.exit_code == 0, promoted.output

        # the baseline's own ranking as a run file, then the planted variants of it
        bm25 = root / "bm25.trec"
        got = _cli("retrieve", "search@1.0", "--dataset", data, "-o", bm25, "--registry", home / "retrievers.yaml")
        assert got.exit_code == 0, got.output
        ranked = _read_run(bm25)
        half = _write(root / "half.trec", {q: rows for i, (q, rows) in enumerate(sorted(ranked.items()))
                                           if i % 2 == 0}, "half")
        rng = random.Random(7)
        shuffled = {}
        for q in sorted(ranked):
            top = [d for d, _ in ranked[q][:10]]
            rng.shuffle(top)
            docs = top + [d for d, _ in ranked[q][10:]]
            shuffled[q] = [(d, str(1000 - r)) for r, d in enumerate(docs)]
        shuffled_path = _write(root / "shuffled.trec", shuffled, "shuffled")

        _registry(home, {"1.0": BM25,
                         "half-index": "adapter: builtin, params: {kind: bm25, k1: 0.9, b: 0.4, index_fraction: 0.5}",
                         "half-empty": _run_file(half), "shuffled": _run_file(shuffled_path),
                         "dense": "adapter: builtin, params: {kind: dense, model: wordllama, dim: 256}"})
        day2 = _cli("run", "--project", home, "--date", DAY2, "--fail-on-regression")
        gate = _cli("gate", "--project", home, "--date", DAY2, "--junit-xml", root / "junit.xml", "--format", "json")

        # the two built-in candidates as run files too, for `evalops compare` (the retrievers are deterministic)
        files = {"bm25": bm25, "half-empty": half, "shuffled": shuffled_path}
        for version in ("half-index", "dense"):
            files[version] = root / f"{version}.trec"
            got = _cli("retrieve", f"search@{version}", "--dataset", data, "-o", files[version],
                       "--registry", home / "retrievers.yaml")
            assert got.exit_code == 0, got.output
        yield {"home": home, "data": data, "root": root, "day2": day2, "gate": gate, "files": files,
               "ranked": ranked}


def _engine(home: Path):
    from evalops.config import load_config
    from evalops.pipeline.store import engine_for

    return engine_for(load_config(home, environ={}))


def _cases(nf) -> dict[str, dict]:
    return {c["version"]: c for c in _json(nf["gate"].output)["gate"]["cases"]}


def _compare(nf, qrels: Path, *candidates: Path, more: tuple[str, ...] = ()):
    result = _cli("compare", qrels, nf["files"]["bm25"], *candidates, "-m", "nDCG@10", "--fail-on", FAIL_ON,
                  "--format", "json", *more)
    return result.exit_code, _json(result.output)


def test_the_baseline_top_10_is_sparsely_judged(nf):
    cases = _cases(nf)
    judged = {c["judged_coverage"]["baseline"] for v, c in cases.items() if v != "1.0"}
    [baseline_judged] = judged  # one baseline, the same Judged@10 in every comparison
    assert 0.25 < baseline_judged < 0.5
    assert baseline_judged == pytest.approx(0.3141, abs=1e-4)
    assert cases["shuffled"]["baseline_mean"] == pytest.approx(0.3329, abs=1e-4)  # BM25's nDCG@10 (README)


def test_evalops_run_raises_one_alert_per_candidate_of_its_kind(nf):
    day2 = nf["day2"]
    # --fail-on-regression: the project's fail_on (regression, unjudged, partial, ...) fails the run, exit 4
    assert day2.exit_code == ExitCode.REGRESSION == 4, day2.output
    printed = sorted(line for line in day2.stdout.splitlines() if line.startswith("ALERT  "))
    expected = sorted(f"ALERT  {TITLE[ALERT_KIND[PIPELINE[v][3]]]}: search {v} on nDCG@10" for v in CANDIDATES)
    assert [p.rsplit(" (", 1)[0] for p in printed] == expected  # the title without "(before -> after)"

    from evalops.warehouse import list_alerts

    import datetime as dt

    alerts = list_alerts(_engine(nf["home"]), since=dt.date.fromisoformat(DAY2))
    by_version = {}
    for a in alerts.itertuples(index=False):
        by_version.setdefault(a.version, []).append(a)
    assert sorted(by_version) == sorted(CANDIDATES)  # the baseline version raises nothing
    for version, found in by_version.items():
        assert len(found) == 1, (version, [a.kind for a in found])  # exactly one alert per candidate
        [alert] = found
        assert alert.kind == ALERT_KIND[PIPELINE[version][3]], version
        assert alert.measure == "nDCG@10"
        assert alert.payload["judged_coverage"]["bound"] == "pair"
    # an unconfirmed drop alerts as a warning; the regressions carry their decision's severity
    assert {v: a[0].severity for v, a in by_version.items()} == {
        "half-index": "critical", "half-empty": "critical", "shuffled": "warning", "dense": "warning"}


def test_the_gate_fails_every_candidate_with_its_kind(nf):
    gate = nf["gate"]
    assert gate.exit_code == ExitCode.REGRESSION == 4
    payload = _json(gate.output)
    assert payload["gate"]["exit_code"] == 4
    cases = _cases(nf)
    assert cases["1.0"]["outcome"] == "passed" and cases["1.0"]["kind"] is None
    for version, (decision, severity, reason, kind) in PIPELINE.items():
        case = cases[version]
        assert (case["outcome"], case["decision"], case["severity"], case["reason_code"], case["kind"]) == (
            "failure", decision, severity, reason, kind), version
    j = {v: cases[v]["judged_coverage"] for v in CANDIDATES}
    # half-index: the bounds disagree, the judged documents alone (condensed lists) show the drop
    assert j["half-index"]["holes_relevant_delta"] > 0 > j["half-index"]["condensed_delta"]
    assert cases["half-index"]["delta"] == pytest.approx(-0.1590, abs=1e-4)
    assert j["half-index"]["condensed_delta"] == pytest.approx(-0.2632, abs=1e-4)
    # half-empty: nothing it ranks is new, so even the optimistic bound is the drop as judged
    assert j["half-empty"]["holes_relevant_delta"] == pytest.approx(cases["half-empty"]["delta"], abs=1e-12)
    assert cases["half-empty"]["delta"] == pytest.approx(-0.1648, abs=1e-4)
    assert j["half-empty"]["holes_pessimistic_delta"] == pytest.approx(-0.4162, abs=1e-4)
    # shuffled: the same top-10 set, so the judged coverage does not move and the judged delta decides
    assert j["shuffled"]["difference"] == 0 and cases["shuffled"]["delta"] == pytest.approx(-0.0455, abs=1e-4)
    # dense: the bounds straddle 0 widely and the condensed lists cannot tell: held, failing closed
    assert j["dense"]["holes_relevant_delta"] > 0.5 and j["dense"]["holes_pessimistic_delta"] < -0.5
    assert -0.1 < j["dense"]["condensed_delta"] < 0 and cases["dense"]["delta"] == pytest.approx(-0.0992, abs=1e-4)
    for version in CANDIDATES:
        assert j[version]["difference"] < -0.1 or version == "shuffled"  # past max_judged_coverage_drop


def test_compare_fails_exactly_when_the_gate_does_with_the_same_kind_on_the_same_inputs(nf):
    data, files, cases = nf["data"], nf["files"], _cases(nf)
    qrels = data / "qrels.tsv"
    # one candidate per call (a family of one: the interval is narrower than the gate's family of four)
    code, report = _compare(nf, qrels, files["shuffled"])
    [shuffled] = report["comparisons"]
    assert code == ExitCode.REGRESSION and cases["shuffled"]["outcome"] == "failure"
    assert (shuffled["decision"], shuffled["kind"]) == ("regression", cases["shuffled"]["kind"])
    code, report = _compare(nf, qrels, files["half-empty"])
    [half] = report["comparisons"]
    # half-empty fails both ways, with different kinds: the run file's absent queries are unanswered for
    # compare (154 of the 323 judged queries answered, under min_coverage 0.9: a partial run, exit 5), while
    # `missing: empty` makes them empty answers in the pipeline (all 323 answered, a regression)
    assert code == ExitCode.VERSION_FAILED == 5 and cases["half-empty"]["outcome"] == "failure"
    assert (half["decision"], half["reason_code"], half["kind"]) == ("inconclusive", "partial_run", "partial")
    assert half["coverage"]["candidate_answered"] == 154
    assert cases["half-empty"]["coverage"]["candidate_answered"] == 323

    # all four run files in one call: the same family of four as the gate's, so the same numbers
    code, report = _compare(nf, qrels, files["half-index"], files["half-empty"], files["shuffled"], files["dense"])
    assert code == ExitCode.VERSION_FAILED  # partial (5) is the most severe of the failing kinds
    records = dict(zip(CANDIDATES, report["comparisons"]))
    for version, record in records.items():
        case = cases[version]
        assert record["family_size"] == case["family_size"] == 4
        for field in ("delta", "interval_low", "interval_high", "p_adjusted"):
            assert record[field] == pytest.approx(case[field], abs=1e-12), (version, field)
        for field in ("baseline", "candidate", "holes_relevant_delta", "holes_pessimistic_delta", "condensed_delta"):
            assert record["judged_coverage"][field] == pytest.approx(case["judged_coverage"][field], abs=1e-12), (
                version, field)
        assert (record["kind"] is not None) == (case["outcome"] == "failure")  # fails exactly when the gate's does
    for version in ("shuffled", "dense"):  # the same inputs: the same record
        case = cases[version]
        assert (records[version]["decision"], records[version]["severity"], records[version]["reason_code"],
                records[version]["kind"]) == (case["decision"], case["severity"], case["reason_code"], case["kind"])
    for version in ("half-index", "half-empty"):  # 284 and 154 of 323 answered as run files: partial runs
        assert (records[version]["reason_code"], records[version]["kind"]) == ("partial_run", "partial")
        assert cases[version]["kind"] == "regression"


def _judged_relevant(qrels: Path, ranked: dict[str, list[str]], out: Path) -> Path:
    """A copy of ``qrels`` with every unjudged document of ``ranked``'s top 10 added at grade 2."""
    lines = qrels.read_text().splitlines()
    judged = {tuple(line.split("\t")[:2]) for line in lines[1:]}
    added = sorted({(q, d) for q, docs in ranked.items() for d in docs[:10] if (q, d) not in judged})
    out.write_text("\n".join(lines + [f"{q}\t{d}\t2" for q, d in added]) + "\n")
    return out


def test_judging_the_new_documents_relevant_clears_the_candidates(nf):
    data, files, root = nf["data"], nf["files"], nf["root"]
    seen = {}
    for version in CANDIDATES:
        ranked = {q: [d for d, _ in rows] for q, rows in _read_run(files[version]).items()}
        qrels = _judged_relevant(data / "qrels.tsv", ranked, root / f"qrels-{version}.tsv")
        code, report = _compare(nf, qrels, files[version])
        [record] = report["comparisons"]
        seen[version] = (code, record)
        assert record["decision"] != "regression", version
    # the shuffled top 10 and the dense retriever's new documents, judged relevant: nothing to fail
    code, shuffled = seen["shuffled"]
    assert (code, shuffled["decision"], shuffled["kind"]) == (0, "no_change", None)
    assert 0 <= shuffled["delta"] < 0.02
    code, dense = seen["dense"]
    assert (code, dense["decision"], dense["kind"]) == (0, "improvement", None)
    assert dense["delta"] > 0.5
    # half-index as a run file leaves out the 39 queries its half of the index answers with nothing (284 of
    # 323 answered): a partial run, but a gain, so kind `inconclusive`, which --fail-on leaves out (exit 0)
    code, half_index = seen["half-index"]
    assert (code, half_index["reason_code"], half_index["kind"]) == (0, "partial_run", "inconclusive")
    assert half_index["delta"] > 0
    # half-empty has no new document (it is a subset of the baseline): judging cannot clear a run that
    # answers half the queries with nothing; still a drop (partial as a run file)
    code, half_empty = seen["half-empty"]
    assert (code, half_empty["kind"]) == (ExitCode.VERSION_FAILED, "partial") and half_empty["delta"] < -0.1


def test_identical_runs_and_reordered_ties_raise_nothing(nf):
    files, root, home = nf["files"], nf["root"], nf["home"]
    # the same scores, each run of tied scores written in reverse line order (and ranks renumbered)
    reordered, moved = {}, 0
    for q, rows in nf["ranked"].items():
        out, i = [], 0
        while i < len(rows):
            j = i
            while j < len(rows) and float(rows[j][1]) == float(rows[i][1]):
                j += 1
            out.extend(reversed(rows[i:j]))
            moved += (j - i > 1)
            i = j
        reordered[q] = out
    assert moved > 100  # BM25 on preprocessed text ties often: the copy really differs in file order
    ties = _write(root / "ties.trec", reordered, "ties")
    assert ties.read_text() != files["bm25"].read_text()

    for candidate in (files["bm25"], ties):
        code, report = _compare(nf, nf["data"] / "qrels.tsv", candidate)
        [record] = report["comparisons"]
        assert (code, record["decision"], record["kind"], record["delta"]) == (0, "no_change", None, 0)
        j = record["judged_coverage"]
        assert (j["holes_relevant_delta"], j["holes_pessimistic_delta"], j["condensed_delta"]) == (0, 0, 0)

    # the pipeline: both as candidates of the BM25 baseline on day 3, no alert
    _registry(home, {"1.0": BM25, "identical": _run_file(files["bm25"]), "ties": _run_file(ties)})
    day3 = _cli("run", "--project", home, "--date", DAY3, "--fail-on-regression", "--format", "json")
    assert day3.exit_code == 0, day3.output
    payload = _json(day3.output)
    assert payload["alerts"] == []
    import datetime as dt

    from evalops.warehouse import list_alerts

    assert list_alerts(_engine(home), since=dt.date.fromisoformat(DAY3)).empty
    gate = _cli("gate", "--project", home, "--date", DAY3, "--junit-xml", root / "junit3.xml", "--format", "json")
    assert gate.exit_code == 0
    cases = {c["version"]: c for c in _json(gate.output)["gate"]["cases"]}
    for version in ("identical", "ties"):
        assert (cases[version]["outcome"], cases[version]["decision"], cases[version]["kind"]) == (
            "passed", "no_change", None), version
        assert cases[version]["delta"] == 0
