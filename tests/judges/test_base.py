"""Missing labels: counted by reason, checked against the budget; the fingerprint names the judge's kind."""

from __future__ import annotations

import pytest

from evalops.errors import InputError
from evalops.judges import JudgeBudgetError, JudgeFingerprint, Judgment, MissingBudget, summarize_missing


def test_missing_labels_are_counted_by_reason_and_budgeted():
    judgments = [Judgment(1.0), Judgment(0.0), Judgment.failure("refused: no"),
                 Judgment.failure("answer is not valid JSON (Expecting value at character 3)"),
                 Judgment.failure("answer is not valid JSON (Unterminated string at character 9)")]
    summary = summarize_missing(judgments, MissingBudget(0.5))
    assert (summary.total, summary.missing) == (5, 3)
    assert summary.reasons == {"refused": 1, "answer is not valid JSON": 2}
    assert summary.share == pytest.approx(0.6) and not summary.within_budget
    with pytest.raises(JudgeBudgetError, match="3 of 5 judge labels are missing"):
        MissingBudget(0.5).check(summary)
    MissingBudget(0.6).check(summarize_missing(judgments, MissingBudget(0.6)))
    with pytest.raises(InputError):
        MissingBudget(1.5)


def test_fingerprints_say_what_made_a_label():
    llm = JudgeFingerprint("gpt-x", temperature=0.2, seed=3)
    offline = JudgeFingerprint("lexical", offline=True, output_mode="lexical")
    assert llm.kind == "LLM" and offline.kind == "lexical (offline, no model)"
    assert llm.decoding() == '{"output_mode": "json_schema", "seed": 3, "temperature": 0.2}'
    assert llm.decoding() != JudgeFingerprint("gpt-x", temperature=0.2, seed=4).decoding()
