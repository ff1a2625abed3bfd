"""The other names of the measures (``MRR`` is ``RR``, trec_eval's ``map`` is ``AP``), in a module of its own:
the measures' parser (:mod:`evalops.metrics.measures`) and the statistics' margin families
(:mod:`evalops.stats.margins`) both read it, and the statistics sit below the metrics (the aggregates'
confidence interval is :func:`evalops.util.student_t.t_quantile`)."""

from __future__ import annotations

__all__ = ["ALIASES"]

# alias -> canonical name. Cutoffs and parameters carry over (MRR@10 is RR@10).
ALIASES: dict[str, str] = {
    "MRR": "RR", "MAP": "AP", "Hit": "Success", "Rprec": "R-Prec", "RPrec": "R-Prec", "bpref": "Bpref",
    "BPref": "Bpref", "NDCG": "nDCG", "Precision": "P", "Recall": "R",
    # trec_eval's names of the same measures (``ndcg_cut_10`` and ``P_10`` are read by TREC_EVAL_NAMES)
    "map": "AP", "recip_rank": "RR", "ndcg": "nDCG", "num_rel": "NumRel", "num_ret": "NumRet",
    "num_rel_ret": "NumRelRet", "set_P": "SetP", "set_recall": "SetR", "set_F": "SetF",
    "iprec_at_recall": "IPrec",
}
