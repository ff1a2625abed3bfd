"""The suites as data (no Great Expectations import) and the readable report."""

from __future__ import annotations

import sys
from datetime import datetime, timezone

import pandas as pd
import pytest

from evalops.errors import ConfigError, ValidationError
from evalops.contracts import GoldSetRules, KnowledgeBaseRules, QueryLogRules
from evalops.goldset import GoldSet
from evalops.contracts.checks import gold_set_tables, knowledge_base_tables, query_log_tables
from evalops.contracts.report import Failure, ValidationReport

UTC = timezone.utc


def test_importing_the_packages_does_not_import_great_expectations(repo_root) -> None:
    import subprocess

    code = "import sys, evalops.goldset, evalops.querylog, evalops.knowledge; print('great_expectations' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=repo_root, check=True)
    assert out.stdout.strip() == "False"


def test_gold_tables_derive_offending_ids(make_frames, rules: GoldSetRules) -> None:
    q, j = make_frames()
    j.loc[len(j)] = ["q99", "d1", 1]  # judged query that does not exist
    j.loc[len(j)] = ["q10", "d3", 2]  # the no_answer query gets a relevant doc
    gold = GoldSet.from_frames(q, j)
    queries, judgments = gold_set_tables(gold, pd.Series(["d1", "d2"]), "kb1", rules)
    assert queries.frame["no_answer_with_relevant_judgment"].dropna().tolist() == ["q10"]
    assert queries.frame["answerable_without_relevant_judgment"].dropna().tolist() == []
    assert judgments.frame["query_id_not_in_queries"].dropna().tolist() == ["q99"]
    assert "d1" not in set(judgments.frame["doc_id_missing_from_kb"].dropna())
    rules_named = [c.rule for c in queries.checks + judgments.checks]
    assert "every judged doc exists in the knowledge-base snapshot kb1" in rules_named
    assert queries.frame["is_no_answer"].mean() == pytest.approx(0.1)


def test_gold_tables_without_snapshot_skip_only_the_stale_check(gold: GoldSet, rules: GoldSetRules) -> None:
    tables = gold_set_tables(gold, None, None, rules)
    names = [c.rule for t in tables for c in t.checks]
    assert len(names) == 12 and not any("knowledge-base" in n for n in names)


def test_kb_and_log_checks_cover_the_contract() -> None:
    kb = knowledge_base_tables(pd.DataFrame({"doc_id": ["a"], "text": ["x"], "title": [""]}), KnowledgeBaseRules())
    assert {c.rule for c in kb[0].checks} == {"unique document ids", "document text present", "non-empty document text", "minimum number of documents"}
    rules = QueryLogRules(datetime(2025, 3, 1, tzinfo=UTC), datetime(2025, 3, 2, tzinfo=UTC), ("v1",))
    frame = pd.DataFrame({"timestamp": pd.to_datetime(["2025-03-01T01:00Z"], utc=True), "query": ["q"], "retriever_version": ["v1"]})
    table = query_log_tables(frame, pd.Series([None], dtype=object), rules)[0]
    rule_names = {c.rule for c in table.checks}
    assert "required column 'segment' present" in rule_names  # missing column: reported, not crashed on
    assert "segment is text" not in rule_names
    assert {"timestamps inside the run's data interval", "known retriever versions", "non-empty query text",
            "share of malformed rows within bounds", "window is not empty"} <= rule_names
    assert all(c.kwargs.get("mostly", rules.mostly) == rules.mostly for c in table.checks if "mostly" in c.kwargs)


def test_rules_refuse_nonsense() -> None:
    with pytest.raises(ConfigError, match="no_answer_share"):
        GoldSetRules(no_answer_share=(0.5, 0.1))
    with pytest.raises(ConfigError, match="required_types"):
        GoldSetRules(required_types=("easy",))
    with pytest.raises(ConfigError, match="timezone-aware"):
        QueryLogRules(datetime(2025, 3, 1), datetime(2025, 3, 2), ("v1",))
    with pytest.raises(ConfigError, match="empty"):
        QueryLogRules(datetime(2025, 3, 2, tzinfo=UTC), datetime(2025, 3, 1, tzinfo=UTC), ("v1",))
    with pytest.raises(ConfigError, match="known_versions"):
        QueryLogRules(datetime(2025, 3, 1, tzinfo=UTC), datetime(2025, 3, 2, tzinfo=UTC), ())


def test_report_summary_and_raise() -> None:
    failures = [
        Failure("unique query ids", "expect_column_values_to_be_unique", "gold_queries", "query_id", 2, 10, ["q2"]),
        Failure("no_answer share within bounds", "expect_column_mean_to_be_between", "gold_queries", "is_no_answer",
                observed=0.4123456, expected="between 0.05 and 0.3"),
        Failure("each query type present", "expect_column_distinct_values_to_contain_set", "gold_queries", "type",
                missing=["keyword"]),
    ]
    report = ValidationReport("gold set", "gold set x", 12, failures, docs_path="/tmp/docs/index.html")
    text = report.summary()
    assert text.splitlines()[0] == "gold set contract FAILED 3 of 12 expectations: gold set x"
    assert "- unique query ids [expect_column_values_to_be_unique on gold_queries.query_id]: 2 of 10 rows failed; e.g. 'q2'" in text
    assert "observed 0.4123; expected between 0.05 and 0.3" in text
    assert "missing 'keyword'" in text
    assert text.endswith("Data Docs: /tmp/docs/index.html")
    with pytest.raises(ValidationError) as info:
        report.raise_if_failed()
    assert info.value.docs_path == "/tmp/docs/index.html"
    assert [f["rule"] for f in info.value.failures] == [f.rule for f in failures]
    assert info.value.failures[1]["observed"] == pytest.approx(0.4123456)
    ok = ValidationReport("gold set", "gold set x", 12, [])
    assert ok.raise_if_failed() is ok and ok.summary() == "gold set contract passed (12 expectations): gold set x"
