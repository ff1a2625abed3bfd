"""pytrec_eval as the test oracle: the same measures under trec_eval's names, with trec_eval -c semantics."""

from __future__ import annotations

from collections.abc import Iterable, Mapping

import numpy as np
import pytrec_eval

from evalops.metrics import Measure, parse_measure


def trec_name(measure: Measure) -> str:
    """pytrec_eval's key for ``measure`` (the result key, e.g. ``ndcg_cut_10``)."""
    k = measure.cutoff
    name = {
        "P": f"P_{k}",
        "R": f"recall_{k}",
        "nDCG": f"ndcg_cut_{k}" if k else "ndcg",
        "AP": f"map_cut_{k}" if k else "map",
        "RR": "recip_rank",
        "Success": f"success_{k}",
        "R-Prec": "Rprec",
        "Bpref": "bpref",
    }[measure.NAME]
    return name


def _request(key: str) -> str:
    base, _, cutoff = key.rpartition("_")
    return f"{base}.{cutoff}" if cutoff.isdigit() else key


def pytrec_per_query(
    qrels: Mapping[str, Mapping[str, int]],
    run: Mapping[str, Mapping[str, float]],
    measures: Iterable[str | Measure],
    relevance_level: int = 1,
    judged_docs_only: bool = False,
) -> dict[str, dict[str, float]]:
    """{measure: {qid: value}} over every gold query; queries absent from the run score 0 (trec_eval -c).

    ``judged_docs_only`` is trec_eval's ``-J`` (the measures are then named with ``judged_only=True``
    or not, as the caller likes: only the trec_eval name of the base measure is used).
    """
    parsed = [parse_measure(m) for m in measures]
    keys = {str(m): trec_name(m) for m in parsed}
    evaluator = pytrec_eval.RelevanceEvaluator(
        qrels,
        {_request(k) for k in keys.values()},
        relevance_level=relevance_level,
        judged_docs_only_flag=judged_docs_only,
    )
    raw = evaluator.evaluate(run)
    return {m: {q: raw.get(q, {}).get(key, 0.0) for q in qrels} for m, key in keys.items()}


def assert_matches(result, expected: dict[str, dict[str, float]], tol: float = 1e-9) -> None:
    """Every evaluated query of ``result`` equals the oracle within ``tol``; reports the first mismatch."""
    for measure, by_query in expected.items():
        ours = result.per_query[measure]
        theirs = np.array([by_query[q] for q in result.query_ids.tolist()])
        bad = np.flatnonzero(~(np.abs(ours - theirs) <= tol))
        assert bad.size == 0, (
            f"{measure}: query {result.query_ids[bad[0]]!r} evalops={ours[bad[0]]!r} pytrec_eval={theirs[bad[0]]!r} "
            f"({bad.size} mismatches)"
        )


def judged_per_query(
    qrels: Mapping[str, Mapping[str, int]], run: Mapping[str, Mapping[str, float]], cutoffs: Iterable[int]
) -> dict[str, dict[str, float]]:
    """Judged@k through trec_eval: P@k on qrels whose grades are all shifted to >= 1 (every judgment
    "relevant", ir_measures' "P@k with a rel lower than any judgment"), rescaled from k to ir_measures'
    denominator min(k, documents retrieved). Queries absent from the run score 0."""
    low = min(g for docs in qrels.values() for g in docs.values())
    shifted = {q: {d: g - low + 1 for d, g in docs.items()} for q, docs in qrels.items()}
    cutoffs = list(cutoffs)
    raw = pytrec_eval.RelevanceEvaluator(shifted, {f"P.{k}" for k in cutoffs}).evaluate(run)
    out: dict[str, dict[str, float]] = {}
    for k in cutoffs:
        out[f"Judged@{k}"] = {
            q: raw[q][f"P_{k}"] * k / min(k, len(run[q])) if q in raw and run.get(q) else 0.0 for q in qrels
        }
    return out
