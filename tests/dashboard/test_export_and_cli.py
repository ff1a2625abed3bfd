"""``evalops dashboard --export DIR``: static pages that open from file:// with no network and show the
same charts as the app; ``evalops dashboard`` itself serves on 127.0.0.1."""

from __future__ import annotations

import re
import subprocess
import sys
import time

import httpx
import pytest
from click.testing import CliRunner

from evalops.cli import main
from evalops.exitcodes import ExitCode
from tests.dashboard.conftest import free_port

pytestmark = pytest.mark.slow


def _cli_env(filled, monkeypatch):
    for key, value in filled["env"].items():
        monkeypatch.setenv(key, value)
    monkeypatch.setenv("EVALOPS_RETRIEVERS_OVERLAY", str(filled["cfg"].retrievers_overlay))
    monkeypatch.chdir(filled["cfg"].home)


def _titles(html: str) -> list[str]:
    chart = html[html.index('id="trend-chart"'):html.index("</svg>", html.index('id="trend-chart"'))]
    return re.findall(r"<circle[^>]*><title>([^<]*)</title>", chart)


def test_export_opens_from_file_without_network_and_shows_the_same_charts(filled, server, browser, tmp_path,
                                                                         monkeypatch, screenshots):
    _cli_env(filled, monkeypatch)
    out = tmp_path / "site"
    result = CliRunner().invoke(main, ["dashboard", "--export", str(out)])
    assert result.exit_code == 0, result.output
    assert (out / "index.html").is_file() and (out / "static" / "style.css").is_file()
    assert (out / "reports").is_dir()

    context = browser.new_context()
    asked: list[str] = []

    def only_files(route):
        asked.append(route.request.url)
        if route.request.url.startswith("file://"):
            route.continue_()
        else:
            route.abort()

    context.route("**/*", only_files)
    page = context.new_page()
    errors: list[str] = []
    page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
    page.goto((out / "index.html").as_uri())
    assert page.locator("h1").inner_text() == "Overview"
    assert page.locator("link[rel=stylesheet]").evaluate("l => l.sheet !== null")
    page.locator('table.overview[data-dataset="gold"] thead a', has_text="nDCG@10").click()
    page.wait_for_load_state()
    exported = page.content()
    assert page.locator("#trend-chart g.marker-promotion").count() == 1
    page.screenshot(path=str(screenshots / "5-export-trend.png"), full_page=True)
    page.locator('#trend-chart a:has(circle[data-series="2.0-truncated"])').click()
    page.wait_for_load_state()
    assert page.locator(".decision-line").inner_text() == "regression"
    assert page.url.startswith("file://")
    page.goto((out / "datadocs.html").as_uri())
    page.locator("table.datadocs a").first.click()
    page.wait_for_load_state()
    assert page.locator("table").count() > 0 and page.url.startswith("file://")
    assert page.locator("link[rel=stylesheet]").evaluate_all("ls => ls.every(l => l.sheet !== null)")
    context.close()
    assert errors == [] and all(u.startswith("file://") for u in asked), (errors, asked)

    served = httpx.get(server.url + "/trends", params={"retriever": "handbook-search", "measure": "nDCG@10"}).text
    assert _titles(exported) == _titles(served) and len(_titles(served)) == 7  # 1.0 on both days, five candidates


def test_dashboard_serves_on_localhost(filled, monkeypatch, tmp_path):
    _cli_env(filled, monkeypatch)
    port = free_port()
    proc = subprocess.Popen([sys.executable, "-c", "from evalops.cli import main; main()", "dashboard", "--port", str(port)],
                            cwd=filled["cfg"].home, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 120
        while True:
            try:
                reply = httpx.get(f"http://127.0.0.1:{port}/", timeout=5)
                break
            except httpx.TransportError:
                if proc.poll() is not None or time.monotonic() > deadline:
                    raise AssertionError(proc.communicate()[1]) from None
                time.sleep(0.2)
        assert reply.status_code == 200 and "2.0-truncated" in reply.text
        assert "default-src 'none'" in reply.headers["content-security-policy"]
        assert httpx.get(f"http://127.0.0.1:{port}/ab/999999").status_code == 404
    finally:
        proc.terminate()
        proc.wait(timeout=30)


def test_dashboard_on_an_empty_warehouse_is_a_clear_error(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    result = CliRunner().invoke(main, ["dashboard", "--url", f"sqlite:///{tmp_path / 'none.db'}", "--export",
                                       str(tmp_path / "out")])
    assert result.exit_code == ExitCode.BAD_INPUT and "is empty; run `evalops run`" in result.output
