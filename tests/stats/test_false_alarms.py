"""A/A simulation: two versions that differ only by per-query noise must rarely be called a regression.

The basis is real per-query scores: SciFact BM25 nDCG@10, computed here with pytrec_eval (the oracle the
metrics package is checked against). Each replicate adds independent noise to the same scores for the
two "versions", so the null hypothesis holds exactly; the rule must alert on at most
alpha + 3 Monte Carlo standard errors of them.
"""

from __future__ import annotations

import numpy as np
import pytest

from evalops.stats import Policy, decide_deltas

REPLICATES = 4000
NOISE_SD = 0.1


@pytest.fixture(scope="module")
def bm25_ndcg10(shared_data):
    pytrec_eval = pytest.importorskip("pytrec_eval")
    scifact = shared_data / "scifact"
    qrels: dict[str, dict[str, int]] = {}
    for line in (scifact / "qrels.tsv").read_text().splitlines()[1:]:
        qid, doc, grade = line.split("\t")
        qrels.setdefault(qid, {})[doc] = int(grade)
    run: dict[str, dict[str, float]] = {}
    for line in (scifact / "runs" / "bm25.trec").read_text().splitlines():
        qid, _, doc, _, score, _ = line.split()
        run.setdefault(qid, {})[doc] = float(score)
    per_query = pytrec_eval.RelevanceEvaluator(qrels, {"ndcg_cut.10"}).evaluate(run)
    # every judged query counts; an unanswered one scores 0 (trec_eval -c)
    scores = np.array([per_query.get(q, {}).get("ndcg_cut_10", 0.0) for q in sorted(qrels)])
    assert len(scores) == 300 and scores.mean() == pytest.approx(0.6762, abs=1e-4)  # README of the data
    return scores


def versions(scores: np.ndarray, rng: np.random.Generator, shift: float = 0.0) -> tuple[np.ndarray, np.ndarray]:
    shape = (REPLICATES, len(scores))
    baseline = np.clip(scores + rng.normal(0.0, NOISE_SD, shape), 0.0, 1.0)
    candidate = np.clip(scores + shift + rng.normal(0.0, NOISE_SD, shape), 0.0, 1.0)
    return baseline, candidate


def flagged(baseline: np.ndarray, candidate: np.ndarray, policy: Policy) -> float:
    """Share of replicates whose comparison raises an alert under ``policy`` (the rule, per replicate)."""
    alerts = [decide_deltas(c - b, policy, measure="nDCG@10").alert for b, c in zip(baseline, candidate)]
    return sum(alerts) / len(alerts)


def bound(alpha: float) -> float:
    return alpha + 3.0 * np.sqrt(alpha * (1.0 - alpha) / REPLICATES)


@pytest.mark.slow
@pytest.mark.parametrize(
    "policy",
    [
        Policy(),  # the default: two-sided, nDCG's margin 0.02, warning and up alert
        Policy(alternative="less", min_delta=1e-6),  # the most alarm-prone: one-sided, a negligible margin
    ],
    ids=["default", "one-sided-tiny-margin"],
)
def test_aa_false_alarm_rate_is_at_most_alpha(bm25_ndcg10, policy):
    rng = np.random.default_rng(20260101)
    rate = flagged(*versions(bm25_ndcg10, rng), policy)
    assert rate <= bound(policy.alpha)


@pytest.mark.slow
def test_aa_simulation_is_not_vacuous(bm25_ndcg10):
    """The same machinery alerts on ~alpha under H0 one-sided, and nearly always with a planted drop."""
    rng = np.random.default_rng(7)
    policy = Policy(alternative="less", min_delta=1e-6)
    null_rate = flagged(*versions(bm25_ndcg10, rng), policy)
    assert null_rate >= policy.alpha - 3.0 * np.sqrt(policy.alpha * (1 - policy.alpha) / REPLICATES)
    drop_rate = flagged(*versions(bm25_ndcg10, rng, shift=-0.05), Policy())
    assert drop_rate > 0.9
