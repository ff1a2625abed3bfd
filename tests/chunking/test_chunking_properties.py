"""Invariants of the span measures on random documents, chunkings, excerpts and runs."""

from __future__ import annotations

from itertools import pairwise

import numpy as np
from hypothesis import given, settings, strategies as st

from evalops.chunking import (
    AnchoredJudgment,
    AnchoredJudgments,
    ChunkManifest,
    SourceTexts,
    SpanPolicy,
    span_scores,
)
from evalops.data import Run

TEXT = "alpha beta gamma delta epsilon zeta eta theta iota kappa lambda mu nu xi omicron pi rho sigma"


@st.composite
def cases(draw):
    n = len(TEXT)
    bounds = sorted(draw(st.lists(st.integers(0, n), min_size=2, max_size=12)))
    chunks = [{"chunk_id": f"c{i}", "doc_id": "d", "start": a, "end": b}
              for i, (a, b) in enumerate(pairwise(bounds)) if b > a]
    if draw(st.booleans()):  # overlapping windows too
        chunks += [{"chunk_id": f"o{i}", "doc_id": "d", "start": s, "end": min(n, s + 20)}
                   for i, s in enumerate(draw(st.lists(st.integers(0, n - 1), max_size=5, unique=True)))]
    if not chunks:
        chunks = [{"chunk_id": "c0", "doc_id": "d", "start": 0, "end": n}]
    s = draw(st.integers(0, n - 1))
    e = draw(st.integers(s + 1, n))
    order = draw(st.permutations([c["chunk_id"] for c in chunks]))
    return chunks, (s, e), order


@settings(max_examples=150, deadline=None)
@given(cases(), st.sampled_from(["chars", "words"]))
def test_span_measures_are_bounded_and_monotone(case, units):
    chunks, (s, e), order = case
    sources = SourceTexts({"d": TEXT}, "snap")
    manifest = ChunkManifest.of(chunks, sources=sources)
    gold = AnchoredJudgments.of([AnchoredJudgment("q", "d", s, e, TEXT[s:e], 1)], sources)
    run = Run.from_lists({"q": list(order)})
    previous = -1.0
    for k in range(1, len(order) + 1):
        repeat = span_scores(gold, manifest, run, sources, k=k, policy=SpanPolicy(units))
        once = span_scores(gold, manifest, run, sources, k=k, policy=SpanPolicy(units, "once"))
        if repeat.excluded:  # the excerpt holds no word: no recall to speak of
            assert units == "words"
            return
        r, p, iou = repeat.recall[0], repeat.precision[0], repeat.iou[0]
        assert 0 <= iou <= min(r, p) + 1e-12 and 0 <= p <= 1 and 0 <= r <= 1
        assert once.recall[0] == r and once.precision[0] >= p - 1e-12 and once.iou[0] >= iou - 1e-12
        assert r >= previous - 1e-12  # recall never falls as k grows
        previous = r
    whole = span_scores(gold, manifest, run, sources, budget=10 ** 6, policy=SpanPolicy(units))
    assert np.isclose(whole.recall[0], previous)  # a budget larger than every chunk takes them all
