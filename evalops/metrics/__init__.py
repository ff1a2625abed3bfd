"""IR measures that match trec_eval: a measure registry and parser, numpy kernels, and ``evaluate``.

    >>> from evalops.metrics import evaluate
    >>> result = evaluate({"q1": {"d1": 1}}, {"q1": {"d1": 2.0, "d2": 1.0}}, ["nDCG@10", "P@1"])
    >>> result.aggregates["P@1"].mean
    1.0

Layers: ``measures`` declares each measure (name, parameters, formula) and ``parse`` reads names in the
ir_measures grammar; ``ranking`` places the run's judged documents (the trec_eval ranking rule);
``kernels`` computes per-query values over a queries x depth grade matrix; ``evaluation`` applies the
policies and aggregates. ``judged`` ranks the judged non-relevant documents too (Judged@k, bpref,
condensed lists), ``topk`` lists a run's top k. Two runs' judged coverage is
:mod:`evalops.judged.coverage`.
"""

from evalops.metrics.evaluation import evaluate
from evalops.metrics.measures import (
    ALIASES,
    AveragePrecision,
    Bpref,
    ContextPrecision,
    F1,
    IPrec,
    Judged,
    Measure,
    NDCG,
    NumRel,
    NumRelRet,
    NumRet,
    Param,
    Precision,
    Recall,
    ReciprocalRank,
    RPrecision,
    SetF,
    SetP,
    SetR,
    Success,
    TREC_EVAL_NAMES,
)
from evalops.metrics.registry import MEASURE_TYPES
from evalops.metrics.parse import parse_measure, parse_measures
from evalops.metrics.policy import NO_ANSWER_CHOICES, Policy
from evalops.metrics.result import Aggregate, EvaluationResult, summarize
from evalops.metrics.topk import top_k

# Static, so that documentation tools read it; tests/metrics/test_public_names.py holds it to measures.__all__.
__all__ = [
    "evaluate", "EvaluationResult", "Aggregate", "summarize", "Policy", "NO_ANSWER_CHOICES",
    "parse_measure", "parse_measures",
    # the measure declarations (evalops.metrics.measures.__all__ without measure_type)
    "Param", "Measure", "Precision", "Recall", "F1", "NDCG", "ReciprocalRank", "AveragePrecision", "Success",
    "RPrecision", "ContextPrecision", "Judged", "Bpref", "NumRel", "NumRet", "NumRelRet", "SetP", "SetR", "SetF",
    "IPrec", "MEASURE_TYPES", "ALIASES", "TREC_EVAL_NAMES",
    "top_k",
]
