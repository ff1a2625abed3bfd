"""Hand-computed cases and bad input for evalops.chunking."""

from __future__ import annotations

import json

import pandas as pd
import pytest

from evalops.chunking import (
    AnchoredJudgment,
    AnchoredJudgments,
    ChunkManifest,
    SourceTexts,
    SpanPolicy,
    SpanUnits,
    anchor_judgments,
    chunk_judgments,
    chunk_qrels,
    chunking_fingerprint,
    document_run,
    locate_chunks,
    read_anchored_judgments,
    read_chunk_manifest,
    span_scores,
    version_conditions,
    write_anchored_judgments,
)
from evalops.chunking.spans import intersection_length, merged
from evalops.data import Qrels, Run
from evalops.errors import FormatError, InputError
from evalops.knowledge import KnowledgeBaseSnapshot

DOC = "abcdefghij"


def _sources(texts: dict[str, str]) -> SourceTexts:
    frame = pd.DataFrame({"doc_id": list(texts), "title": [""] * len(texts), "text": list(texts.values())})
    return SourceTexts.of(KnowledgeBaseSnapshot.from_frame(frame, source="docs"))


@pytest.fixture
def tiny():
    sources = _sources({"d": DOC, "e": "klmnopqrst"})
    manifest = ChunkManifest.of([{"chunk_id": "c1", "doc_id": "d", "start": 0, "end": 4},
                                 {"chunk_id": "c2", "doc_id": "d", "start": 3, "end": 8},
                                 {"chunk_id": "c3", "doc_id": "d", "start": 8, "end": 10},
                                 {"chunk_id": "e1", "doc_id": "e", "start": 0, "end": 10}], sources=sources)
    judgments = AnchoredJudgments.of([AnchoredJudgment("q", "d", 2, 6, DOC[2:6], 1),
                                      AnchoredJudgment("z", "e", 0, 3, "klm", 0)], sources)
    run = Run.from_dict({"q": {"c2": 3.0, "c1": 2.0, "c3": 1.0}, "z": {"e1": 1.0}})
    return sources, manifest, judgments, run


def test_interval_arithmetic():
    assert merged([(5, 7), (0, 2), (1, 3), (3, 4), (9, 9)]) == [(0, 4), (5, 7)]
    assert intersection_length(merged([(0, 4), (5, 7)]), merged([(3, 6)])) == 2


def test_words_belong_to_the_span_holding_their_first_character():
    units = SpanUnits("words")
    starts = units.starts("Hello world, again 和平")
    assert starts == [0, 6, 13, 19, 20]
    assert units.convert((0, 8), starts) == (0, 2)  # "Hello wo": "world" starts inside
    assert units.convert((8, 21), starts) == (2, 5)  # "rld, again 和": "world" does not
    with pytest.raises(InputError, match="chars"):
        SpanUnits("bpe")


def test_span_measures_by_hand(tiny):
    sources, manifest, judgments, run = tiny
    at2 = span_scores(judgments, manifest, run, sources, k=2)
    # c2 [3,8) and c1 [0,4) hold all of [2,6): 4 units; paid 5 + 4 = 9
    assert list(at2.query_ids) == ["q"] and at2.excluded == ("z",)
    assert (at2.recall[0], at2.precision[0], at2.iou[0]) == (1.0, 4 / 9, 4 / 9)
    once = span_scores(judgments, manifest, run, sources, k=2, policy=SpanPolicy(overlap="once"))
    assert (once.precision[0], once.iou[0]) == (4 / 8, 4 / 8)
    budget = span_scores(judgments, manifest, run, sources, budget=6)
    # c2 whole (5 units, 3 relevant), then the first unit of c1 (not relevant)
    assert (budget.recall[0], budget.precision[0], budget.iou[0]) == (3 / 4, 3 / 6, 3 / 7)
    assert set(at2.measures()) == {"TokenRecall@2", "TokenPrecision@2", "TokenIoU@2"}


def test_unanswered_query_scores_zero_and_foreign_chunk_is_refused(tiny):
    sources, manifest, judgments, _ = tiny
    empty = span_scores(judgments, manifest, Run.from_dict({"other": {"c1": 1.0}}), sources, k=5)
    assert (empty.recall[0], empty.precision[0], empty.iou[0]) == (0.0, 0.0, 0.0)
    with pytest.raises(InputError, match="retrieves chunk 'x9'.*does not list"):
        span_scores(judgments, manifest, Run.from_dict({"q": {"x9": 1.0}}), sources, k=5)
    with pytest.raises(InputError, match="exactly one"):
        span_scores(judgments, manifest, Run.from_dict({"q": {"c1": 1.0}}), sources, k=5, budget=5)


def test_document_run_maxp_and_firstp(tiny):
    _, manifest, _, run = tiny
    maxp = document_run(run, manifest, "maxp").to_dict()
    firstp = document_run(run, manifest, "firstp").to_dict()
    assert maxp == {"q": {"d": 3.0}, "z": {"e": 1.0}}
    assert firstp == {"q": {"d": 2.0}, "z": {"e": 1.0}}  # c1 starts d
    listed = Run.from_lists({"q": ["c3", "c2"]})  # rank order only: c3 then c2, first chunk not retrieved
    assert document_run(listed, manifest, "maxp").to_dict() == {"q": {"d": 2.0}}
    assert document_run(listed, manifest, "firstp").to_dict() == {}
    unscored = Run.from_ranked({"q": ["c3", "c1", "c2"]})  # no scores: n, n-1, ... in the retriever's order
    assert document_run(unscored, manifest, "maxp").to_dict() == {"q": {"d": 3.0}}
    assert document_run(unscored, manifest, "firstp").to_dict() == {"q": {"d": 2.0}}
    with pytest.raises(InputError, match="maxp"):
        document_run(run, manifest, "meanp")


def test_chunk_qrels_threshold_on_the_shorter_piece(tiny):
    _, manifest, judgments, _ = tiny
    # [2,6) against c1 [0,4): 2 of min(4,4) = 0.5; c2 [3,8): 3 of 4 = 0.75; c3: none
    assert chunk_qrels(judgments, manifest, 0.5).qrels.to_dict() == {"q": {"c1": 1, "c2": 1}, "z": {"e1": 0}}
    strict = chunk_qrels(judgments, manifest, 0.8)
    assert strict.qrels.to_dict() == {"z": {"e1": 0}} and strict.lost_queries == ["q"]
    assert [j.query_id for j in strict.unmapped] == ["q"]


def test_migration_reports_what_it_could_not_convert(tiny):
    sources, manifest, _, _ = tiny
    qrels = Qrels.from_dict({"q": {"c2": 2, "gone": 1}})
    there = anchor_judgments(qrels, manifest, sources)
    assert [(j.doc_id, j.start, j.end, j.excerpt, j.grade) for j in there.judgments] == [("d", 3, 8, "defgh", 2)]
    assert there.unconverted == (("q", "gone", f"chunk not in chunking 'chunking' ({manifest.chunking_id})"),)
    assert there.to_dict()["converted"] == 1
    other = ChunkManifest.of([{"chunk_id": "k", "doc_id": "d", "start": 0, "end": 5}], sources=sources)
    back = chunk_judgments(there.judgments, other)
    assert len(back.judgments) == 0 and back.unconverted == (("q", "d[3:8]", "no chunk has this span"),)


def _write(path, rows):
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def test_reader_names_file_line_and_fix(tmp_path, tiny):
    sources = tiny[0]
    good = {"query_id": "q", "doc_id": "d", "start": 2, "end": 6, "excerpt": "cdef", "relevance": 1}
    ok = read_anchored_judgments(_write(tmp_path / "ok.jsonl", [good, {**good, "start": 0, "end": 2,
                                                                       "excerpt": ""}]), sources)
    assert [(j.start, j.excerpt) for j in ok] == [(0, "ab"), (2, "cdef")]
    cases = [
        ({**good, "excerpt": "defg"},
         r"bad\.jsonl:2: excerpt does not match document 'd' at \[2, 6\).*occurs at \[3, 7\)"),
        ({**good, "excerpt": "zzz"}, "occurs nowhere"),
        ({**good, "end": 11}, r"bad\.jsonl:2: span \[2, 11\) is out of range for document 'd' \(10 characters\)"),
        ({**good, "doc_id": "nope"}, r"bad\.jsonl:2: document 'nope' is not in docs"),
        ({**good, "start": "x"}, "start is 'x'; it must be an integer"),
        (good, r"bad\.jsonl:2: query 'q' judges span \[2, 6\) of document 'd' again \(first on line 1\)"),
    ]
    for row, message in cases:
        with pytest.raises(FormatError, match=message):
            read_anchored_judgments(_write(tmp_path / "bad.jsonl", [good, row]), sources)


def test_csv_round_trip_and_line_numbers(tmp_path, tiny):
    sources, _, judgments, _ = tiny
    path = write_anchored_judgments(judgments, tmp_path / "gold.csv")
    again = read_anchored_judgments(path, sources)
    assert again.to_records() == judgments.to_records() and again.version == judgments.version
    path.write_text(path.read_text() + 'r,d,0,3,"a\nb",1\n')  # a quoted excerpt over two lines, on line 4
    with pytest.raises(FormatError, match=r"gold\.csv:4: excerpt does not match"):
        read_anchored_judgments(path, sources)


def test_manifest_reader_and_locate_failures(tmp_path, tiny):
    sources = tiny[0]
    path = _write(tmp_path / "m.jsonl", [{"_id": "a", "doc_id": "d", "start": 0, "end": 4, "text": "abcd"}])
    manifest = read_chunk_manifest(path, sources=sources)
    assert manifest.name == "m" and manifest.source_snapshot_id == sources.snapshot_id
    path.write_text("\n" + json.dumps({"_id": "a", "doc_id": "d", "start": 0, "end": 40}) + "\n")
    with pytest.raises(FormatError, match=r"m\.jsonl:2: chunk 'a' ends at 40, past the end of document 'd'"):
        read_chunk_manifest(path, sources=sources)
    located, report = locate_chunks([{"chunk_id": "1", "doc_id": "d", "text": "cde"},
                                     {"chunk_id": "2", "text": "nop"},
                                     {"chunk_id": "3", "doc_id": "d", "text": "cdX"},
                                     {"chunk_id": "4", "doc_id": "gone", "text": "a"}], sources)
    assert [(c.chunk_id, c.doc_id, c.start, c.end) for c in located.chunks] == [("1", "d", 2, 5), ("2", "e", 3, 6)]
    assert report.failure_rate == 0.5 and [f[0] for f in report.failed] == ["3", "4"]


def test_fingerprint_keeps_text_anchored_baselines_across_rechunking(tiny):
    sources, manifest, _, _ = tiny
    rechunked = ChunkManifest.of([{"chunk_id": "x", "doc_id": "d", "start": 0, "end": 10}], sources=sources)

    def chunked_id(m):  # the snapshot id of the chunked corpus a retriever indexes
        texts = m.texts(sources)
        return KnowledgeBaseSnapshot.from_frame(pd.DataFrame({"doc_id": list(texts), "text": list(texts.values())})
                                                ).snapshot_id

    def fp(kind, m, src=sources):
        return chunking_fingerprint("gold1", ["nDCG@10"], {"k": 10}, judgments=kind, source_snapshot_id=src.snapshot_id,
                                    chunked_snapshot_id=chunked_id(m))

    assert fp("text-anchored", manifest).hash == fp("text-anchored", rechunked).hash
    assert fp("chunk-id", manifest).diff(fp("chunk-id", rechunked)) == ("kb_snapshot_id",)
    edited = _sources({"d": "abcdefghiX", "e": "klmnopqrst"})
    assert fp("text-anchored", manifest, edited).diff(fp("text-anchored", manifest)) == ("kb_snapshot_id",)
    assert fp("text-anchored", manifest).policies["chunking"]["span"]["units"] == "chars"
    assert version_conditions(manifest, sources.snapshot_id)["chunking_id"] == manifest.chunking_id
    assert manifest.chunking_id != rechunked.chunking_id
    with pytest.raises(InputError, match="re-locate"):
        version_conditions(manifest, edited.snapshot_id)


def test_manifest_refuses_duplicates_and_bad_spans():
    with pytest.raises(FormatError, match="chunk id 'a' appears twice"):
        ChunkManifest.of([{"chunk_id": "a", "doc_id": "d", "start": 0, "end": 1}] * 2)
    with pytest.raises(FormatError, match=r"span \[3, 1\)"):
        ChunkManifest.of([{"chunk_id": "a", "doc_id": "d", "start": 3, "end": 1}])


def test_a_chunking_that_loses_every_excerpt_scores_zero(tiny):
    from evalops.chunking import score_chunk_run

    sources, _, judgments, run = tiny
    crumbs = ChunkManifest.of([{"chunk_id": "c2", "doc_id": "d", "start": 0, "end": 1},
                               {"chunk_id": "c1", "doc_id": "d", "start": 9, "end": 10},
                               {"chunk_id": "c3", "doc_id": "d", "start": 8, "end": 9},
                               {"chunk_id": "e1", "doc_id": "e", "start": 9, "end": 10}], sources=sources)
    scored = score_chunk_run(judgments, crumbs, run, sources, measures=["nDCG@10"], cutoffs=(2,))
    assert scored.values["chunk/nDCG@10"].tolist() == [0.0] and scored.values["TokenRecall@2"].tolist() == [0.0]
    assert scored.values["document/nDCG@10"].tolist() == [1.0]  # the document is still found
    assert scored.notes == (("1 queries have no chunk over the overlap threshold 0.5 (they score 0 on chunk "
                             "measures): ['q']"),)
