"""``evalops chunking``: the commands over files written from the SciFact chunking collection."""

from __future__ import annotations

import json

import numpy as np
import pytest
from click.testing import CliRunner

from evalops.chunking import chunk_qrels, write_anchored_judgments, write_chunk_manifest
from evalops.chunking.scoring import compare_chunkings, score_chunk_run
from evalops.cli import main
from evalops.formats import read_trec_qrels, write_trec_qrels, write_trec_run


@pytest.fixture(scope="module")
def files(scifact_chunks, tmp_path_factory):
    col = scifact_chunks
    folder = tmp_path_factory.mktemp("chunking")
    out = {"gold": write_anchored_judgments(col.judgments, folder / "gold.jsonl"),
           "corpus": col.folder / "corpus.jsonl"}
    for name in ("win256", "sent3"):
        out[f"{name}.manifest"] = write_chunk_manifest(col.manifests[name], folder / f"{name}.jsonl")
        write_trec_run(col.runs[name], folder / f"{name}.trec")
        out[f"{name}.run"] = folder / f"{name}.trec"
    return out


def _invoke(*args):
    return CliRunner().invoke(main, [str(a) for a in args])


def test_score_prints_the_library_numbers_and_policies(scifact_chunks, files):
    col = scifact_chunks
    result = _invoke("chunking", "score", files["gold"], files["corpus"], files["win256.manifest"],
                     files["win256.run"], "-k", "10", "--budget", "512", "--format", "json")
    assert result.exit_code == 0, result.output
    data = json.loads(result.output)
    want = score_chunk_run(col.judgments, col.manifests["win256"], col.runs["win256"], col.sources, cutoffs=(10,),
                           budgets=(512,)).means()
    assert data["means"].keys() == want.keys()
    np.testing.assert_allclose([data["means"][m] for m in want], list(want.values()), rtol=0, atol=1e-12)
    assert data["policies"]["aggregation"] == "maxp" and data["chunking"]["name"] == "win256"
    table = _invoke("chunking", "score", files["gold"], files["corpus"], files["win256.manifest"], files["win256.run"])
    assert "policies: units chars, overlap repeat, aggregation maxp" in table.output


def test_compare_decides_as_the_library(scifact_chunks, files):
    col = scifact_chunks
    result = _invoke("chunking", "compare", files["gold"], files["corpus"], files["win256.manifest"],
                     files["win256.run"], files["sent3.manifest"], files["sent3.run"], "--format", "json")
    assert result.exit_code == 0, result.output
    got = {c["measure"]: c["decision"] for c in json.loads(result.output)["comparisons"]}
    a, b = (score_chunk_run(col.judgments, col.manifests[n], col.runs[n], col.sources, name=n)
            for n in ("win256", "sent3"))
    want = {c.measure: c.decision for c in compare_chunkings(a, b, ["TokenIoU@10", "chunk/nDCG@10",
                                                                     "document/nDCG@10"])}
    assert got == want


def test_convert_round_trip_and_refusals(scifact_chunks, files, tmp_path):
    col = scifact_chunks
    original = chunk_qrels(col.judgments, col.manifests["sent3"]).qrels
    write_trec_qrels(original, tmp_path / "chunks.qrels")
    there = _invoke("chunking", "convert", tmp_path / "chunks.qrels", files["corpus"], files["sent3.manifest"],
                    "-o", tmp_path / "spans.jsonl", "--format", "json")
    assert there.exit_code == 0, there.output
    assert json.loads(there.output)["unconverted"] == 0
    back = _invoke("chunking", "convert", tmp_path / "spans.jsonl", files["corpus"], files["sent3.manifest"],
                   "--to", "chunks", "-o", tmp_path / "back.qrels")
    assert back.exit_code == 0, back.output
    assert read_trec_qrels(tmp_path / "back.qrels").to_dict() == original.to_dict()
    other = _invoke("chunking", "convert", tmp_path / "spans.jsonl", files["corpus"], files["win256.manifest"],
                    "--to", "chunks", "-o", tmp_path / "other.qrels")
    assert other.exit_code == 0 and "not converted" in other.output and "no chunk has this span" in other.output
    bad = tmp_path / "bad.jsonl"
    rows = [json.loads(line) for line in (tmp_path / "spans.jsonl").read_text().splitlines()]
    rows[2]["excerpt"] = rows[2]["excerpt"][1:]
    bad.write_text("".join(json.dumps(r) + "\n" for r in rows))
    refused = _invoke("chunking", "score", bad, files["corpus"], files["sent3.manifest"], files["sent3.run"])
    assert refused.exit_code == 3
    assert f"error: {bad}:3: excerpt does not match document" in refused.output
    assert "fix start and end" in refused.output


def test_locate_reports_and_bounds_the_failure_rate(files, tmp_path):
    chunks = tmp_path / "chunks.jsonl"
    chunks.write_text(json.dumps({"_id": "a", "doc_id": "4983", "text": "Alterations of the architecture"}) + "\n"
                      + json.dumps({"_id": "b", "doc_id": "4983", "text": "not in the abstract"}) + "\n")
    refused = _invoke("chunking", "locate", chunks, files["corpus"], "-o", tmp_path / "m.jsonl")
    assert refused.exit_code == 3 and "1 of 2 chunks (50.0%) could not be placed" in refused.output
    assert not (tmp_path / "m.jsonl").exists()
    ok = _invoke("chunking", "locate", chunks, files["corpus"], "-o", tmp_path / "m.jsonl", "--max-failure-rate",
                 "0.5", "--format", "json")
    assert ok.exit_code == 0, ok.output
    assert json.loads(ok.output)["failure_rate"] == 0.5
    assert json.loads((tmp_path / "m.jsonl").read_text()) == {"chunk_id": "a", "doc_id": "4983", "start": 0,
                                                              "end": 31}
