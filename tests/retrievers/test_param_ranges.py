"""Numeric retriever parameters that would make silent numbers (NaN, infinities, out of range) are refused
with the file, line, entry and parameter; an index without a single term fails instead of answering nothing."""

from __future__ import annotations

import json
import math

import pandas as pd
import pytest
from click.testing import CliRunner

from evalops.cli import main
from evalops.errors import ConfigError
from evalops.exitcodes import ExitCode
from evalops.retrievers import BM25Retriever, ReciprocalRankFusion, TfidfRetriever, load_registry
from evalops.retrievers.schema import PARAMS, RANGES
from evalops.retrievers.text import Tokenizer
from evalops.transport import RetryPolicy

HEAD = "retrievers:\n  - name: kb\n    version: '1'\n    adapter: {adapter}\n    deployed: true\n    owner: o\n    params:\n"
BM25 = "      kind: bm25\n"
HYBRID = "      kind: hybrid\n      retrievers: [{kind: bm25}, {kind: tfidf}]\n"
HTTP = "      url: http://127.0.0.1:9/search\n"

BAD = [
    ("builtin", BM25, "k1: .nan", "k1 is nan"),
    ("builtin", BM25, "k1: .inf", "k1 is inf"),
    ("builtin", BM25, "k1: -5", "k1 is -5"),
    ("builtin", BM25, "b: .nan", "b is nan"),
    ("builtin", BM25, "b: 7", "b is 7; it must be a finite number between 0 and 1"),
    ("builtin", BM25, "b: -0.1", "b is -0.1"),
    ("builtin", BM25, "index_fraction: 0", "index_fraction is 0"),
    ("builtin", "      kind: tfidf\n", "index_fraction: .nan", "index_fraction is nan"),
    ("builtin", HYBRID, "rrf_k: .nan", "rrf_k is nan"),
    ("builtin", HYBRID, "rrf_k: 0", "rrf_k is 0; it must be a finite number > 0"),
    ("builtin", HYBRID, "depth: 0", "depth is 0"),
    ("builtin", HYBRID, "weights: [.nan, 1]", "weights must be 2 numbers >= 0 (finite)"),
    ("builtin", HYBRID, "weights: [.inf, 1]", "weights must be 2 numbers >= 0 (finite)"),
    ("builtin", "      kind: rerank\n      first: {kind: bm25}\n      reranker: {kind: overlap}\n", "depth: -1",
     "depth is -1"),
    ("builtin", "      kind: dense\n      model: m\n", "batch_size: 0", "batch_size is 0"),
    ("http", HTTP, "timeout: .nan", "timeout is nan"),
    ("http", HTTP, "timeout: .inf", "timeout is inf"),
    ("http", HTTP, "timeout: 0", "timeout is 0"),
    ("http", HTTP, "stall_timeout: .nan", "stall_timeout is nan"),
    ("http", HTTP, "concurrency: 0", "concurrency is 0"),
    ("http", HTTP, "max_retries: -1", "max_retries is -1"),
    ("http", HTTP, "backoff: .nan", "backoff is nan"),
    ("http", HTTP, "backoff_max: -.inf", "backoff_max is -inf"),
]


def write(tmp_path, adapter: str, params: str, bad: str) -> tuple:
    text = HEAD.format(adapter=adapter) + params + f"      {bad}\n"
    p = tmp_path / "retrievers.yaml"
    p.write_text(text)
    return p, text.count("\n")  # the bad line is the last one


@pytest.mark.parametrize(("adapter", "params", "bad", "message"), BAD)
def test_a_non_finite_or_out_of_range_number_names_file_line_entry_and_parameter(tmp_path, adapter, params, bad, message):
    p, line = write(tmp_path, adapter, params, bad)
    with pytest.raises(ConfigError) as info:
        load_registry(p)
    text = str(info.value)
    assert text.startswith(f"{p}:{line}: retriever kb@1: "), text
    assert message in text


@pytest.mark.parametrize("good", ["k1: 0", "b: 0", "b: 1", "k1: 1.2", "index_fraction: 1"])
def test_the_edges_of_each_range_are_accepted(tmp_path, good):
    p, _ = write(tmp_path, "builtin", BM25, good)
    assert load_registry(p).resolve("kb@1").params["kind"] == "bm25"


def test_every_numeric_parameter_has_a_range() -> None:
    for adapter, spec in PARAMS.items():
        numeric = {key for key, (kind, _) in spec.items() if kind in ("number", "int")}
        assert numeric <= set(RANGES[adapter]), (adapter, numeric - set(RANGES[adapter]))


TOY = pd.DataFrame({"doc_id": ["a", "b"], "text": ["refund policy for hotels", "travel booking portal"]})


@pytest.mark.parametrize(("k1", "b"), [(math.nan, 0.4), (math.inf, 0.4), (-5, 0.4), (0.9, math.nan), (0.9, 7)])
def test_bm25_itself_refuses_silent_parameters(k1, b) -> None:
    with pytest.raises(ConfigError, match="bm25: k1 must be a finite number >= 0 and b one between 0 and 1"):
        BM25Retriever(TOY, k1=k1, b=b)


def test_fusion_and_retries_refuse_nan() -> None:
    with pytest.raises(ConfigError, match="rrf_k must be > 0"):
        ReciprocalRankFusion([object(), object()], rrf_k=math.nan)
    with pytest.raises(ConfigError, match="must be finite and >= 0"):
        RetryPolicy(backoff=math.nan)


def test_http_client_refuses_a_nan_deadline() -> None:
    from evalops.transport.client import HttpClient

    with pytest.raises(ConfigError, match="finite and > 0"):
        HttpClient(timeout=math.nan)


@pytest.mark.parametrize("cls", [BM25Retriever, TfidfRetriever])
def test_an_index_without_a_single_term_fails_instead_of_answering_nothing(cls) -> None:
    # every text is stop words or one-letter tokens: nothing to index, every query would get an empty list
    corpus = pd.DataFrame({"doc_id": ["a", "b"], "text": ["the a of", "I x y"]})
    with pytest.raises(ConfigError, match="indexed document\\(s\\) give no term"):
        cls(corpus, tokenizer=Tokenizer(stem=False))


def test_retrieve_with_a_nan_k1_is_bad_input_not_an_empty_run(tmp_path) -> None:
    folder = tmp_path / "kb"
    folder.mkdir()
    (folder / "corpus.jsonl").write_text("".join(json.dumps({"_id": r.doc_id, "text": r.text}) + "\n" for r in TOY.itertuples()))
    (folder / "queries.jsonl").write_text(json.dumps({"_id": "q1", "text": "refund"}) + "\n")
    (folder / "qrels.tsv").write_text("query-id\tcorpus-id\tscore\nq1\ta\t1\n")
    reg, line = write(tmp_path, "builtin", BM25, "k1: .nan")
    out = tmp_path / "run.trec"
    res = CliRunner().invoke(main, ["retrieve", "kb@1", "--dataset", str(folder), "--registry", str(reg), "-o", str(out)])
    assert res.exit_code == ExitCode.BAD_INPUT, res.output
    assert f"{reg}:{line}: retriever kb@1: builtin bm25: k1 is nan" in res.output
    assert "queries answered" not in res.output and not out.exists()
