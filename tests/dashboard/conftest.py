"""Dashboard fixtures: one pipeline-filled warehouse per session, the app on 127.0.0.1, headless Chromium.

The browser is Debian's ``/usr/bin/chromium`` driven by Playwright through ``executable_path``; Playwright's
own browser downloads are never used. Browser tests skip when chromium is not installed.
"""

from __future__ import annotations

import os
import socket
import threading
import time
from pathlib import Path

import pytest

CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync"]


@pytest.fixture(scope="session")
def filled(tmp_path_factory):
    from tests.dashboard.warehouse_builder import build_warehouse

    # The build must not see a developer's settings; only while it runs (this fixture lives for the whole
    # session, and later tests need their own variables, EVALOPS_TEST_POSTGRES_URL among them).
    keep = ("EVALOPS_SHARED_DATA", "EVALOPS_TEST_ARTIFACTS", "EVALOPS_TEST_POSTGRES_URL")
    saved = {k: os.environ.pop(k) for k in list(os.environ) if k.startswith("EVALOPS_") and k not in keep}
    try:
        built = build_warehouse(tmp_path_factory.mktemp("dashboard-home"))
    finally:
        os.environ.update(saved)
    return built


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Server:
    """uvicorn serving ``app`` on 127.0.0.1 in a thread, until ``stop``."""

    def __init__(self, app):
        import uvicorn

        self.port = free_port()
        self.server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=self.port, log_level="warning"))
        self.thread = threading.Thread(target=self.server.run, daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def start(self) -> Server:
        self.thread.start()
        deadline = time.monotonic() + 60
        while not self.server.started:
            if time.monotonic() > deadline or not self.thread.is_alive():
                raise RuntimeError("the dashboard server did not start")
            time.sleep(0.05)
        return self

    def stop(self) -> None:
        self.server.should_exit = True
        self.thread.join(timeout=30)


@pytest.fixture(scope="session")
def server(filled):
    from evalops.dashboard import DashboardSettings, create_app

    settings = DashboardSettings.from_config(filled["cfg"])
    running = Server(create_app(filled["engine"], settings=settings, report_dir=filled["cfg"].report_dir)).start()
    yield running
    running.stop()


@pytest.fixture(scope="session")
def browser():
    if not Path(CHROMIUM).exists():
        pytest.skip(f"{CHROMIUM} is not installed (apt-get install chromium chromium-driver)")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as pw:
        launched = pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS, headless=True)
        yield launched
        launched.close()


@pytest.fixture
def page(browser):
    """A fresh page that records console errors, page errors and every request it makes."""
    context = browser.new_context(viewport={"width": 1400, "height": 900})
    tab = context.new_page()
    tab.console_errors = []
    tab.page_errors = []
    tab.requests = []
    tab.on("console", lambda m: tab.console_errors.append(m.text) if m.type == "error" else None)
    tab.on("pageerror", lambda e: tab.page_errors.append(str(e)))
    tab.on("request", lambda r: tab.requests.append(r.url))
    tab.on("dialog", lambda d: (tab.page_errors.append(f"dialog: {d.message}"), d.dismiss()))
    yield tab
    context.close()


@pytest.fixture(scope="session")
def screenshots(tmp_path_factory) -> Path:
    folder = Path(os.environ.get("EVALOPS_TEST_ARTIFACTS") or tmp_path_factory.mktemp("dashboard-screenshots"))
    folder.mkdir(parents=True, exist_ok=True)
    return folder

