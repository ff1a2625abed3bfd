"""Per-query scores of a real run (SciFact, BM25, via pytrec_eval) survive the warehouse exactly."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from evalops.warehouse import load_paired_scores, load_score_vectors

MEASURES = {"ndcg_cut_10": "nDCG@10", "P_5": "P@5"}


def _trec_run(path, top: int | None = None) -> dict[str, dict[str, float]]:
    run: dict[str, dict[str, float]] = {}
    for line in path.read_text().splitlines():
        qid, _, doc, rank, score, _ = line.split()
        if top is None or int(rank) <= top:
            run.setdefault(qid, {})[doc] = float(score)
    return run


def _per_query(shared_data, top: int | None = None) -> pd.DataFrame:
    pytrec_eval = pytest.importorskip("pytrec_eval")
    qrels_frame = pd.read_csv(shared_data / "scifact" / "qrels.tsv", sep="\t", dtype=str)
    qrels: dict[str, dict[str, int]] = {}
    for qid, doc, grade in qrels_frame.itertuples(index=False):
        qrels.setdefault(qid, {})[doc] = int(grade)
    run = _trec_run(shared_data / "scifact" / "runs" / "bm25.trec", top)
    results = pytrec_eval.RelevanceEvaluator(qrels, {"ndcg_cut.10", "P.5"}).evaluate(run)
    return pd.DataFrame(
        [(qid, MEASURES[key], value) for qid, values in results.items() for key, value in values.items()],
        columns=["query_id", "measure", "value"],
    )


def test_real_per_query_scores_round_trip_bit_for_bit(seed, engine, shared_data):
    frame = _per_query(shared_data)
    fp = seed.fingerprint(measures=tuple(MEASURES.values()))
    run = seed.run("bm25s-0.9-0.4", fingerprint=fp, scores=frame, n_queries=frame["query_id"].nunique())
    vectors = load_score_vectors(engine, run.id)
    assert list(vectors.query_ids) == sorted(frame["query_id"].unique())
    for measure in MEASURES.values():
        expected = frame[frame["measure"] == measure].set_index("query_id").loc[vectors.query_ids, "value"]
        np.testing.assert_array_equal(vectors.values[measure], expected.to_numpy())


def test_real_paired_scores_line_up(seed, engine, shared_data):
    full, top5 = _per_query(shared_data), _per_query(shared_data, top=5)
    fp = seed.fingerprint(measures=tuple(MEASURES.values()))
    base = seed.run("full", fingerprint=fp, scores=full)
    cand = seed.run("top5", fingerprint=fp, scores=top5)
    paired = load_paired_scores(engine, base.id, cand.id, "P@5")
    # Truncating the ranking to 5 documents cannot change P@5; it can only lower nDCG@10.
    np.testing.assert_array_equal(paired.baseline, paired.candidate)
    ndcg = load_paired_scores(engine, base.id, cand.id, "nDCG@10")
    assert np.all(ndcg.candidate <= ndcg.baseline + 1e-12) and np.any(ndcg.candidate < ndcg.baseline)
