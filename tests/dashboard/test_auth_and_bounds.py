"""The dashboard beyond loopback needs credentials; with them set, a request without them is a 401. Values out
of range are 422/404, never a 500; every response carries a Content-Security-Policy and nosniff."""

from __future__ import annotations

import base64

import pytest
from click.testing import CliRunner

from evalops.cli import main
from evalops.exitcodes import ExitCode

pytestmark = pytest.mark.slow


@pytest.fixture
def no_credentials(monkeypatch):
    for var in ("EVALOPS_DASHBOARD_TOKEN", "EVALOPS_DASHBOARD_USER", "EVALOPS_DASHBOARD_PASSWORD",
                "EVALOPS_SECRETS_DIR"):
        monkeypatch.delenv(var, raising=False)


@pytest.mark.parametrize("host", ["0.0.0.0", "::", "192.0.2.7", "dashboard.example.com"])
def test_a_public_address_without_credentials_is_refused(host, no_credentials, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    result = CliRunner().invoke(main, ["dashboard", "--host", host])
    assert result.exit_code == ExitCode.USAGE, result.output
    assert f"--host {host} serves the dashboard" in result.output and "EVALOPS_DASHBOARD_TOKEN" in result.output
    assert "Traceback" not in result.output


def test_half_of_basic_credentials_is_refused(no_credentials, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("EVALOPS_DASHBOARD_USER", "ops")
    result = CliRunner().invoke(main, ["dashboard", "--host", "0.0.0.0"])
    assert result.exit_code == ExitCode.BAD_INPUT and "set both or neither" in result.output


def _client(filled, auth=None):
    from fastapi.testclient import TestClient

    from evalops.dashboard import DashboardSettings, create_app

    app = create_app(filled["engine"], settings=DashboardSettings.from_config(filled["cfg"]),
                     report_dir=filled["cfg"].report_dir, auth=auth)
    return TestClient(app)


def _report(filled) -> str:
    return next(p for p in filled["cfg"].report_dir.rglob("report.html")).relative_to(
        filled["cfg"].report_dir).as_posix()


def test_with_credentials_every_page_and_report_asks_for_them(filled):
    from evalops.dashboard.auth import DashboardAuth

    client = _client(filled, DashboardAuth(token="s3cret-token", basic=("ops", "pa:ss")))
    report = f"/reports/{_report(filled)}"
    for path in ("/", "/runs", "/alerts", "/trends", "/datadocs", report, "/healthz"):
        bare = client.get(path)
        assert bare.status_code == 401, path
        assert bare.headers["www-authenticate"].startswith("Basic")
        assert client.get(path, headers={"Authorization": "Bearer wrong"}).status_code == 401, path
        assert client.get(path, headers={"Authorization": "Bearer s3cret-token"}).status_code == 200, path
        good = base64.b64encode(b"ops:pa:ss").decode()
        bad = base64.b64encode(b"ops:pa").decode()
        assert client.get(path, headers={"Authorization": f"Basic {good}"}).status_code == 200, path
        assert client.get(path, headers={"Authorization": f"Basic {bad}"}).status_code == 401, path
    assert client.get("/static/style.css").status_code == 200  # the stylesheet only


def test_token_only_challenges_for_a_bearer_token(filled):
    from evalops.dashboard.auth import DashboardAuth

    client = _client(filled, DashboardAuth(token="t"))
    response = client.get("/")
    assert response.status_code == 401 and response.headers["www-authenticate"].startswith("Bearer")
    assert client.get("/", headers={"Authorization": "Basic " + base64.b64encode(b"t:t").decode()}).status_code == 401


@pytest.mark.parametrize(("path", "status"), [
    ("/ab/" + "9" * 40, 422), ("/ab/-1", 422), ("/ab/0", 422), (f"/ab/{2**63 - 1}", 404),
    ("/trends?days=" + "9" * 40, 422), ("/trends?days=-5", 422), ("/ab/notanumber", 422),
])
def test_out_of_range_values_are_client_errors(filled, path, status):
    response = _client(filled).get(path)
    assert response.status_code == status, (path, response.text[:300])


def test_every_response_says_what_the_browser_may_do(filled):
    client = _client(filled)
    report = f"/reports/{_report(filled)}"
    for path in ("/", "/trends", "/ab/1", "/ab/" + "9" * 40, "/nope", "/static/style.css", report,
                 "/reports/missing.html", "/healthz", "/datadocs"):
        response = client.get(path, follow_redirects=False)
        assert response.headers.get("x-content-type-options") == "nosniff", path
        assert "default-src 'none'" in response.headers.get("content-security-policy", ""), path
    assert "style-src 'unsafe-inline'" in client.get(report).headers["content-security-policy"]
