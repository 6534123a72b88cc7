"""The evaluation pages in headless Chromium: the release page follows a real build, the API docs work offline."""

import os
import shutil
from urllib.parse import urlparse

import pytest

from tests.evaluation.helpers import approved_items, judge
from tests.factories import PASSWORD

pytestmark = pytest.mark.browser

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


@pytest.fixture
def gold(project, annotators):
    """Approved items, some judged. Built before the browser starts: ORM calls made while Playwright's event
    loop runs would open a database connection that the test's teardown never closes."""
    items = approved_items(project, {"associational": 16, "interventional": 8, "counterfactual": 8})
    for item in items[::2]:  # judged items in every class
        for annotator in annotators:
            judge(item, annotator)
    return project


@pytest.fixture
def chromium(monkeypatch):
    path = os.environ.get("CHROMIUM_PATH") or shutil.which("chromium") or "/usr/bin/chromium"
    if not os.path.exists(path):
        pytest.skip(f"Chromium not found at {path} (install Debian's chromium or set CHROMIUM_PATH)")
    # Playwright's sync API runs an event loop in this thread; the test's own ORM calls are still synchronous.
    monkeypatch.setenv("DJANGO_ALLOW_ASYNC_UNSAFE", "true")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=path, args=CHROMIUM_ARGS)
        yield browser
        browser.close()


def sign_in(page, live_server, username):
    page.goto(f"{live_server.url}/accounts/login/")
    page.fill("input[name=username]", username)
    page.fill("input[name=password]", PASSWORD)
    page.click("button[type=submit]")


@pytest.mark.services
def test_a_curator_cuts_a_release_and_watches_it_build(
    celery_worker_process, live_server, gold, curator, chromium
):
    project = gold
    page = chromium.new_page()
    sign_in(page, live_server, "curator")
    page.goto(f"{live_server.url}/evaluation/p/{project.slug}/releases/")
    page.fill("input[name=seed]", "21")
    page.click("button.primary")
    page.wait_for_url("**/releases/1/")
    page.wait_for_selector("text=Download the release (zip)", timeout=60_000)  # htmx polled until ready
    assert page.locator(".badge.status-ready").count() == 1
    assert page.locator("svg.plot").count() == 1 and "associational" in page.inner_text("table")
    with page.expect_download() as download:
        page.click("text=Download the release (zip)")
    assert download.value.suggested_filename == "causal-qa-v1.zip"


def test_the_agreement_filters_swap_the_results_in_place(live_server, gold, curator, chromium):
    project = gold
    page = chromium.new_page()
    sign_in(page, live_server, "curator")
    page.goto(f"{live_server.url}/evaluation/p/{project.slug}/agreement/")
    assert page.locator("#agreement-results section").count() == 1
    page.select_option("select[name=by]", "causal_class")
    page.wait_for_function("() => document.querySelectorAll('#agreement-results section').length === 4")
    assert "by=causal_class" in page.url and page.locator("svg.plot").count() == 4


@pytest.mark.parametrize("path", ["/api/docs/", "/api/redoc/"])
def test_the_api_documentation_works_offline(live_server, db, chromium, path, curator):
    page = chromium.new_page()
    sign_in(page, live_server, "curator")
    page.wait_for_url(f"{live_server.url}/")
    outside = []
    here = urlparse(live_server.url).hostname
    page.on(
        "request",
        lambda r: (
            outside.append(r)
            if urlparse(r.url).scheme.startswith("http") and urlparse(r.url).hostname != here
            else None
        ),
    )
    page.goto(live_server.url + path)
    page.wait_for_selector(".api-op", timeout=30_000)
    assert page.locator(".api-op").count() >= 20, "every operation of the schema is documented"
    assert outside == [], [request.url for request in outside]
