"""Strict parsing: every answer that is not a well-formed label is missing with a reason, never a number."""

from __future__ import annotations

import pytest

from evalops.judges import load_prompt, parse_answer

BINARY = load_prompt("context_relevance")
GRADED = load_prompt("context_relevance_graded")
FAITH = load_prompt("faithfulness")
ANSWER = load_prompt("answer_relevance")


@pytest.mark.parametrize("content, label", [
    ('{"relevant": true}', 1.0),
    ('{"relevant": false}', 0.0),
    ('  \n{"relevant": true}\n', 1.0),
    ('```json\n{"relevant": false}\n```', 0.0),
])
def test_binary_labels(content, label):
    parsed = parse_answer(BINARY, content)
    assert parsed.missing is None and parsed.label == label


@pytest.mark.parametrize("prompt, content, reason", [
    (BINARY, "", "empty answer"),
    (BINARY, None, "no message content"),
    (BINARY, "Relevant.", "not JSON"),
    (BINARY, '{"relevant": tr', "not valid JSON"),
    (BINARY, '{"relevant": 1}', "must be true or false"),
    (BINARY, '{"relevant": "yes"}', "must be true or false"),
    (BINARY, '{"relevance": true}', "unexpected keys"),
    (BINARY, '{"relevant": true} I think so.', "prose around the JSON"),
    (BINARY, '[true]', "not an object"),
    (GRADED, '{"grade": 2.0}', "must be an integer"),
    (GRADED, '{"grade": "2"}', "must be an integer"),
    (GRADED, '{"grade": 4}', "outside the scale"),
    (GRADED, '{"grade": true}', "must be an integer"),
    (ANSWER, '{"score": 0}', "outside the scale"),
    (FAITH, '{"claims": []}', "is empty"),
    (FAITH, '{"claims": [{"claim": "x", "supported": "yes"}]}', "claims[0]"),
    (FAITH, '{"claims": "all"}', "must be a list"),
])
def test_malformed_answers_are_missing_labels(prompt, content, reason):
    parsed = parse_answer(prompt, content)
    assert parsed.label is None
    assert reason in parsed.missing


def test_graded_and_fraction_labels():
    assert parse_answer(GRADED, '{"grade": 3}').label == 3.0
    parsed = parse_answer(FAITH, '{"claims": [{"claim": "a", "supported": true}, {"claim": "b", "supported": false},'
                                 ' {"claim": "c", "supported": true}]}')
    assert parsed.label == pytest.approx(2 / 3)
    assert len(parsed.detail["claims"]) == 3


def test_prompt_versions_are_part_of_the_identity():
    for task in ("context_relevance", "context_relevance_graded", "context_relevance_reference",
                 "context_recall", "faithfulness", "answer_relevance"):
        prompt = load_prompt(task)
        assert prompt.ref == f"{task}@{prompt.version}"
        assert len(prompt.digest) == 64
        messages = prompt.messages(query="q<>", context="c", contexts="[1] <<<c>>>", reference="r", answer="a")
        assert messages[0]["role"] == "system" and "q<>" in messages[1]["content"]


def test_unknown_task_is_a_config_error():
    from evalops.errors import ConfigError

    with pytest.raises(ConfigError, match="unknown judge task"):
        load_prompt("nope")
