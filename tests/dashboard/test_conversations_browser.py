"""Conversations in headless Chromium: the A/B page of a comparison decided by conversation (from a pipeline run
on the demo's bilingual conversation set) and the conversation report, both screenshotted and checked."""

from __future__ import annotations

import json
import os
import shutil

import pytest

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def conversational_warehouse(tmp_path_factory, repo_root):
    from evalops.config import load_config
    from evalops.pipeline import RunContext, run_local
    from evalops.pipeline.promotion import promote
    from evalops.pipeline.store import engine_for

    home = tmp_path_factory.mktemp("conversations-home")
    saved = {k: os.environ.pop(k) for k in list(os.environ) if k.startswith("EVALOPS_") and k not in (
        "EVALOPS_SHARED_DATA", "EVALOPS_TEST_ARTIFACTS")}
    try:
        shutil.copytree(repo_root / "include" / "goldset" / "conversations", home / "gold")
        (home / "retrievers.yaml").write_text(
            "retrievers:\n"
            "  - {name: hb, version: '1.0-history', adapter: python, deployed: true, owner: s, params: {entry_point: "
            "'evalops.conversations.retrievers:history_bm25', factory: true, with_corpus: true, "
            "options: {policy: history}}}\n"
            "  - {name: hb, version: '2.0-raw', adapter: builtin, deployed: true, owner: s, params: {kind: bm25}}\n")
        (home / "evalops.yaml").write_text(
            f"gold_set: {{path: gold, rules: {{min_queries: 10}}}}\n"
            f"knowledge_base: {{path: {repo_root / 'include' / 'knowledge_base'}}}\n"
            "registry: retrievers.yaml\nmeasures: [nDCG@10]\nlog_sample_size: 0\n")
        cfg = load_config(home, environ={})
        run_local(cfg, RunContext.for_day("2024-06-01"))
        promote(cfg, retriever="hb", version="1.0-history", promoted_by="test", reason="asks with the history")
        run_local(cfg, RunContext.for_day("2024-06-02"))
    finally:
        os.environ.update(saved)
    return cfg, engine_for(cfg)


def test_ab_page_shows_conversations_and_depth(browser, conversational_warehouse, screenshots):
    from sqlalchemy import text

    from evalops.dashboard import DashboardSettings, create_app
    from tests.dashboard.conftest import Server

    cfg, engine = conversational_warehouse
    with engine.connect() as conn:
        [(ab_id, record)] = conn.execute(text("SELECT a.id, a.record FROM ab_tests a JOIN measures m "
                                              "ON m.id = a.measure_id WHERE m.name = 'nDCG@10'")).all()
    n = (json.loads(record) if isinstance(record, str) else record)["n"]
    assert n == 8  # conversations, not the 20 judged turns
    running = Server(create_app(engine, settings=DashboardSettings.from_config(cfg))).start()
    context = browser.new_context(viewport={"width": 1400, "height": 900})
    try:
        page = context.new_page()
        errors: list[str] = []
        page.on("pageerror", lambda e: errors.append(str(e)))
        page.goto(f"{running.url}/ab/{ab_id}")
        section = page.locator("#conversations")
        assert section.is_visible()
        assert "n = 8 conversations" in section.inner_text()
        assert page.locator("#depth-chart svg polyline.series").count() == 2  # baseline and candidate
        assert page.locator("table.depth tbody tr").count() == 3  # turns 1..3
        assert page.locator("table.conversations tbody tr").count() == 8
        assert page.locator("table.numbers").inner_text().count("8") >= 1
        section.screenshot(path=str(screenshots / "conversations-ab.png"))
        box = page.locator("#depth-chart svg").bounding_box()
        assert box is not None and box["width"] > 300 and box["height"] > 150
        assert errors == []
    finally:
        context.close()
        running.stop()
    assert (screenshots / "conversations-ab.png").stat().st_size > 5_000


def test_conversation_report_in_chromium(browser, tmp_path, screenshots, repo_root):
    from evalops.conversations import load_conversation_gold_set
    from evalops.conversations.evaluate import (
        evaluate_conversations,
        retrieve_conversations,
    )
    from evalops.conversations.report import write_report
    from evalops.formats.beir import read_beir_corpus
    from evalops.retrievers import BM25Retriever
    from evalops.retrievers.corpus import as_corpus

    gold = load_conversation_gold_set(repo_root / "include" / "goldset" / "conversations")
    bm25 = BM25Retriever(as_corpus(read_beir_corpus(repo_root / "include" / "goldset" / "corpus.jsonl")))
    runs = {p: retrieve_conversations(bm25, gold, p, name=p) for p in ("rewrite", "raw", "history")}
    paths = write_report(evaluate_conversations(gold, runs, ["nDCG@10"], baseline="rewrite"), tmp_path)
    context = browser.new_context(viewport={"width": 1200, "height": 900})
    elsewhere: list[str] = []
    try:
        context.route("**/*", lambda route: route.continue_() if route.request.url.startswith("file://")
                      else (elsewhere.append(route.request.url), route.abort()))
        page = context.new_page()
        page.goto(paths["html"].as_uri())
        assert page.locator("#depth-charts svg polyline.series").count() == 3
        assert page.locator("#decisions tbody tr").count() == 2
        assert page.locator("#conversations tbody tr").count() == 8
        assert "Statistical unit: conversation" in page.locator("#policy").inner_text()
        page.screenshot(path=str(screenshots / "conversations-report.png"), full_page=True)
    finally:
        context.close()
    assert elsewhere == []
    assert (screenshots / "conversations-report.png").stat().st_size > 5_000


def test_the_ab_page_counts_turns_in_its_histogram_and_conversations_in_its_decision(
        browser, conversational_warehouse, screenshots):
    """A conversation gold set's per-query values are its judged turns (20), while n, the wins, ties and losses
    count conversations (8): the histogram and its heading say turns, the decision's counts conversations."""
    import re

    from sqlalchemy import text

    from evalops.dashboard import DashboardSettings, create_app
    from tests.dashboard.conftest import Server

    cfg, engine = conversational_warehouse
    with engine.connect() as conn:
        [ab_id] = conn.execute(text("SELECT a.id FROM ab_tests a JOIN measures m ON m.id = a.measure_id "
                                    "WHERE m.name = 'nDCG@10'")).scalars().all()
    running = Server(create_app(engine, settings=DashboardSettings.from_config(cfg))).start()
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    try:
        page = context.new_page()
        page.goto(f"{running.url}/ab/{ab_id}")
        section = page.locator("#per-item")
        assert section.locator("h2").inner_text() == "Per-turn deltas"
        chart = section.locator("svg.histogram")
        assert chart.get_attribute("aria-label") == "distribution of per-turn deltas (20 turns)"
        assert "per-turn delta of nDCG@10 (candidate − baseline)" in chart.text_content()
        bins = [int(t.rsplit(": ", 1)[1]) for t in chart.locator("rect.bin title").all_text_contents()]
        assert sum(bins) == 20  # the histogram counts turns
        wtl = section.locator("p.wtl").inner_text()
        counts = [int(x) for x in re.findall(r"(?:wins|ties|losses) (\d+)", wtl)]
        assert sum(counts) == 8 and "(conversations; the histogram counts turns)" in wtl
        words = page.locator("p.words").inner_text()
        assert "On the gold turns (n = 8 conversations)" in words and f"won on {counts[0]} conversations" in words
        assert page.locator("#worst-queries h2").inner_text() == "Worst turns"
        section.screenshot(path=str(screenshots / "conversations-ab-histogram.png"))
    finally:
        context.close()
        running.stop()
