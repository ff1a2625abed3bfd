"""Judges: labels for retrieved contexts and generated answers from an LLM (or an offline lexical rule).

    >>> from evalops.judges import JudgeItem, LexicalJudge
    >>> LexicalJudge().judge([JudgeItem("context_relevance", "vitamin d", context="Vitamin D and bone.")])[0].label
    1.0

``base`` holds the protocol (one batch ``judge`` method), the fingerprint and the missing-label budget;
``prompts`` the versioned prompt files; ``parse`` the strict parsing of answers; ``openai`` the
OpenAI-compatible adapter; ``lexical`` the offline judge; ``measures`` the RAGAS measures over labels and
judge labels as qrels; ``agreement`` Cohen's kappa, Krippendorff's alpha and the agreement gate.
"""

from evalops.judges.agreement import (
    AgreementGate,
    Agreement,
    agreement,
    cohen_kappa,
    confusion_matrix,
    krippendorff_alpha,
)
from evalops.judges.base import (
    Judge,
    JudgeBudgetError,
    JudgeFingerprint,
    JudgeItem,
    Judgment,
    MissingBudget,
    MissingSummary,
    content_hash,
    summarize_missing,
)
from evalops.judges.lexical import LexicalJudge
from evalops.judges.measures import (
    average_repeats,
    judge_qrels,
    ragas_context_precision,
)
from evalops.judges.openai import OpenAIJudge, OpenAISettings
from evalops.judges.parse import Parsed, parse_answer
from evalops.judges.prompts import TASKS, Prompt, load_prompt

__all__ = [
    "Judge",
    "JudgeItem",
    "Judgment",
    "JudgeFingerprint",
    "JudgeBudgetError",
    "MissingBudget",
    "MissingSummary",
    "summarize_missing",
    "content_hash",
    "LexicalJudge",
    "OpenAIJudge",
    "OpenAISettings",
    "Prompt",
    "TASKS",
    "load_prompt",
    "Parsed",
    "parse_answer",
    "ragas_context_precision",
    "judge_qrels",
    "average_repeats",
    "cohen_kappa",
    "confusion_matrix",
    "krippendorff_alpha",
    "agreement",
    "Agreement",
    "AgreementGate",
]
