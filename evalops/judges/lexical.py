"""The offline lexical judge: deterministic labels from token overlap, no model, no server.

It exists so that the demo and the tests run anywhere. Its labels are a lexical heuristic, not a
judgment of meaning: its fingerprint says ``offline`` and every report labels it "lexical (offline, no
model)". Rules (tokens from :func:`evalops.context.tokens.default_tokenize`, so Chinese counts by
characters):

* context relevance: ``overlap`` = share of the query's distinct tokens found in the context (with a
  reference: of the reference's tokens). Binary: relevant when overlap >= ``threshold`` (0.5). Graded:
  0 below threshold / 2, 1 below threshold, 2 below (1 + threshold) / 2, else 3.
* context recall: the reference's sentences are its statements; a statement is attributed when at least
  ``threshold`` of its distinct tokens occur in the contexts. Faithfulness: the same over the answer's
  sentences (claims). No sentence: a missing label.
* answer relevance: 1 + round(4 x share of the query's tokens found in the answer).
* drafting questions (``generate_qa``): the document's first sentence becomes the answer and the question
  is "What does the document say about <its first five tokens>?".
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from evalops.context.tokens import default_tokenize
from evalops.judges.base import JudgeFingerprint, JudgeItem, Judgment
from evalops.judges.prompts import prompt_for

__all__ = ["LexicalJudge"]

_SENTENCE = re.compile(r"(?<=[.!?。！？])\s*")


def _sentences(text: str) -> list[str]:
    return [s.strip() for s in _SENTENCE.split(text) if default_tokenize(s)]


def _share(needles: str, haystack: set[str]) -> float | None:
    tokens = set(default_tokenize(needles))
    return len(tokens & haystack) / len(tokens) if tokens else None


class LexicalJudge:
    def __init__(self, threshold: float = 0.5):
        self.threshold = threshold
        self.fingerprint = JudgeFingerprint(model=f"lexical-overlap(threshold={threshold})", offline=True,
                                            temperature=0.0, seed=None, output_mode="lexical")

    def judge(self, items: Sequence[JudgeItem]) -> list[Judgment]:
        return [self._one(item) for item in items]

    def _one(self, item: JudgeItem) -> Judgment:
        prompt = prompt_for(item.task)
        t = self.threshold
        if item.task.startswith("context_relevance"):
            probe = item.reference if item.task == "context_relevance_reference" else item.query
            share = _share(probe, set(default_tokenize(item.context)))
            if share is None:
                return Judgment.failure("nothing to compare: the query (or reference) has no tokens")
            if prompt.label == "binary":
                return Judgment(1.0 if share >= t else 0.0)
            grade = 0 if share < t / 2 else 1 if share < t else 2 if share < (1 + t) / 2 else 3
            return Judgment(float(grade))
        if item.task in ("context_recall", "faithfulness"):
            source = item.reference if item.task == "context_recall" else item.answer
            pool = set(default_tokenize(" ".join(item.contexts)))
            parts = _sentences(source)
            if not parts:
                return Judgment.failure(f"{prompt.list_key!r} is empty: no {prompt.list_key} to score")
            flags = [(_share(p, pool) or 0.0) >= t for p in parts]
            text_key = prompt.list_key[:-1]
            detail = {prompt.list_key: [{text_key: p, prompt.flag_key: f} for p, f in zip(parts, flags)]}
            return Judgment(sum(flags) / len(flags), detail=detail)
        if item.task == "answer_relevance":
            share = _share(item.query, set(default_tokenize(item.answer)))
            if share is None:
                return Judgment.failure("nothing to compare: the query has no tokens")
            return Judgment(float(1 + round(4 * share)))
        if item.task == "generate_qa":
            parts = _sentences(item.context)
            if not parts:
                return Judgment.failure("the document has no sentence to draft from")
            head = " ".join(default_tokenize(parts[0])[:5])
            return Judgment(None, None, {"question": f"What does the document say about {head}?",
                                         "answer": parts[0]})
        return Judgment.failure(f"the lexical judge has no rule for task {item.task!r}")
