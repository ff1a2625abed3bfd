"""The demo's bilingual conversation set over the handbook, and the command line."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner


def test_demo_set_is_bilingual_and_valid(repo_root, tmp_path):
    from evalops.conversations.demo import demo_conversations

    results, paths = demo_conversations(repo_root, tmp_path)
    d = results.describe
    assert (d["conversations"], d["turns"], d["judged_turns"], d["max_depth"]) == (8, 20, 20, 3)
    rows = [json.loads(x) for x in (repo_root / "include/goldset/conversations/conversations.jsonl").read_text(
        encoding="utf-8").splitlines()]
    assert {r["language"] for r in rows} == {"en", "zh"}
    assert all("rewrite" in r for r in rows if r["turn"] > 1)
    s = {v: results.scores[(v, "nDCG@10")] for v in results.versions}
    assert s["raw"].depth[0].mean == s["rewrite"].depth[0].mean == s["history"].depth[0].mean  # turn 1: same query
    assert s["raw"].depth[1].mean < s["rewrite"].depth[1].mean  # turn 2 refers back: the raw turn loses
    assert all(c.n == 8 for c in results.comparisons)
    html = paths["html"].read_text(encoding="utf-8")
    assert "travel-zh" in html and "<script" not in html


def test_cli_gate_and_formats(repo_root, tmp_path):
    from evalops.cli import main

    gold = repo_root / "include/goldset/conversations"
    corpus = repo_root / "include/knowledge_base/corpus.jsonl"
    args = ["conversations", str(gold), "rw=bm25:rewrite", "raw=bm25:raw", "--corpus", str(corpus), "-m", "nDCG@10"]
    out = CliRunner().invoke(main, [*args, "--format", "json"])
    assert out.exit_code == 0, out.output
    data = json.loads(out.output)
    assert data["policy"]["unit"] == "conversation" and data["policy"]["queries"] == {"raw": "raw", "rw": "rewrite"}
    [comp] = data["comparisons"]
    assert comp["n"] == 8
    bad = CliRunner().invoke(main, ["conversations", str(gold), "bm25:paraphrase", "bm25:raw", "--corpus", str(corpus),
                                    "-m", "nDCG@10"])
    assert bad.exit_code == 3 and "bm25:POLICY with POLICY one of ['raw', 'history', 'rewrite']" in bad.output


def test_cli_fails_on_a_regression_by_conversation(tmp_path):
    """Planted runs: the candidate loses every later turn; exit 4 with --fail-on-regression, n = conversations."""
    from evalops.cli import main

    turns, qrels, base, cand = [], ["query-id\tcorpus-id\tscore"], [], []
    for c in range(12):
        for t in (1, 2, 3):
            q = f"c{c}_{t}"
            turns.append({"conversation_id": f"c{c}", "turn": t, "question": f"question {t} of {c}"})
            qrels.append(f"{q}\td{c}{t}\t1")
            base.append(f"{q} Q0 d{c}{t} 1 10 b")
            cand.append(f"{q} Q0 {f'd{c}{t}' if t == 1 else 'other'} 1 10 c")
    (tmp_path / "g").mkdir()
    (tmp_path / "g/conversations.jsonl").write_text("".join(json.dumps(r) + "\n" for r in turns))
    (tmp_path / "g/qrels.tsv").write_text("\n".join(qrels) + "\n")
    (tmp_path / "b.trec").write_text("\n".join(base) + "\n")
    (tmp_path / "c.trec").write_text("\n".join(cand) + "\n")
    out = CliRunner().invoke(main, ["conversations", str(tmp_path / "g"), f"base={tmp_path / 'b.trec'}",
                                    f"cand={tmp_path / 'c.trec'}", "-m", "nDCG@10", "--fail-on-regression",
                                    "--format", "json", "--report", str(tmp_path / "rep")])
    assert out.exit_code == 4, out.output
    comp = json.loads(out.output)["comparisons"][0]
    assert comp["n"] == 12 and comp["decision"] == "regression"
    assert comp["delta"] == pytest.approx(-2 / 3)
    assert (tmp_path / "rep/conversations.md").is_file()


def test_untrusted_ids_are_escaped(tmp_path):
    from evalops.conversations import load_conversation_gold_set
    from evalops.conversations.evaluate import evaluate_conversations
    from evalops.conversations.report import render_html, render_markdown

    (tmp_path / "conversations.jsonl").write_text(
        json.dumps({"conversation_id": "<img src=x onerror=alert(1)>|x", "turn": 1, "question": "q"}) + "\n")
    (tmp_path / "qrels.tsv").write_text("query-id\tcorpus-id\tscore\n<img src=x onerror=alert(1)>|x_1\td\t1\n")
    gold = load_conversation_gold_set(tmp_path)
    results = evaluate_conversations(gold, {"a|<b>": {"<img src=x onerror=alert(1)>|x_1": {"d": 1.0}}}, ["P@1"],
                                     baseline="a|<b>")
    html = render_html(results)
    assert "<img" not in html and "&lt;img src=x onerror=alert(1)&gt;|x" in html
    md = render_markdown(results)
    assert "<img" not in md and "&lt;img src=x onerror=alert(1)>\\|x" in md  # no HTML, no extra table cell


def _run_report(folder):
    from evalops.reports import ReportData, write_report

    return write_report(ReportData(run_key="cli/cli__2024-06-02", day="2024-06-02", generated_at="now",
                                   fingerprint="fp", fingerprint_components={}, policies={}, versions=[],
                                   ab_results=[]), folder)


def test_the_demo_links_its_conversations_report_from_the_day_s_run_report(repo_root, tmp_path):
    """The demo writes the conversations report into the day's run folder after that run's report: the run
    report links it then (a relative link under its title)."""
    from evalops.cli.pipeline import _echo_conversations

    run = _run_report(tmp_path)
    assert "conversations" not in run.html.read_text()
    _echo_conversations(repo_root, run.directory / "conversations")
    assert (run.directory / "conversations" / "conversations.html").is_file()
    assert '<a href="conversations/conversations.html">conversations report</a>' in run.html.read_text()
    assert "[conversations report](conversations/conversations.html)" in run.markdown.read_text()


def test_cli_report_into_a_run_folder_is_linked_from_the_run_report(repo_root, tmp_path):
    from evalops.cli import main

    run = _run_report(tmp_path)
    gold = repo_root / "include/goldset/conversations"
    corpus = repo_root / "include/knowledge_base/corpus.jsonl"
    out = CliRunner().invoke(main, ["conversations", str(gold), "rw=bm25:rewrite", "raw=bm25:raw", "--corpus",
                                    str(corpus), "-m", "nDCG@10", "--report", str(run.directory)])
    assert out.exit_code == 0, out.output
    assert '<a href="conversations.html">conversations report</a>' in run.html.read_text()
