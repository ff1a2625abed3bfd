"""The offline lexical judge: deterministic, labelled as offline, and strict about what it cannot judge."""

from __future__ import annotations

import pytest

from evalops.judges import Judge, JudgeItem, LexicalJudge


def test_it_is_a_judge_labelled_offline():
    judge = LexicalJudge()
    assert isinstance(judge, Judge)
    assert judge.fingerprint.offline and judge.fingerprint.kind == "lexical (offline, no model)"
    assert "lexical (offline, no model)" in judge.fingerprint.describe()


@pytest.mark.parametrize("task, item, label", [
    ("context_relevance", dict(query="vitamin d bone", context="Vitamin D protects bone."), 1.0),
    ("context_relevance", dict(query="vitamin d bone", context="Iron and anaemia."), 0.0),
    ("context_relevance_graded", dict(query="a b c d", context="a b c d"), 3.0),
    ("context_relevance_graded", dict(query="a b c d", context="a b x"), 2.0),
    ("context_relevance_graded", dict(query="a b c d", context="a x"), 1.0),
    ("context_relevance_graded", dict(query="a b c d", context="x"), 0.0),
    ("context_relevance", dict(query="维生素D", context="维生素D与骨骼"), 1.0),
    ("context_recall", dict(query="q", reference="Vitamin D helps bone. Iron cures scurvy.",
                            contexts=("Vitamin D helps bone growth.",)), 0.5),
    ("faithfulness", dict(query="q", answer="Bone needs vitamin D.", contexts=("vitamin D for bone",)), 1.0),
    ("answer_relevance", dict(query="vitamin d", answer="Vitamin D is made in skin."), 5.0),
    ("answer_relevance", dict(query="vitamin d", answer="Iron."), 1.0),
])
def test_labels(task, item, label):
    [j] = LexicalJudge().judge([JudgeItem(task, **item)])
    assert j.label == label


def test_nothing_to_judge_is_missing_not_zero():
    out = LexicalJudge().judge([JudgeItem("context_relevance", "", context="text"),
                                JudgeItem("faithfulness", "q", answer="", contexts=("c",))])
    assert [j.label for j in out] == [None, None]
    assert all(j.missing for j in out)


def test_deterministic():
    items = [JudgeItem("context_relevance_graded", f"q {i}", context=f"q {i % 3} text") for i in range(20)]
    assert LexicalJudge().judge(items) == LexicalJudge().judge(items)
