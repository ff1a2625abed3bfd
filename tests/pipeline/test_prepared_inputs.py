"""A run reads its knowledge base and gold set from their sources once (the snapshot and validation steps);
planning, every shard, comparing and the facts map the prepared copies. A copy is used only while the
source is unchanged: a knowledge base edited during the run is still refused."""

from __future__ import annotations

import pytest

from evalops.errors import InputError
from evalops.goldset import load_gold_set


def _ranked(gold, pads):
    by_query: dict[str, list[str]] = {}
    for q, d, g in zip(gold.judgments["query_id"], gold.judgments["doc_id"], gold.judgments["grade"]):
        docs = by_query.setdefault(q, [])  # every judged query is answered (no-answer ones with pads only)
        if g > 0:
            docs.append(d)
    def padded(docs, first):
        extra = [p for p in pads if p not in docs][:3]
        return extra + docs if first else docs + extra
    baseline = {q: padded(docs, False) for q, docs in by_query.items()}
    candidate = {q: padded(docs, True) for q, docs in by_query.items()}
    return baseline, candidate


def test_each_input_is_read_from_its_source_once_per_run(repo_root, planted_project, monkeypatch):
    import evalops.goldset
    import evalops.knowledge

    reads = {"kb": 0, "gold": 0}
    real_snapshot, real_gold = evalops.knowledge.load_snapshot, evalops.goldset.load_gold_set

    def counted(kind, real):
        def read(*args, **kwargs):
            reads[kind] += 1
            return real(*args, **kwargs)
        return read

    monkeypatch.setattr(evalops.knowledge, "load_snapshot", counted("kb", real_snapshot))
    monkeypatch.setattr(evalops.goldset, "load_gold_set", counted("gold", real_gold))
    # the copies are discarded by the run's last step; keep them here to map them as a worker of the run would
    from evalops.pipeline import publishing

    monkeypatch.setattr(publishing, "discard_prepared", lambda cfg: 0)
    gold = load_gold_set(repo_root / "include" / "goldset")
    reads["gold"] = 0
    baseline, candidate = _ranked(gold, planted_project.pads)
    cfg, day2, result = planted_project(gold, baseline, candidate, ["nDCG@5", "R@10"],
                                        extra="shard_size: 20\n")
    assert all(s["n_shards"] > 1 for s in result["versions"])  # several shards, each mapping the copies
    # two runs (day 1 and day 2), one read of each input per run; except the knowledge base's on day 2: the
    # same bytes are known by their SHA-256 (evalops.pipeline.known_kb) and run files never read its texts
    assert reads == {"kb": 1, "gold": 2}

    # another worker (nothing held in its process) maps the Parquet copies, still without reading the sources
    from evalops.pipeline import prepared
    from evalops.pipeline.inputs import current_snapshot, gold_set_for_run

    prepared._memo.clear()
    snapshot_id = result["versions"][0]["snapshot_id"]
    snapshot = current_snapshot(cfg, snapshot_id)
    again = gold_set_for_run(cfg)
    assert reads == {"kb": 1, "gold": 2}
    assert snapshot.snapshot_id == snapshot_id and len(snapshot) == len(real_snapshot(cfg.knowledge_base_path()))
    assert again.version == gold.version and again.queries.equals(gold.queries)
    assert again.judgments.equals(gold.judgments)


def test_a_knowledge_base_changed_during_the_run_is_refused(tmp_path, repo_root):
    import shutil

    from evalops.config import load_config
    from evalops.pipeline import RunContext
    from evalops.pipeline.inputs import current_snapshot, snapshot_knowledge_base
    from evalops.pipeline.store import migrate_warehouse

    kb = tmp_path / "kb"
    shutil.copytree(repo_root / "include" / "knowledge_base", kb)
    (tmp_path / "evalops.yaml").write_text(f"gold_set: {{path: {repo_root / 'include' / 'goldset'}}}\n"
                                           f"knowledge_base: {{path: {kb}}}\nregistry: r.yaml\n")
    cfg = load_config(tmp_path, environ={})
    run = RunContext.for_day("2024-06-01")
    migrate_warehouse(cfg, run)
    snapshot_id = snapshot_knowledge_base(cfg, run)
    assert current_snapshot(cfg, snapshot_id).snapshot_id == snapshot_id
    corpus = kb / "corpus.jsonl"
    corpus.write_text(corpus.read_text().replace('"text":"', '"text":"edited ', 1))
    with pytest.raises(InputError, match="changed during the run"):
        current_snapshot(cfg, snapshot_id)


def test_no_copy_of_the_inputs_outlives_the_run(repo_root, planted_project):
    """The prepared copies hold the gold queries' text unscrubbed: the run's last step removes them."""
    gold = load_gold_set(repo_root / "include" / "goldset")
    baseline, candidate = _ranked(gold, planted_project.pads)
    cfg, _, _ = planted_project(gold, baseline, candidate, ["nDCG@5"])
    from evalops.pipeline.workdir import work_root

    folder = work_root(cfg) / "prepared"
    assert not folder.exists() or list(folder.iterdir()) == []
