"""In a real browser, in both languages and at both widths: the API token page shows the header with a visible
``<key>`` placeholder, a ``curl`` line and a Python line that fetch a split, each with a copy button that puts
the exact text on the clipboard; the API documentation page has no accessibility violation and, once built,
loads in under a second. The desktop screenshot of the token page illustrates docs/guides/items-browser.md."""

import time
from pathlib import Path

import pytest

from evaluation.models import Release
from tests.annotation.browser import browser, screenshot  # noqa: F401 - the fixture
from tests.factories import PASSWORD
from tests.site.browser_pages import (
    DESKTOP,
    LANGUAGES,
    PHONE,
    axe_source,
    axe_violations,
    build_studio,
    horizontal_overflow,
)

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

DOCS_IMAGES = Path(__file__).resolve().parents[2] / "docs" / "img"


def signed_in(browser, live_server, username, viewport, language):
    context = browser.new_context(viewport=viewport, locale=LANGUAGES[language])
    context.grant_permissions(["clipboard-read", "clipboard-write"], origin=live_server.url)
    page = context.new_page()
    page.set_default_timeout(20000)
    page.goto(f"{live_server.url}/accounts/login/")
    page.fill("#id_username", username)
    page.fill("#id_password", PASSWORD)
    page.click("main button[type=submit]")
    page.wait_for_url(f"{live_server.url}/")
    return context, page


@pytest.mark.parametrize("language", ["en", "pt-BR"])
@pytest.mark.parametrize("viewport", [DESKTOP, PHONE], ids=["1280px", "390px"])
def test_a_member_copies_working_examples_from_the_token_page(browser, live_server, language, viewport):
    axe_source()
    studio = build_studio()
    project = studio["project"]
    Release.objects.create(project=project, version=1, status=Release.Status.READY)
    context, page = signed_in(browser, live_server, "ana", viewport, language)
    page.goto(f"{live_server.url}/evaluation/my-api-token/")
    placeholder = {"en": "<key>", "pt-BR": "<chave>"}[language]
    header = page.inner_text("#snippet-header")
    assert header == f"Authorization: Token {placeholder}", (
        "the placeholder is visible, not swallowed as HTML"
    )
    assert f"Token {placeholder}" in page.inner_text("main .lead")
    curl = page.inner_text("#snippet-curl")
    split_url = f"{live_server.url}/api/v1/projects/{project.slug}/releases/v1/test/?format=jsonl"
    assert curl == f'curl -H "Authorization: Token {placeholder}" "{split_url}"'
    python = page.inner_text("#snippet-python")
    assert python.startswith("import json, requests;")
    assert split_url in python
    page.click("button[data-copy=snippet-curl]")
    page.wait_for_function("() => document.getElementById('copy-status').textContent !== ''")
    assert page.evaluate("() => navigator.clipboard.readText()") == curl
    violations = axe_violations(page)
    assert violations == [], violations
    if viewport is PHONE:
        width, window = horizontal_overflow(page)
        assert width <= window, f"the token page is {width} px wide"

    # A new token fills the examples in: copied as they stand, they work.
    page.fill("#id_name", "notebook")
    page.check(f"input[name=projects][value='{project.pk}']")
    page.locator("main form button[type=submit]").last.click()
    page.wait_for_selector(".token-key")
    key = page.inner_text(".token-key")
    assert page.inner_text("#snippet-header") == f"Authorization: Token {key}"
    if viewport is DESKTOP and language == "en":
        DOCS_IMAGES.mkdir(parents=True, exist_ok=True)
        page.goto(f"{live_server.url}/evaluation/my-api-token/")
        page.screenshot(path=str(DOCS_IMAGES / "token-page.png"), full_page=True)
    screenshot(page, f"token-page-{viewport['width']}-{language}")
    context.close()


@pytest.mark.parametrize("language", ["en", "pt-BR"])
@pytest.mark.parametrize("viewport", [DESKTOP, PHONE], ids=["1280px", "390px"])
def test_the_api_documentation_is_accessible_and_quick(browser, live_server, language, viewport):
    axe_source()
    build_studio()
    context, page = signed_in(browser, live_server, "olga", viewport, language)
    page.goto(f"{live_server.url}/api/docs/")  # builds the documentation once
    started = time.monotonic()
    page.goto(f"{live_server.url}/api/docs/", wait_until="load")
    elapsed = time.monotonic() - started
    assert elapsed < 1.0, f"the API documentation took {elapsed:.2f} s to load"
    assert page.locator(".api-op").count() >= 20
    page.click("#schema-ReleaseRecord summary")
    violations = axe_violations(page)
    assert violations == [], violations
    if viewport is PHONE:
        width, window = horizontal_overflow(page)
        assert width <= window, f"the API documentation is {width} px wide"
    screenshot(page, f"api-docs-{viewport['width']}-{language}")
    context.close()
