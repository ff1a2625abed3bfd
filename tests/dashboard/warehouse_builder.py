"""A warehouse filled by the real pipeline (``evalops.pipeline.run_local``, no Airflow) on the sample data,
with hostile query text planted in the gold set and in the production logs.

Day 1 (2024-05-31) scores the deployed baseline and promotes it; day 2 (2024-06-01) deploys the candidates
(a better hybrid and a planted regression), so day 2 has comparisons, a regression alert and, on the
trend, the promotion marker of day 1.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from tests.dags.conftest import DAGS, INCLUDE, make_home

DAY_ONE, DAY_TWO = "2024-05-31", "2024-06-01"
# Markup and script payloads: each must reach the page as visible text and run nothing.
PAYLOAD = '<script>window.__pwned=1</script><img src=x onerror="window.__pwned=2"> javascript:window.__pwned=3'
GOLD_PAYLOAD_ID = "q900"
# A copy of a gold query the truncated index loses (its relevant documents are in the dropped half), so the
# planted query is among the worst queries of the regression.
GOLD_TEMPLATE_ID = "q024"
PROD_TEMPLATE_DOCS = ["manual-AX-200-lights"]


def _plant_gold(folder: Path) -> None:
    queries = folder / "queries.jsonl"
    lines = queries.read_text(encoding="utf-8").splitlines()
    template = next(json.loads(line) for line in lines if json.loads(line)["_id"] == GOLD_TEMPLATE_ID)
    planted = {"_id": GOLD_PAYLOAD_ID, "text": f"{template['text']} {PAYLOAD}", "metadata": template["metadata"]}
    queries.write_text("\n".join([*lines, json.dumps(planted, ensure_ascii=False)]) + "\n", encoding="utf-8")
    qrels = folder / "qrels" / "test.tsv"
    rows = [r for r in qrels.read_text(encoding="utf-8").splitlines() if r.startswith(f"{GOLD_TEMPLATE_ID}\t")]
    qrels.write_text(qrels.read_text(encoding="utf-8").rstrip("\n") + "\n"
                     + "\n".join(r.replace(GOLD_TEMPLATE_ID, GOLD_PAYLOAD_ID, 1) for r in rows) + "\n")


def _plant_logs(logs: Path, day: str) -> None:
    part = next((logs / f"date={day}").glob("*.jsonl"))
    lines = part.read_text(encoding="utf-8").splitlines()
    first = json.loads(lines[0])
    # A copy of the first record (same time, session, version) asking a hostile question, with feedback on the
    # documents the truncated index dropped, so it is judged, scored and among the regression's worst.
    record = {**first, "query": f"air purifier filter light blinking orange {PAYLOAD}",
              "clicked_doc_ids": PROD_TEMPLATE_DOCS, "cited_doc_ids": PROD_TEMPLATE_DOCS}
    part.write_text("\n".join([lines[0], json.dumps(record, ensure_ascii=False), *lines[1:]]) + "\n",
                    encoding="utf-8")


def build_warehouse(root: Path) -> dict:
    """Run the two days into ``root``; returns ``{"cfg", "engine", "env", "day2"}``."""
    from evalops.config import load_config
    from evalops.pipeline import RunContext, promote, run_local
    from evalops.pipeline.demo import plan_demo
    from evalops.pipeline.store import engine_for

    env = make_home(root, log_start="2024-05-30", log_days=2)
    gold = root / "goldset"
    shutil.copytree(INCLUDE / "goldset", gold)
    _plant_gold(gold)
    _plant_logs(Path(env["EVALOPS_QUERY_LOGS"]), "2024-05-31")
    env.update({"EVALOPS_GOLD_SET": str(gold), "EVALOPS_LOG_SAMPLE_SIZE": "5000"})
    cfg = load_config(root, environ=env)
    overlay = plan_demo(cfg, dags=DAGS).overlay
    run_local(cfg, RunContext.for_day(DAY_ONE))
    promote(cfg, retriever="handbook-search", version="1.0", reason="day 1 <b>baseline</b>", promoted_by="tests")
    day2 = load_config(root, environ={**env, "EVALOPS_RETRIEVERS_OVERLAY": str(overlay)})
    result = run_local(day2, RunContext.for_day(DAY_TWO))
    return {"cfg": day2, "engine": engine_for(day2), "env": env, "result": result}
