"""The leak test: plant distinctive secrets and personal data in every input, run the pipeline on the sample
data for two days, then grep every file written and a dump of the warehouse (and the log): zero hits."""

from __future__ import annotations

import importlib.util
import json
import logging
import shutil
from datetime import date, timedelta
from pathlib import Path

import pytest
import yaml
from tests.faults.servers import SearchService, Webhook

pytestmark = [pytest.mark.slow, pytest.mark.timeout(600, method="thread")]  # a hang guard for two pipeline runs

REPO = Path(__file__).resolve().parents[2]
INCLUDE = REPO / "include"

# Each planted value, as it would appear if it leaked. Query-text values are ones the scrubber recognises.
QUERY_TEXT_PLANTS = {
    "email": "leak.victim.77@example.org",
    "phone": "+1 415 555 0199",
    "ipv4": "203.0.113.77",
    "ipv6": "2001:db8:85a3::8a2e:370:7334",
    "openai": "sk-live-PLANTEDq1w2e3r4t5y6u7i8o9",
    "aws": "AKIAPLANTED123456789",
    "github": "ghp_PLANTEDabcdefghijklmnopqrstuvwxyz0123",
    "password": "PlantedPw-9931",
    "card": "4111 1111 1111 1111",
}
CONFIG_PLANTS = {
    "url_password": "UrlPass-PLANTED-5521",
    "url_key": "UrlKey-PLANTED-8812",
    "body_secret": "BodySecret-PLANTED-0071",
    "header_token": "HeaderToken-PLANTED-3390",
    "webhook_path": "HOOKTOKEN-PLANTED-4417",
    "log_user": "UserId-PLANTED-6650",
}


def planted_query() -> str:
    p = QUERY_TEXT_PLANTS
    return (f"hotel refund for {p['email']} call {p['phone']} from {p['ipv4']} or {p['ipv6']}, keys "
            f"{p['openai']} {p['aws']} {p['github']} password={p['password']} card {p['card']} "
            # (a NUL is refused where the gold set is read, with its line: tests/formats/test_unsafe_characters.py)
            "[phish](http://evil.example/x) ![px](http://evil.example/p.png) <!channel> \u202e")


def _generate_logs(out: Path, start: date, days: int) -> None:
    spec = importlib.util.spec_from_file_location("generate_query_logs", INCLUDE / "generate_query_logs.py")
    gen = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(gen)
    gen.generate_query_logs(out, start, days=days, rows_per_day=200)
    for day_dir in sorted(out.glob("date=*")):
        day = day_dir.name.split("=", 1)[1]
        with (day_dir / "part-000.jsonl").open("a", encoding="utf-8") as f:
            for i in range(5):
                f.write(json.dumps({
                    "timestamp": f"{day}T12:00:0{i}Z", "query": planted_query(), "segment": "web",
                    "retriever_version": "handbook-search@1.0", "user_id": CONFIG_PLANTS["log_user"],
                    "session_id": CONFIG_PLANTS["log_user"], "clicked_doc_ids": ["travel-01"],
                }) + "\n")


def _goldset(into: Path) -> Path:
    shutil.copytree(INCLUDE / "goldset", into)
    queries = into / "queries.jsonl"
    rows = [json.loads(line) for line in queries.read_text(encoding="utf-8").splitlines() if line.strip()]
    for row in rows[:3]:
        row["text"] = row["text"] + " " + planted_query()
    queries.write_text("\n".join(json.dumps(r, ensure_ascii=False) for r in rows) + "\n", encoding="utf-8")
    return into


def _grep_files(root: Path, needles: list[str]) -> list[tuple[str, str]]:
    hits = []
    for path in root.rglob("*"):
        if not path.is_file():
            continue
        data = path.read_bytes()
        for needle in needles:
            if needle.encode("utf-8") in data:
                hits.append((str(path.relative_to(root)), needle))
    return hits


def _warehouse_dump(engine) -> str:
    from sqlalchemy import MetaData, select

    meta = MetaData()
    meta.reflect(engine)
    out = []
    with engine.connect() as conn:
        for table in meta.sorted_tables:
            for row in conn.execute(select(table)):
                out.append(f"{table.name}: {tuple(row)!r}")
    return "\n".join(out)


def test_no_planted_secret_or_personal_data_reaches_anything_evalops_writes(tmp_path, monkeypatch, caplog):
    from evalops.config import load_config
    from evalops.pipeline import RunContext, run_local
    from evalops.pipeline.store import engine_for
    from evalops.warehouse import find_run, promote_baseline, RunKey

    caplog.set_level(logging.DEBUG)
    home = tmp_path / "project"
    inputs = tmp_path / "inputs"  # the planted inputs themselves are not output: they live apart
    home.mkdir()
    inputs.mkdir()
    day1, day2 = date(2025, 3, 10), date(2025, 3, 11)
    _generate_logs(inputs / "logs", day1 - timedelta(days=1), days=2)
    gold = _goldset(inputs / "goldset")
    with (INCLUDE / "knowledge_base" / "corpus.jsonl").open(encoding="utf-8") as f:
        doc_ids = [json.loads(line)["_id"] for line in f if line.strip()][:30]

    service = SearchService(doc_ids, fail_first=3)
    hook = Webhook([("ok",)])
    c = CONFIG_PLANTS
    overlay = inputs / "remote.yaml"
    overlay.write_text(yaml.safe_dump({"retrievers": [{
        "name": "handbook-search", "version": "3.0-remote", "adapter": "http", "deployed": True, "owner": "tests",
        "params": {
            "url": f"http://svc-user:{c['url_password']}@127.0.0.1:{service.port}/search?api_key={c['url_key']}",
            "timeout": 10, "max_retries": 3, "backoff": 0.01, "backoff_max": 0.02,
            "body": {"collection": "handbook", "client_secret": c["body_secret"]},
            "auth": {"env": "REMOTE_SEARCH_TOKEN", "header": "X-Search-Token", "scheme": ""},
        },
    }]}))
    monkeypatch.setenv("REMOTE_SEARCH_TOKEN", c["header_token"])
    monkeypatch.setenv("EVALOPS_WEBHOOK_URL", hook.url.replace("SECRETHOOK", c["webhook_path"]))
    env = {
        "EVALOPS_HOME": str(home), "EVALOPS_GOLD_SET": str(gold),
        "EVALOPS_KNOWLEDGE_BASE": str(INCLUDE / "knowledge_base"), "EVALOPS_REGISTRY": str(INCLUDE / "retrievers.yaml"),
        "EVALOPS_RETRIEVERS_OVERLAY": str(overlay), "EVALOPS_QUERY_LOGS": str(inputs / "logs"), "EVALOPS_LOG_SAMPLE_SIZE": "100",
    }
    cfg = load_config(home, environ=env)
    try:
        first = RunContext.for_day(day1)
        run_local(cfg, first)
        engine = engine_for(cfg)
        base = find_run(engine, RunKey(first.dag_id, first.run_id, "handbook-search", "1.0", "gold"))
        promote_baseline(engine, base.id, by="tests", reason="leak test day 1")
        run_local(cfg, RunContext.for_day(day2))
    finally:
        service.stop()
        hook.stop()

    # The pipeline really ran on the planted inputs: the service got the secrets it needs...
    assert service.requests and any({k.lower(): v for k, v in r["headers"].items()}.get("x-search-token")
                                    == c["header_token"] for r in service.requests)
    assert any(c["body_secret"] == r["body"].get("client_secret") for r in service.requests)
    # ... the remote version retried its 503s, and the report says so
    remote = find_run(engine, RunKey(first.dag_id, first.run_id, "handbook-search", "3.0-remote", "gold"))
    assert remote.n_retries == 3
    reports = list(cfg.report_dir.rglob("report.md"))
    assert reports and any("retries" in p.read_text(encoding="utf-8") for p in reports)

    needles = list(QUERY_TEXT_PLANTS.values()) + list(CONFIG_PLANTS.values()) + ["PLANTED"]
    file_hits = _grep_files(home, needles)
    assert file_hits == [], file_hits
    dump = _warehouse_dump(engine)
    assert [n for n in needles if n in dump] == []
    assert [n for n in needles if n in caplog.text] == []
    # untrusted markup is neutralised in the markdown report
    for report in reports:
        text = report.read_text(encoding="utf-8")
        assert "](http://evil" not in text and "<!channel>" not in text and "\u202e" not in text and "\x00" not in text
    # the webhook got scrubbed, escaped text
    for received in hook.received:
        assert "<!" not in received["body"]["text"]
        assert not [n for n in needles if n in json.dumps(received["body"])]
