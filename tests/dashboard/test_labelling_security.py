"""The labelling pages write only with credentials and the session's CSRF token, escape every text, and are
absent from the static export."""

from __future__ import annotations

import json
import re

import pytest

from evalops.judges.generate import queue_row, write_queue

TOKEN = "t0ken"
AUTH = {"Authorization": f"Bearer {TOKEN}"}
HOSTILE = '<script>alert(1)</script>"><img src=x onerror=alert(2)>'


@pytest.fixture
def site(tmp_path):
    from evalops.warehouse import create_warehouse_engine, upgrade

    engine = create_warehouse_engine(f"sqlite:///{tmp_path / 'warehouse.db'}")
    upgrade(engine)
    kb = tmp_path / "corpus.jsonl"
    kb.write_text(json.dumps({"_id": "D1", "title": "", "text": HOSTILE + " body"}) + "\n")
    queue = tmp_path / "queue.jsonl"
    rows = [queue_row(source="hole", query=HOSTILE, query_id="Q1", doc_id="D1", proposed_grade=1,
                      origin="gold: s 2 vs 1, top 10; priority 0.500; in 2")]
    write_queue(queue, rows)
    yield {"engine": engine, "queue": queue, "kb": kb, "item": rows[0]["item_id"], "tmp": tmp_path}
    engine.dispose()


def _client(site, **options):
    from fastapi.testclient import TestClient

    from evalops.dashboard import create_app
    from evalops.dashboard.labelling import LabellingSettings

    labelling = LabellingSettings(queue=site["queue"], knowledge_base=site["kb"], labels_per_item=2)
    return TestClient(create_app(site["engine"], labelling=labelling, **options))


def _csrf(html: str) -> str:
    return re.search(r'name="csrf" value="([0-9a-f]+)"', html).group(1)


def _labels(site):
    from evalops.warehouse.labels import load_labels

    return load_labels(site["engine"])


def test_a_post_without_credentials_or_with_a_wrong_token_changes_nothing(site):
    from evalops.dashboard.auth import DashboardAuth

    client = _client(site, auth=DashboardAuth(token=TOKEN))
    assert client.get("/label").status_code == 401
    page = client.get("/label", headers=AUTH)
    token = _csrf(page.text)
    named = client.post("/label/annotator", data={"annotator": "ana", "csrf": token}, headers=AUTH,
                        follow_redirects=False)
    assert named.status_code == 303
    item = client.get(f"/label/item/{site['item']}", headers=AUTH)
    token = _csrf(item.text)
    url = f"/label/item/{site['item']}"
    assert client.post(url, data={"grade": "2", "csrf": token}).status_code == 401  # no credentials
    assert client.post(url, data={"grade": "2", "csrf": "0" * 64}, headers=AUTH).status_code == 403
    assert client.post(url, data={"grade": "2"}, headers=AUTH).status_code == 403
    other = {"Authorization": "Bearer another"}
    assert client.post(url, data={"grade": "2", "csrf": token}, headers=other).status_code == 401
    # the token of this session, in another session (a fresh cookie jar): refused
    stranger = _client(site, auth=DashboardAuth(token=TOKEN))
    stranger.get("/label", headers=AUTH)
    stranger.cookies.set("evalops_annotator", "ana")
    assert stranger.post(url, data={"grade": "2", "csrf": token}, headers=AUTH).status_code == 403
    assert client.post(f"/label/adjudicate/{site['item']}", data={"grade": "2", "csrf": "x"},
                       headers=AUTH).status_code == 403
    assert _labels(site) == []
    # a grade off the scale is refused too; the right token with a grade on it is recorded
    assert client.post(url, data={"grade": "7", "csrf": token}, headers=AUTH).status_code == 400
    done = client.post(url, data={"grade": "2", "csrf": token, "comment": HOSTILE}, headers=AUTH,
                       follow_redirects=False)
    assert done.status_code == 303
    [label] = _labels(site)
    assert (label.annotator, label.grade, label.comment) == ("ana", 2, HOSTILE)


def test_a_dashboard_without_credentials_takes_no_label(site):
    client = _client(site)
    page = client.get("/label")
    assert page.status_code == 200 and "takes no labels" in page.text and 'name="csrf"' not in page.text
    from evalops.dashboard.csrf import form_token

    forged = form_token(client.cookies["evalops_session"], page.request)  # even the right token
    assert client.post("/label/annotator", data={"annotator": "ana", "csrf": forged}).status_code == 403
    client.cookies.set("evalops_annotator", "ana")
    refused = client.post(f"/label/item/{site['item']}", data={"grade": "1", "csrf": forged})
    assert refused.status_code == 403
    assert _labels(site) == []


def test_every_text_is_escaped_and_no_script_runs(site):
    from evalops.dashboard.auth import DashboardAuth

    client = _client(site, auth=DashboardAuth(token=TOKEN))
    page = client.get("/label", headers=AUTH)
    client.post("/label/annotator", data={"annotator": "<b>ana</b>", "csrf": _csrf(page.text)}, headers=AUTH)
    for path in ("/label", f"/label/item/{site['item']}", "/label/agreement"):
        response = client.get(path, headers=AUTH)
        assert response.status_code == 200, path
        assert "<script>" not in response.text and "<img" not in response.text and "<b>ana" not in response.text
        assert "script-src" not in response.headers["content-security-policy"]  # no script allowed
    item = client.get(f"/label/item/{site['item']}", headers=AUTH).text
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in item and 'accesskey="2"' in item and 'accesskey="s"' in item
    assert client.get("/label/item/nope", headers=AUTH).status_code == 404


def test_the_static_export_has_no_labelling_page(site):
    from evalops.dashboard import export_site

    pages = export_site(site["engine"], site["tmp"] / "export")
    assert not any("label" in str(p) for p in pages)
    index = (site["tmp"] / "export" / "index.html").read_text()
    assert "Labelling" not in index and "/label" not in index


@pytest.mark.airflow
def test_inside_airflow_the_labelling_pages_need_the_login():
    from fastapi import FastAPI
    from fastapi.testclient import TestClient

    from evalops.airflow.plugin import EvalopsDashboardPlugin

    app = EvalopsDashboardPlugin.fastapi_apps[0]["app"]
    paths = {route.path for route in app.routes}
    assert {"/label", "/label/item/{item_id}", "/label/agreement", "/label/adjudicate/{item_id}"} <= paths
    root = FastAPI()
    root.mount("/evalops", app)
    client = TestClient(root)
    assert client.get("/evalops/label").status_code == 401
    assert client.post("/evalops/label/item/x", data={"grade": "1", "csrf": "x"}).status_code == 401


def test_behind_a_login_the_annotator_is_the_user_and_the_token_is_bound_to_the_session_cookie(site):
    """As the Airflow plugin builds it: a guard, the user's name from a dependency, the login's cookie."""
    from fastapi import Depends, HTTPException, Request

    def logged_in(request) -> None:
        if request.cookies.get("_token") not in ("jwt-ana", "jwt-ben"):
            raise HTTPException(401)

    def user(request) -> str:
        return request.cookies["_token"].removeprefix("jwt-")

    for dependency in (logged_in, user):  # FastAPI reads the class (this module's annotations are strings)
        dependency.__annotations__["request"] = Request

    client = _client(site, dependencies=[Depends(logged_in)], identity=user, credential_cookies=("_token",))
    assert client.get("/label").status_code == 401
    client.cookies.set("_token", "jwt-ana")
    page = client.get(f"/label/item/{site['item']}")
    token = _csrf(page.text)
    client.cookies.set("_token", "jwt-ben")  # another login in the same browser session: the token is not its
    assert client.post(f"/label/item/{site['item']}", data={"grade": "1", "csrf": token}).status_code == 403
    assert _labels(site) == []
    client.cookies.set("_token", "jwt-ana")
    assert client.post("/label/annotator", data={"annotator": "mallory", "csrf": token}).status_code == 400
    done = client.post(f"/label/item/{site['item']}", data={"grade": "1", "csrf": token}, follow_redirects=False)
    assert done.status_code == 303
    assert [(label.annotator, label.grade) for label in _labels(site)] == [("ana", 1)]


def test_under_a_prefix_every_labelling_link_and_form_stays_under_it(site):
    from fastapi import FastAPI
    from fastapi.testclient import TestClient

    from evalops.dashboard import create_app
    from evalops.dashboard.auth import DashboardAuth
    from evalops.dashboard.labelling import LabellingSettings

    root = FastAPI()
    labelling = LabellingSettings(queue=site["queue"], knowledge_base=site["kb"])
    root.mount("/evalops", create_app(site["engine"], prefix="/evalops", auth=DashboardAuth(token=TOKEN),
                                      labelling=labelling))
    client = TestClient(root)
    page = client.get("/evalops/label", headers=AUTH)
    assert page.status_code == 200
    assert client.cookies.get("evalops_session")
    client.post("/evalops/label/annotator", data={"annotator": "ana", "csrf": _csrf(page.text)}, headers=AUTH)
    for path in ("/evalops/label", f"/evalops/label/item/{site['item']}", "/evalops/label/agreement"):
        html = client.get(path, headers=AUTH).text
        targets = re.findall(r'(?:href|action)="([^"]+)"', html)
        assert targets and all(t.startswith("/evalops/") or t.startswith("data:") for t in targets), (path, targets)
