"""Closing the judging loop on a small copy of NFCorpus: a comparison held ``inconclusive
(unjudged_documents)``, its holes labelled by two annotators in the dashboard, agreement measured, the
conflicts adjudicated, ``evalops gold merge`` making version 2, and the next run deciding the comparison."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from click.testing import CliRunner

from evalops.cli import main

from small_nfcorpus import HOSTILE, build, write_project

pytestmark = pytest.mark.slow

TOKEN = "s3cret-token"
AUTH = {"Authorization": f"Bearer {TOKEN}"}


def _cli(*args):
    return CliRunner().invoke(main, [str(a) for a in args], catch_exceptions=False)


def _decision(home: Path, day: str) -> dict:
    result = _cli("run", "--project", home, "--date", day, "--format", "json")
    payload = json.loads(result.output[result.output.index("{"):])
    [record] = [c for c in payload["results"]["gold"] if c["version"] == "2.0"]
    return record


def _csrf(html: str) -> str:
    return re.search(r'name="csrf" value="([0-9a-f]+)"', html).group(1)


@pytest.fixture(scope="module")
def planted(shared_data, tmp_path_factory):
    data = shared_data / "nfcorpus-orig-test"
    if not data.is_dir():
        pytest.skip(f"NFCorpus not found at {data}")
    root = tmp_path_factory.mktemp("labelling")
    found = build(data, root, n_queries=70)
    home = root / "proj"
    with pytest.MonkeyPatch.context() as mp:
        import os

        for key in [k for k in os.environ if k.startswith("EVALOPS_") and k != "EVALOPS_SHARED_DATA"]:
            mp.delenv(key)
        write_project(home, found)
        assert _cli("run", "--project", home, "--date", "2024-06-01").exit_code == 0
        assert _cli("promote", "search", "1.0", "--project", home, "--reason", "day 1", "--by", "tests").exit_code == 0
        write_project(home, found, versions=("1.0", "2.0"))
        day2 = _decision(home, "2024-06-02")
        yield {**found, "home": home, "day2": day2}


def _client(home: Path):
    from fastapi.testclient import TestClient

    from evalops.config import load_config
    from evalops.dashboard import DashboardSettings, create_app
    from evalops.dashboard.auth import DashboardAuth
    from evalops.dashboard.labelling import LabellingSettings
    from evalops.pipeline.store import engine_for

    cfg = load_config(home, environ={})
    app = create_app(engine_for(cfg), settings=DashboardSettings.from_config(cfg), auth=DashboardAuth(token=TOKEN),
                     labelling=LabellingSettings.from_config(cfg))
    return TestClient(app), cfg


def test_two_annotators_label_the_holes_and_the_next_version_decides_the_comparison(planted):
    home = planted["home"]
    assert (planted["day2"]["decision"], planted["day2"]["reason_code"]) == ("inconclusive", "unjudged_documents")

    from evalops.judges.generate import queue_path, read_queue

    client, cfg = _client(home)
    holes = [r for r in read_queue(queue_path(cfg)) if r["source"] == "hole"]
    assert len(holes) > 100
    conflicts = {h["item_id"] for h in holes[:4]}
    hostile_seen = False
    for annotator in ("ana", "ben"):
        client.cookies.clear()
        page = client.get("/label", headers=AUTH)
        assert page.status_code == 200
        named = client.post("/label/annotator", data={"annotator": annotator, "csrf": _csrf(page.text)},
                            headers=AUTH, follow_redirects=False)
        assert named.status_code == 303
        for hole in holes:
            item = client.get(f"/label/item/{hole['item_id']}", headers=AUTH)
            assert item.status_code == 200
            if hole["doc_id"] in planted["hostile"]:
                hostile_seen = True
                assert "<script>" not in item.text and "&lt;script&gt;" in item.text
                assert "onerror=alert" not in item.text.replace("&lt;img src=x onerror=alert(1)&gt;", "")
            grade = 0 if hole["item_id"] not in conflicts or annotator == "ana" else 1
            done = client.post(f"/label/item/{hole['item_id']}", headers=AUTH, follow_redirects=False,
                               data={"grade": str(grade), "csrf": _csrf(item.text)})
            assert done.status_code == 303, done.text
    assert hostile_seen and HOSTILE

    agreement = client.get("/label/agreement", headers=AUTH)
    assert agreement.status_code == 200
    assert agreement.text.count('class="conflict"') == len(conflicts)
    kappa = re.search(r"<td>ana</td><td>ben</td>.*?kappa\">([^<]+)<", agreement.text, re.S).group(1)
    assert kappa == "0.000"  # ana said 0 everywhere: no variance on her side, kappa 0 (not NaN: ben varied)
    # a merge before the conflicts are settled adds only the agreed holes
    dry = _cli("gold", "merge", "--project", home, "--dry-run", "--format", "json")
    assert json.loads(dry.output)["left_out"] == {"conflict (undecided)": len(conflicts)}
    for item_id in conflicts:
        form = _csrf(agreement.text)
        settled = client.post(f"/label/adjudicate/{item_id}", headers=AUTH, follow_redirects=False,
                              data={"grade": "0", "csrf": form, "comment": "<b>off topic</b>"})
        assert settled.status_code == 303
    after = client.get("/label/agreement", headers=AUTH)
    assert 'class="conflict"' not in after.text and "&lt;b&gt;" not in after.text  # comments of labels only

    merged = _cli("gold", "merge", "--project", home, "--by", "carol", "--format", "json")
    assert merged.exit_code == 0, merged.output
    result = json.loads(merged.output)
    assert result["number"] == 2 and result["added"] == len(holes) and result["version"] != result["parent_version"]

    from evalops.pipeline.store import engine_for
    from evalops.warehouse.labels import load_gold_set_merges

    history = load_gold_set_merges(engine_for(cfg), "gold")
    assert [(m.number, m.version) for m in history] == [(1, result["parent_version"]), (2, result["version"])]
    judgments = {j["item_id"]: j for j in history[1].provenance["judgments"]}
    assert len(judgments) == len(holes) and history[1].merged_by == "carol"
    for item_id, j in judgments.items():
        if item_id in conflicts:
            assert (j["decided"], j["adjudicator"], j["labels"], j["grade"]) == (
                "adjudicated", "ben", {"ana": 0, "ben": 1}, 0)
        else:
            assert (j["decided"], j["adjudicator"], j["labels"], j["grade"]) == (
                "agreed", None, {"ana": 0, "ben": 0}, 0)
    # the parent's file is kept; the gold set now judges every hole, and its contract still holds
    assert Path(result["archive"]).read_text() != Path(result["file"]).read_text()
    from evalops.pipeline.inputs import load_gold_set_for

    gold = load_gold_set_for(cfg)
    assert gold.version == result["version"]
    judged = set(zip(gold.judgments["query_id"], gold.judgments["doc_id"]))
    assert {(h["query_id"], h["doc_id"]) for h in holes} <= judged
    again = json.loads(_cli("gold", "merge", "--project", home, "--format", "json").output)
    assert again["version"] is None and again["left_out"] == {"already judged in the gold set": len(holes)}

    # the next run: a new gold-set version, so a new fingerprint; the baseline is re-scored under it and the
    # comparison held for want of these judgments is decided (the holes were not relevant: a regression)
    day3 = _decision(home, "2024-06-03")
    assert day3["decision"] == "regression" and day3["reason_code"] != "unjudged_documents", day3
