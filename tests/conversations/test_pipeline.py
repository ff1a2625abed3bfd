"""A conversational gold set through the pipeline (`evalops run`): retrievers get the history, the comparison's
unit is the conversation (n = conversations in the warehouse), and the policy is in the fingerprint."""

from __future__ import annotations

import pytest

from tests.conversations.collection import build

pytestmark = pytest.mark.slow


@pytest.fixture(autouse=True)
def _no_evalops_environment(monkeypatch):
    import os

    for key in list(os.environ):
        if key.startswith("EVALOPS_") and key != "EVALOPS_SHARED_DATA":
            monkeypatch.delenv(key)


def test_turns_get_their_history_and_are_decided_by_conversation(tmp_path, shared_data):
    from evalops.config import load_config
    from evalops.conversations import load_conversation_gold_set
    from evalops.pipeline import RunContext, run_local
    from evalops.pipeline.deciding import load_decisions
    from evalops.pipeline.promotion import promote
    from evalops.pipeline.specs import VersionSpec
    from evalops.pipeline.store import engine_for
    from evalops.warehouse import get_fingerprint, get_run

    nf = shared_data / "nfcorpus-orig-test"
    build(nf, tmp_path / "gold")
    gold = load_conversation_gold_set(tmp_path / "gold")
    (tmp_path / "retrievers.yaml").write_text(
        "retrievers:\n"
        "  - {name: nf, version: '1.0', adapter: python, deployed: true, owner: s, params: {entry_point: "
        "'evalops.conversations.retrievers:history_bm25', factory: true, with_corpus: true, "
        "options: {policy: history}}}\n"
        "  - {name: nf, version: '2.0', adapter: builtin, deployed: true, owner: s, params: {kind: bm25}}\n")
    (tmp_path / "evalops.yaml").write_text(
        f"gold_set: {{path: gold}}\nknowledge_base: {{path: {nf}}}\nregistry: retrievers.yaml\n"
        "measures: [nDCG@10]\nlog_sample_size: 0\n")
    cfg = load_config(tmp_path, environ={})
    run_local(cfg, RunContext.for_day("2024-06-01"))
    promote(cfg, retriever="nf", version="1.0", promoted_by="test", reason="asks with the history")
    day2 = RunContext.for_day("2024-06-02")
    result = run_local(cfg, day2)

    specs = [VersionSpec.from_xcom(v) for v in result["versions"]]
    [record] = [r.to_record() for r in load_decisions(engine_for(cfg), specs) if r.family == "gold"]
    comp = record["comparison"]
    n_conversations = len(gold.conversations.conversation_ids)
    assert comp["n"] == n_conversations == 39 and len(gold.judged_ids) == 99
    assert any(n.startswith("unit: conversation (n = 39 conversations, the mean of their 99 judged turns")
               for n in comp["notes"])
    assert any(n.startswith("drift by turn depth (mean per-turn value, baseline -> candidate): turn 1 (39) ")
               for n in comp["notes"])
    from pathlib import Path

    report = (tmp_path / Path(result["report"])).read_text(encoding="utf-8")  # an absolute path stays itself
    assert "unit: conversation (n = 39 conversations" in report and "drift by turn depth" in report
    engine = engine_for(cfg)
    spec = next(s for s in specs if s.version == "2.0")
    fingerprint = get_run(engine, spec.run_id).fingerprint
    policies = (fingerprint if hasattr(fingerprint, "policies") else get_fingerprint(engine, fingerprint)).policies
    assert policies["conversation_unit"]["unit"] == "conversation"

    # the history reached 1.0 (its first turns equal the history-blind 2.0's, its later turns do not), and the
    # stored delta is the mean of the conversations' mean deltas of the stored per-turn values
    from collections import defaultdict

    import numpy as np

    from evalops.conversations import parse_turn_id
    from evalops.warehouse import load_scores

    def values(run_id):
        f = load_scores(engine, run_id)
        f = f[f["measure"] == "nDCG@10"]
        return dict(zip(f["query_id"], f["value"], strict=False))

    base, cand = values(spec.baseline_run_id), values(spec.run_id)
    assert all(base[q] == cand[q] for q in base if q.endswith("_1"))
    assert sum(base[q] != cand[q] for q in base if not q.endswith("_1")) > 20
    per_conv = defaultdict(list)
    for q in base:
        per_conv[parse_turn_id(q)[0]].append(cand[q] - base[q])
    assert comp["delta"] == pytest.approx(np.mean([np.mean(d) for d in per_conv.values()]), abs=1e-12)


def test_the_gate_fails_on_a_regression_by_conversation(tmp_path, shared_data):
    """Planted run files: the candidate keeps turn 1 and loses every later turn; `evalops gate` exits 4 and its
    failing case is the comparison over the 39 conversations."""
    import json

    from click.testing import CliRunner

    from evalops.cli import main
    from evalops.config import load_config
    from evalops.pipeline import RunContext, run_local
    from evalops.pipeline.promotion import promote

    nf = shared_data / "nfcorpus-orig-test"
    build(nf, tmp_path / "gold")
    rel: dict[str, list[str]] = {}
    for line in (tmp_path / "gold" / "qrels.tsv").read_text().splitlines()[1:]:
        q, d, g = line.split("\t")
        if int(g) > 0:
            rel.setdefault(q, []).append(d)
    junk = ["MED-1", "MED-2", "MED-3", "MED-4", "MED-5"]
    with (tmp_path / "base.trec").open("w") as b, (tmp_path / "cand.trec").open("w") as c:
        for q, docs in rel.items():
            good = [d for d in docs if d not in junk][:10]
            for r, d in enumerate(good):
                b.write(f"{q} Q0 {d} {r + 1} {100 - r} b\n")
            for r, d in enumerate(good if q.endswith("_1") else junk):
                c.write(f"{q} Q0 {d} {r + 1} {100 - r} c\n")
    entry = "  - {{name: nf, version: '{v}', adapter: run_file, deployed: true, owner: s, params: {{path: {p}}}}}\n"
    (tmp_path / "retrievers.yaml").write_text("retrievers:\n" + entry.format(v="1.0", p="base.trec")
                                              + entry.format(v="2.0", p="cand.trec"))
    (tmp_path / "evalops.yaml").write_text(
        f"gold_set: {{path: gold}}\nknowledge_base: {{path: {nf}}}\nregistry: retrievers.yaml\n"
        "measures: [nDCG@10]\nlog_sample_size: 0\n")
    cfg = load_config(tmp_path, environ={})
    run_local(cfg, RunContext.for_day("2024-06-01"))
    promote(cfg, retriever="nf", version="1.0", promoted_by="test", reason="the deployed version")
    out = CliRunner().invoke(main, ["gate", "--project", str(tmp_path), "--date", "2024-06-02", "--format", "json",
                                    "--junit-xml", str(tmp_path / "junit.xml")], env={"EVALOPS_HOME": str(tmp_path)})
    assert out.exit_code == 4, out.output
    cases = json.loads(out.stdout)["gate"]["cases"]
    [failing] = [c for c in cases if c["outcome"] != "passed"]
    assert "nf" in json.dumps(failing) and "2.0" in json.dumps(failing)
    assert failing["decision"] == "regression" and "n 39 (against 1.0)" in failing["message"]  # conversations
    # the terminal table says the delta is decided over conversations while the mean beside it is over turns
    table = CliRunner().invoke(main, ["run", "--project", str(tmp_path), "--date", "2024-06-02"],
                               env={"EVALOPS_HOME": str(tmp_path), "COLUMNS": "400"})
    assert "vs 1.0, by conversation (n 39; the mean is over turns)" in table.output, table.output
