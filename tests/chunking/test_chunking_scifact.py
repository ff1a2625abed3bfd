"""Chunkings of SciFact scored against one set of span judgments (tests/chunking/collection.py), each
number checked against an independent computation."""

from __future__ import annotations

import re

import numpy as np
import pytest

from evalops.chunking import (
    SpanPolicy,
    anchor_judgments,
    chunk_judgments,
    chunk_qrels,
    document_run,
    span_scores,
)
from evalops.chunking.scoring import compare_chunkings, score_chunk_run
from evalops.metrics import evaluate
from tests.metrics.oracle import pytrec_per_query

TOKEN = re.compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\U00020000-\U0003134f]|"
                   r"[^\W_\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\U00020000-\U0003134f]+")


def _units(text: str, start: int, end: int, units: str) -> list[int]:
    """The unit indices of [start, end): characters, or tokens whose first character lies inside."""
    if units == "chars":
        return list(range(start, end))
    return [i for i, m in enumerate(TOKEN.finditer(text)) if start <= m.start() < end]


def _oracle(col, name: str, k: int | None, budget: int | None, units: str, overlap: str = "repeat"):
    """Chroma's definitions, written with Python sets of (doc, unit) and the run sorted by hand."""
    manifest, run = col.manifests[name], col.runs[name]
    ranked: dict[str, list[tuple[float, str]]] = {}
    for q, c, s in zip(run.query_ids, run.doc_ids, run.scores, strict=False):
        ranked.setdefault(q, []).append((float(np.float32(s)), c))
    out = {}
    for q in sorted({j.query_id for j in col.judgments if j.grade > 0}):
        relevant = set()
        for j in col.judgments:
            if j.query_id == q and j.grade > 0:
                relevant |= {(j.doc_id, u) for u in _units(col.sources.text(j.doc_id), j.start, j.end, units)}
        by_id = sorted(ranked.get(q, []), key=lambda t: t[1], reverse=True)  # ties: chunk id descending
        order = [c for _, c in sorted(by_id, key=lambda t: -t[0])]  # stable: score descending (float32)
        taken, left = [], budget
        for c in order[:k] if k else order:
            chunk = manifest.get(c)
            u = [(chunk.doc_id, x) for x in _units(col.sources.text(chunk.doc_id), chunk.start, chunk.end, units)]
            if budget is not None:
                if left <= 0:
                    break
                u = u[:left]
                left -= len(u)
            taken.append(u)
        union = set().union(*map(set, taken)) if taken else set()
        hit = len(union & relevant)
        paid = sum(len(u) for u in taken) if overlap == "repeat" else len(union)
        out[q] = (hit / len(relevant), hit / paid if paid else 0.0, hit / (paid + len(relevant) - hit))
    return out


@pytest.mark.parametrize("name,k,budget,units,overlap", [
    ("win256", 5, None, "chars", "repeat"),
    ("sent3", 10, None, "chars", "repeat"),
    ("win256", 5, None, "words", "repeat"),
    ("win256", None, 600, "chars", "repeat"),
    ("sent3", None, 120, "words", "repeat"),
    ("win256", 10, None, "chars", "once"),
])
def test_span_measures_equal_an_independent_implementation(scifact_chunks, name, k, budget, units, overlap):
    col = scifact_chunks
    got = span_scores(col.judgments, col.manifests[name], col.runs[name], col.sources, k=k, budget=budget,
                      policy=SpanPolicy(units=units, overlap=overlap))
    want = _oracle(col, name, k, budget, units, overlap)
    assert list(got.query_ids) == sorted(want)
    expected = np.array([want[q] for q in got.query_ids])
    np.testing.assert_allclose(got.recall, expected[:, 0], rtol=0, atol=1e-9)
    np.testing.assert_allclose(got.precision, expected[:, 1], rtol=0, atol=1e-9)
    np.testing.assert_allclose(got.iou, expected[:, 2], rtol=0, atol=1e-9)
    assert 0 < got.recall.mean() < 1 and got.excluded == ()


def test_overlapping_windows_pay_twice_for_shared_text(scifact_chunks):
    col = scifact_chunks
    kw = {"k": 10}
    repeat = span_scores(col.judgments, col.manifests["win256"], col.runs["win256"], col.sources, **kw)
    once = span_scores(col.judgments, col.manifests["win256"], col.runs["win256"], col.sources,
                       policy=SpanPolicy(overlap="once"), **kw)
    np.testing.assert_array_equal(repeat.recall, once.recall)
    assert (repeat.precision <= once.precision + 1e-15).all() and (repeat.precision < once.precision).any()


@pytest.mark.parametrize("aggregation", ["maxp", "firstp"])
def test_document_run_ndcg_equals_pytrec_eval(scifact_chunks, aggregation):
    col = scifact_chunks
    name = "win256"
    manifest, run = col.manifests[name], col.runs[name]
    first = {d: cs[0].chunk_id for d, cs in manifest.by_document().items()}
    docs: dict[str, dict[str, float]] = {}
    for q, c, s in zip(run.query_ids, run.doc_ids, run.scores, strict=False):
        d = manifest.get(c).doc_id
        if aggregation == "firstp" and first[d] != c:
            continue
        docs.setdefault(q, {})[d] = max(docs.get(q, {}).get(d, -np.inf), float(s))
    qrels = {}
    for j in col.judgments:
        qrels.setdefault(j.query_id, {})[j.doc_id] = max(j.grade, qrels.get(j.query_id, {}).get(j.doc_id, 0))
    want = pytrec_per_query(qrels, docs, ["nDCG@10", "R@100"])
    got = evaluate(col.judgments.document_qrels(), document_run(run, manifest, aggregation), ["nDCG@10", "R@100"])
    for m in ("nDCG@10", "R@100"):
        expected = np.array([want[m][q] for q in got.query_ids])
        np.testing.assert_allclose(got.per_query[m], expected, rtol=0, atol=1e-9)
    assert set(got.query_ids) == set(qrels)


def test_chunk_qrels_follow_the_overlap_rule(scifact_chunks):
    col = scifact_chunks
    manifest = col.manifests["win256"]
    derived = chunk_qrels(col.judgments, manifest, 0.5)
    want = set()
    for j in col.judgments:
        for c in manifest.by_document()[j.doc_id]:
            inter = len(set(range(c.start, c.end)) & set(range(j.start, j.end)))
            if inter and inter >= 0.5 * min(c.length, j.end - j.start):
                want.add((j.query_id, c.chunk_id))
    assert set(zip(derived.qrels.query_ids, derived.qrels.doc_ids, strict=False)) == want
    assert (derived.qrels.grades == 1).all() and derived.unmapped == ()


def test_two_chunkings_compared_and_stable_when_a_third_is_added(scifact_chunks):
    col = scifact_chunks
    measures = ["TokenIoU@5", "TokenRecall@10", "chunk/nDCG@10", "document/nDCG@10"]

    def scored(name):
        return score_chunk_run(col.judgments, col.manifests[name], col.runs[name], col.sources, name=name)

    a, b = scored("win256"), scored("sent3")
    first = [c.to_record() for c in compare_chunkings(a, b, measures)]
    c = scored("win512")
    a2, b2 = scored("win256"), scored("sent3")
    for before, after in ((a, a2), (b, b2)):
        assert before.values.keys() == after.values.keys()
        for m in before.values:
            np.testing.assert_array_equal(before.values[m], after.values[m])
    again = [x.to_record() for x in compare_chunkings(a2, b2, measures)]
    assert first == again
    # every chunking answers the same queries, so any two pair query by query
    assert list(a.query_ids) == list(b.query_ids) == list(c.query_ids)
    decisions = {r["measure"]: r["decision"] for r in first}
    assert decisions["chunk/nDCG@10"] == "improvement"  # sentence chunks hold the judged sentence whole
    assert decisions["TokenIoU@5"] == "regression"  # ... and pay for more text around it
    assert a.policies == b.policies == c.policies and a.policies["aggregation"] == "maxp"


def test_sentence_chunks_are_located_from_their_text(scifact_chunks):
    col = scifact_chunks
    assert col.locate_report.total == len(col.sent3) and col.locate_report.failure_rate == 0.0
    texts = col.sent3.texts(col.sources)
    from tests.chunking.collection import sentence_chunks

    assert {r["chunk_id"]: r["text"] for r in sentence_chunks(col.sources)} == texts


def test_migration_round_trip_is_exact(scifact_chunks):
    col = scifact_chunks
    for name in ("win256", "sent3"):
        manifest = col.manifests[name]
        original = chunk_qrels(col.judgments, manifest, 0.5).qrels  # chunk-id judgments of this chunking
        anchored = anchor_judgments(original, manifest, col.sources)
        assert anchored.unconverted == () and len(anchored.judgments) == len(original)
        back = chunk_judgments(anchored.judgments, manifest)
        assert back.unconverted == ()
        assert back.judgments.to_dict() == original.to_dict()
