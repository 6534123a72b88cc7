"""Headless Chromium for browser tests: Debian's /usr/bin/chromium driven by Playwright's Python package.

Playwright never downloads a browser here. Without Chromium (or Playwright) the tests skip with
the reason; CAUSALQA_REQUIRE_ALL=1 turns that skip into a failure (tests/conftest.py).
"""

import os
import shutil
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
ARTIFACTS = ROOT / "test-artifacts"
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]


def chromium_path() -> str | None:
    configured = os.environ.get("CHROMIUM_PATH")
    if configured and Path(configured).exists():
        return configured
    return shutil.which("chromium") or (
        str(Path("/usr/bin/chromium")) if Path("/usr/bin/chromium").exists() else None
    )


@pytest.fixture
def browser():
    executable = chromium_path()
    if executable is None:
        pytest.skip("Chromium is not installed (Debian package `chromium`); browser tests need it")
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:  # pragma: no cover - playwright is in the dev extra
        pytest.skip("the playwright package is not installed (pip install -e '.[dev]')")
    from django.db import connections

    # Playwright's sync API runs an event loop in this thread; the test's own ORM calls are still synchronous.
    previous = os.environ.get("DJANGO_ALLOW_ASYNC_UNSAFE")
    os.environ["DJANGO_ALLOW_ASYNC_UNSAFE"] = "true"
    os.environ.setdefault("PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD", "1")
    ARTIFACTS.mkdir(exist_ok=True)
    try:
        with sync_playwright() as playwright:
            launched = playwright.chromium.launch(
                executable_path=executable, headless=True, args=CHROMIUM_ARGS
            )
            try:
                yield launched
            finally:
                launched.close()
                # The test ran inside Playwright's event loop, where the ORM opened connections of its own;
                # left open, PostgreSQL could not drop the test database afterwards.
                connections.close_all()
    finally:
        if previous is None:
            os.environ.pop("DJANGO_ALLOW_ASYNC_UNSAFE", None)
        else:
            os.environ["DJANGO_ALLOW_ASYNC_UNSAFE"] = previous


def screenshot(page, name: str) -> Path:
    path = ARTIFACTS / f"{name}.png"
    page.screenshot(path=str(path), full_page=True)
    return path


def sign_in(browser, live_server, username: str, password: str):
    context = browser.new_context(viewport={"width": 1280, "height": 900}, locale="en-US")
    page = context.new_page()
    page.set_default_timeout(15000)
    page.goto(f"{live_server.url}/accounts/login/")
    page.fill("#id_username", username)
    page.fill("#id_password", password)
    page.click("button[type=submit]")
    page.wait_for_url(f"{live_server.url}/")
    return page
