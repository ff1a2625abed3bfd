"""A dense retriever's document vectors are embedded once per knowledge-base snapshot and encoder.

Three daily runs of a project whose only version is the built-in wordllama encoder: the first embeds every
document, the second (same knowledge base) embeds none, the third (one document's text changed) embeds that
document alone; the counts are the run's facts (``evalops.pipeline.facts.shard_embeddings``).
"""

from __future__ import annotations

import json
import shutil

import pytest

pytestmark = pytest.mark.slow


def test_unchanged_knowledge_base_embeds_nothing_and_a_changed_document_alone(tmp_path, repo_root):
    from evalops.config import load_config
    from evalops.pipeline import RunContext, run_local
    from evalops.pipeline.facts import shard_embeddings

    kb = tmp_path / "kb"
    kb.mkdir()
    shutil.copy(repo_root / "include" / "knowledge_base" / "corpus.jsonl", kb / "corpus.jsonl")
    n_docs = len((kb / "corpus.jsonl").read_text().splitlines())
    (tmp_path / "retrievers.yaml").write_text(
        "retrievers:\n  - {name: vec, version: '1.0', adapter: builtin, deployed: true, owner: s,\n"
        "     params: {kind: dense, model: wordllama, dim: 128}}\n")
    (tmp_path / "evalops.yaml").write_text(
        f"gold_set: {{path: {repo_root / 'include' / 'goldset'}}}\nknowledge_base: {{path: {kb}}}\n"
        "registry: retrievers.yaml\nmeasures: [nDCG@10]\nlog_sample_size: 0\n")
    cfg = load_config(tmp_path, environ={})

    def counts(day: str) -> dict[str, int]:
        run = RunContext.for_day(day)
        said: list[str] = []
        result = run_local(cfg, run, progress=said.append)
        (spec,) = [s for s in result["versions"] if s["retriever"] == "vec"]
        assert spec["n_shards"] == 1  # one shard: it looks the corpus up once
        found = shard_embeddings(cfg, run, spec["run_id"], spec["n_shards"])
        # the run says so as it goes (what `evalops run` prints)
        assert any(line.endswith(f": embedded {found['embedded']} documents, {found['cached']} read from the "
                                 "embedding cache") for line in said), said
        return found

    assert counts("2024-06-01") == {"embedded": n_docs, "cached": 0}
    assert counts("2024-06-02") == {"embedded": 0, "cached": n_docs}

    lines = (kb / "corpus.jsonl").read_text().splitlines()
    doc = json.loads(lines[5])
    doc["text"] = doc["text"] + " Updated: the policy now also covers contractors."
    lines[5] = json.dumps(doc, ensure_ascii=False)
    (kb / "corpus.jsonl").write_text("\n".join(lines) + "\n")
    assert counts("2024-06-03") == {"embedded": 1, "cached": n_docs - 1}
