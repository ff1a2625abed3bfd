"""A contract that passed on the same content, rules and checks is not run again: the run reuses its outcome
and says so. Another content, other rules or a failure validate (again)."""

from __future__ import annotations

import json
import shutil

import pytest

from evalops.errors import ValidationError


@pytest.fixture
def suite_runs(monkeypatch):
    """How many times a contract suite went through Great Expectations."""
    from evalops.contracts import validation

    calls: list[str] = []
    real = validation.run_tables

    def counted(prefix, tables, docs_dir):
        calls.append(prefix)
        return real(prefix, tables, docs_dir)

    monkeypatch.setattr(validation, "run_tables", counted)
    return calls


def _project(tmp_path, repo_root, kb_rules: str = "{}", gold_rules: str = "{}"):
    from evalops.config import load_config

    kb = tmp_path / "kb"
    if not kb.exists():
        shutil.copytree(repo_root / "include" / "knowledge_base", kb)
    (tmp_path / "evalops.yaml").write_text(
        f"gold_set: {{path: {repo_root / 'include' / 'goldset'}, rules: {gold_rules}}}\n"
        f"knowledge_base: {{path: {kb}, rules: {kb_rules}}}\nregistry: r.yaml\n")
    return load_config(tmp_path, environ={})


def _inputs(cfg, day: str) -> dict:
    from evalops.pipeline import RunContext
    from evalops.pipeline.inputs import load_contracts, snapshot_knowledge_base, validate_inputs
    from evalops.pipeline.store import migrate_warehouse

    run = RunContext.for_day(day)
    migrate_warehouse(cfg, run)
    validate_inputs(cfg, run, snapshot_knowledge_base(cfg, run))
    return load_contracts(cfg, run)


def test_the_same_content_under_the_same_rules_is_validated_once(tmp_path, repo_root, suite_runs):
    cfg = _project(tmp_path, repo_root)
    first = _inputs(cfg, "2024-06-01")
    assert suite_runs == ["knowledge_base", "gold_set"]
    assert not any("reused_from" in outcome for outcome in first.values())

    second = _inputs(cfg, "2024-06-02")
    assert suite_runs == ["knowledge_base", "gold_set"]  # no second pass through Great Expectations
    for key, outcome in second.items():
        reused = outcome.pop("reused_from")
        assert reused["run"].endswith("2024-06-01") and reused["at"]
        assert outcome == first[key]  # the same outcome: checked expectations, rules, warnings, Data Docs

    from evalops.pipeline.publishing import contract_notes

    notes = contract_notes(_inputs(cfg, "2024-06-03"))
    assert sum("not validated again" in n for n in notes) == 2


def test_other_rules_or_other_content_validate_again(tmp_path, repo_root, suite_runs):
    cfg = _project(tmp_path, repo_root)
    _inputs(cfg, "2024-06-01")
    assert len(suite_runs) == 2

    stricter = _project(tmp_path, repo_root, kb_rules="{max_empty_share: 0.02}")
    outcomes = _inputs(stricter, "2024-06-02")
    assert suite_runs[2:] == ["knowledge_base"]  # the gold set's rules and content did not change
    assert "reused_from" not in outcomes["knowledge_base"] and "reused_from" in outcomes["gold_set:gold"]

    corpus = tmp_path / "kb" / "corpus.jsonl"
    corpus.write_text(corpus.read_text().replace('"text":"', '"text":"edited ', 1))
    outcomes = _inputs(stricter, "2024-06-03")
    assert suite_runs[3:] == ["knowledge_base", "gold_set"]  # a new snapshot: both contracts on it
    assert not any("reused_from" in outcome for outcome in outcomes.values())


def test_a_failed_contract_is_not_remembered(tmp_path, repo_root, suite_runs):
    from evalops.pipeline.workdir import work_root

    cfg = _project(tmp_path, repo_root, gold_rules="{min_queries: 100000}")
    for day in ("2024-06-01", "2024-06-02"):
        with pytest.raises(ValidationError):
            _inputs(cfg, day)
    assert suite_runs == ["knowledge_base", "gold_set", "gold_set"]  # the knowledge base passed once
    remembered = [json.loads(p.read_text())["contract"] for p in (work_root(cfg) / "validations").iterdir()]
    assert remembered == ["knowledge base"]


def test_a_run_on_remembered_validations_scores_as_one_that_validated(repo_root, planted_project, suite_runs):
    """Day 2 of the planted project reuses day 1's outcomes; its per-query values are day 1's."""
    from evalops.goldset import load_gold_set
    from evalops.pipeline.inputs import load_contracts
    from evalops.pipeline.store import engine_for
    from evalops.warehouse import load_scores
    from evalops.warehouse.history import latest_per_logical_date

    gold = load_gold_set(repo_root / "include" / "goldset")
    from test_prepared_inputs import _ranked

    ranked, worse = _ranked(gold, planted_project.pads)
    cfg, day2, result = planted_project(gold, ranked, worse, ["nDCG@5", "R@10"])
    assert suite_runs == ["knowledge_base", "gold_set"]  # day 1 only
    assert all("reused_from" in outcome for outcome in load_contracts(cfg, day2).values())
    runs = latest_per_logical_date(engine_for(cfg), include_superseded=True)
    for version, rows in runs.groupby("version"):
        day1, day2_ = (load_scores(engine_for(cfg), int(i)).sort_values(["measure", "query_id"]).reset_index(drop=True)
                       for i in rows.sort_values("logical_date")["run_id"])
        assert day1.equals(day2_), version
