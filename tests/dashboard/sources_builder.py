"""A project whose candidate fills its top 5 from one source of the sample corpus, that source renamed with
markup for every medium; two days run, so the second compares the candidate with the promoted baseline."""

from __future__ import annotations

import json
from pathlib import Path

# a hostile source name: a script for HTML, markup for markdown, a broadcast for Slack
HOSTILE = "<script>window.__pwned=1</script>err|*[x](http://e.x)&<!channel>"


def _write_run(path: Path, ranked: dict[str, list[str]]) -> None:
    with path.open("w") as out:
        for q, docs in ranked.items():
            for r, d in enumerate(docs):
                out.write(f"{q} Q0 {d} {r + 1} {100 - r} planted\n")


def build_sourced_project(tmp: Path, repo_root: Path) -> dict:
    """Returns ``{"cfg", "day2", "result", "rows", "baseline", "candidate", "gold"}``."""
    from evalops.config import load_config
    from evalops.goldset import load_gold_set
    from evalops.pipeline import RunContext, run_local
    from evalops.pipeline.promotion import promote

    rows = [json.loads(line) for line in (repo_root / "include" / "knowledge_base" / "corpus.jsonl")
            .read_text(encoding="utf-8").splitlines()]
    for row in rows:
        if row["metadata"]["source"] == "error-code-reference":
            row["metadata"]["source"] = HOSTILE
    (tmp / "kb").mkdir()
    (tmp / "kb" / "corpus.jsonl").write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows),
                                              encoding="utf-8")
    gold = load_gold_set(repo_root / "include" / "goldset")
    errs = [r["_id"] for r in rows if r["_id"].startswith("err-")]
    judged = gold.judgments.sort_values(["query_id", "grade", "doc_id"], ascending=[True, False, True])
    baseline, candidate = {}, {}
    for q, group in judged.groupby("query_id"):
        docs = group["doc_id"].tolist()
        baseline[q] = docs + [d for d in errs[:3] if d not in docs]
        candidate[q] = [d for d in errs if d not in docs][:5] + docs  # the top 5 from one source
    _write_run(tmp / "baseline.trec", baseline)
    _write_run(tmp / "candidate.trec", candidate)
    entry = "  - {{name: s, version: '{v}', adapter: run_file, deployed: true, owner: o, params: {{path: {p}}}}}\n"
    (tmp / "retrievers.yaml").write_text("retrievers:\n" + entry.format(v="1.0", p="baseline.trec")
                                         + entry.format(v="2.0", p="candidate.trec"))
    (tmp / "evalops.yaml").write_text(
        f"gold_set: {{path: {repo_root / 'include' / 'goldset'}}}\n"
        "knowledge_base:\n  path: kb\n  sources: {field: source, k: 5, max_share_shift: 0.3}\n"
        "  long_document_percentile: 75\n"
        "registry: retrievers.yaml\nmeasures: [nDCG@10, P@5]\nlog_sample_size: 0\n")
    cfg = load_config(tmp, environ={})
    run_local(cfg, RunContext.for_day("2024-06-01"))
    promote(cfg, retriever="s", version="1.0", promoted_by="test", reason="the deployed version")
    day2 = RunContext.for_day("2024-06-02")
    return {"cfg": cfg, "day2": day2, "result": run_local(cfg, day2), "rows": rows, "baseline": baseline,
            "candidate": candidate, "gold": gold}
