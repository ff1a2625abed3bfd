"""A project with two gold sets (per language): each is its own query set, with its own fingerprint."""

from __future__ import annotations

import pytest

from evalops.config import load_config
from evalops.goldset import GoldSet, load_gold_set, save_gold_set


def _subset(gold: GoldSet, language: str) -> GoldSet:
    queries = gold.queries[gold.queries["language"] == language]
    judgments = gold.judgments[gold.judgments["query_id"].isin(queries["query_id"])]
    return GoldSet.from_frames(queries, judgments, source=language)


@pytest.mark.slow
def test_each_gold_set_is_scored_and_fingerprinted_apart(tmp_path, repo_root):
    from evalops.pipeline import RunContext, run_local
    from evalops.pipeline.store import engine_for
    from evalops.warehouse import RunKey, find_run

    gold = load_gold_set(repo_root / "include" / "goldset")
    for language in ("en", "zh"):
        save_gold_set(_subset(gold, language), tmp_path / language)
    (tmp_path / "evalops.yaml").write_text(
        "gold_sets:\n"
        "  en: {path: en, rules: {min_queries: 20}}\n"
        "  zh: {path: zh, rules: {min_queries: 5, required_types: [semantic], no_answer_share: [0, 1]}}\n"
        f"knowledge_base: {{path: {repo_root / 'include' / 'knowledge_base'}}}\n"
        f"registry: {repo_root / 'include' / 'retrievers.yaml'}\n"
        "log_sample_size: 0\n"
    )
    cfg = load_config(tmp_path, environ={})
    run = RunContext.for_day("2024-06-01")
    result = run_local(cfg, run)
    datasets = sorted({s["dataset"] for s in result["versions"]})
    assert datasets == ["en", "zh"]
    engine = engine_for(cfg)
    en = find_run(engine, RunKey(run.dag_id, run.run_id, "handbook-search", "1.0", "en"))
    zh = find_run(engine, RunKey(run.dag_id, run.run_id, "handbook-search", "1.0", "zh"))
    assert en.status == zh.status == "succeeded"
    assert en.fingerprint.hash != zh.fingerprint.hash
    assert en.n_queries > zh.n_queries > 0
    assert zh.contracts["rules"]["gold_sets"]["zh"]["min_queries"] == 5


def test_each_gold_set_names_itself_in_the_baseline_note_only_when_there_are_several(tiny_project):
    from evalops.pipeline.planning import plan_run

    cfg, run, snapshot_id, gold = tiny_project({"1.0": True}, gold_sets=("en", "zh"))
    alone = "r has no baseline yet, so nothing is compared; promote a run"
    no_sample = {"folder": None, "judged": 0, "version": None}
    specs = plan_run(cfg, run, snapshot_id, gold, no_sample)
    prefixes = {s.dataset: s.baseline_note.partition(alone)[0] for s in specs}
    assert prefixes == {"en": "gold set en: ", "zh": "gold set zh: "}
    [single] = plan_run(cfg, run, snapshot_id, {"en": gold["en"]}, no_sample)
    assert single.baseline_note.partition(alone)[0] == ""
